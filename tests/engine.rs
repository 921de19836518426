//! Engine argparse behaviour; expected values come from the engines' argparse semantics.

mod common;

use common::check_rules;
use kvlint::engine::{self, ParseContext, Parsed, SettingValue};
use kvlint::launch::{Arg, Engine, Launch, Placement};
use kvlint::source::{FileId, Loc, Sources};
use kvlint::version::Version;

/// A launch from a command line, tokens split on spaces, with spans into a synthetic file.
fn launch(sources: &mut Sources, engine: Engine, line: &str) -> Launch {
    let file: FileId = sources.add("cmd", line);
    let mut args = Vec::new();
    let mut off = 0;
    for tok in line.split(' ') {
        if !tok.is_empty() {
            let mut a = Arg::new(tok, Loc::new(file, off..off + tok.len()));
            if tok.contains('$') {
                a.unresolved.push("CTX".into());
            }
            args.push(a);
        }
        off += tok.len() + 1;
    }
    let command = Loc::new(file, 0..0);
    Launch {
        engine,
        command,
        args,
        env: Vec::new(),
        object: None,
        role_hint: None,
        group: None,
        engine_version: None,
        placement: Placement::default(),
        kwargs: Vec::new(),
        files: Vec::new(),
    }
}

fn run(engine: Engine, version: &str, line: &str) -> (Parsed, Sources) {
    let mut sources = Sources::default();
    let l = launch(&mut sources, engine, line);
    let v = Version::parse(version);
    let mut cx = ParseContext {
        sources: &mut sources,
        base_dir: None,
    };
    let p = engine::parse(&l, v.as_ref(), &mut cx);
    (p, sources)
}

fn rules(p: &Parsed) -> Vec<&str> {
    p.findings.iter().map(|f| f.rule).collect()
}

#[test]
fn sglang_prefix_abbreviations_resolve_to_the_only_match() {
    let (p, _) = run(
        Engine::Sglang,
        "0.5.23",
        "--model-path m --tp 8 --mem-frac 0.9",
    );
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(p.args.int("tp_size"), Some(8));
    assert_eq!(p.args.float("mem_fraction_static"), Some(0.9));
    assert_eq!(p.args.text("model_path"), Some("m"));
}

#[test]
fn repeated_flags_last_one_wins_and_equals_form_works() {
    let (p, _) = run(Engine::Sglang, "0.5.23", "--tp-size=4 --tp-size 8");
    assert_eq!(p.args.int("tp_size"), Some(8));
    let (p, _) = run(Engine::Sglang, "0.5.23", "--tensor-parallel-size 2");
    assert_eq!(p.args.int("tp_size"), Some(2));
}

#[test]
fn sglang_0_5_9_dest_is_the_server_args_field() {
    // ServerArgs.from_cli_args copies tensor_parallel_size to tp_size.
    let (p, _) = run(Engine::Sglang, "0.5.9", "--tp-size 4");
    assert_eq!(p.args.int("tp_size"), Some(4));
}

#[test]
fn sglang_does_not_accept_underscores() {
    let (p, _) = run(Engine::Sglang, "0.5.23", "--tp_size 8");
    assert_eq!(rules(&p), ["CFG001"]);
}

#[test]
fn vllm_human_readable_ints() {
    let (p, _) = run(Engine::Vllm, "0.33.0", "m --max-model-len 32k");
    assert_eq!(p.args.int("max_model_len"), Some(32_000));
    let (p, _) = run(Engine::Vllm, "0.33.0", "m --max-model-len 32K");
    assert_eq!(p.args.int("max_model_len"), Some(32_768));
    let (p, _) = run(Engine::Vllm, "0.33.0", "m --max-model-len 25.6k");
    assert_eq!(p.args.int("max_model_len"), Some(25_600));
    let (p, _) = run(Engine::Vllm, "0.33.0", "m --max-model-len 1M");
    assert_eq!(p.args.int("max_model_len"), Some(1_048_576));
    let (p, _) = run(Engine::Vllm, "0.33.0", "m --max-model-len 1m");
    assert_eq!(p.args.int("max_model_len"), Some(1_000_000));
    let (p, _) = run(Engine::Vllm, "0.33.0", "m --max-model-len 1.5K");
    assert_eq!(rules(&p), ["CFG004"]);
    let (p, _) = run(Engine::Vllm, "0.33.0", "m --max-model-len auto");
    assert_eq!(
        p.args.get("max_model_len").map(|s| &s.value),
        Some(&SettingValue::Auto)
    );
    let (p, _) = run(Engine::Vllm, "0.33.0", "m --max-model-len -1");
    assert_eq!(
        p.args.get("max_model_len").map(|s| &s.value),
        Some(&SettingValue::Auto)
    );
}

#[test]
fn vllm_0_11_has_no_auto_max_model_len() {
    let (p, _) = run(Engine::Vllm, "0.11.0", "m --max-model-len auto");
    assert_eq!(rules(&p), ["CFG004"]);
}

#[test]
fn sglang_context_length_human_ints() {
    let (p, _) = run(Engine::Sglang, "0.5.23", "--context-length 128Ki");
    assert_eq!(p.args.int("context_length"), Some(131_072));
    let (p, _) = run(Engine::Sglang, "0.5.23", "--context-length 1M");
    assert_eq!(p.args.int("context_length"), Some(1_000_000));
}

#[test]
fn vllm_underscores_aliases_positional_model_and_negative_flags() {
    let (p, _) = run(
        Engine::Vllm,
        "0.33.0",
        "meta-llama/Llama-3.1-8B --max_model_len 4096 -tp 2 --no-enable-prefix-caching --enforce-eager",
    );
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(p.args.text("model"), Some("meta-llama/Llama-3.1-8B"));
    assert_eq!(p.args.int("max_model_len"), Some(4096));
    assert_eq!(p.args.int("tensor_parallel_size"), Some(2));
    assert_eq!(
        p.args.get("enable_prefix_caching").map(|s| &s.value),
        Some(&SettingValue::Flag(false))
    );
    assert!(p.args.flag("enforce_eager"));
}

#[test]
fn removed_flags_name_the_release_and_replacement() {
    let (p, _) = run(Engine::Sglang, "0.5.20", "--cuda-graph-max-bs 8");
    assert_eq!(rules(&p), ["CFG002"]);
    assert_eq!(p.findings[0].get("removed_in"), Some("0.5.20"));
    assert_eq!(
        p.findings[0].get("replacement"),
        Some("--cuda-graph-max-bs-decode")
    );
    let (p, _) = run(Engine::Sglang, "0.5.9", "--cuda-graph-max-bs 8");
    assert!(p.findings.is_empty());
    assert_eq!(p.args.int("cuda_graph_max_bs"), Some(8));
    let (p, _) = run(Engine::Vllm, "0.33.0", "m --swap-space 4");
    assert_eq!(rules(&p), ["CFG002"]);
    // The reference: `--swap-space` exists in 0.11 and 0.16 and is removed by 0.21; the sources
    // (vllm/engine/arg_utils.py EngineArgs.add_cli_args) register it last in 0.17.0.
    let (p, _) = run(Engine::Vllm, "0.21.0", "m --swap-space 4");
    assert_eq!(p.findings[0].get("removed_in"), Some("0.18.0"));
    let (p, _) = run(Engine::Vllm, "0.17.0", "m --swap-space 4");
    assert!(p.findings.is_empty());
    let (p, _) = run(Engine::Vllm, "0.16.0", "m --swap-space 4");
    assert!(p.findings.is_empty());
    let (p, _) = run(Engine::Vllm, "0.11.0", "m --swap-space 4");
    assert!(p.findings.is_empty());
}

#[test]
fn sglang_disable_piecewise_cuda_graph_exists_from_0_5_10_to_0_5_19() {
    // sglang/srt/server_args.py ServerArgs.add_cli_args: 0.5.9 has only
    // `--enable-piecewise-cuda-graph`; 0.5.10 adds `--disable-piecewise-cuda-graph`
    // (store_true), kept through 0.5.19 (a DeprecatedStoreConstAction alias of
    // `--cuda-graph-backend-prefill=disabled`); 0.5.20's parser no longer registers it.
    let line = "--model-path m --disable-piecewise-cuda-graph";
    for v in ["0.5.10", "0.5.12", "0.5.19"] {
        let (p, _) = run(Engine::Sglang, v, line);
        assert!(p.findings.is_empty(), "{v}: {:?}", p.findings);
    }
    let (p, _) = run(Engine::Sglang, "0.5.9", line);
    assert_eq!(rules(&p), ["CFG001"]);
    let (p, _) = run(Engine::Sglang, "0.5.20", line);
    assert_eq!(rules(&p), ["CFG002"]);
    assert_eq!(p.findings[0].get("removed_in"), Some("0.5.20"));
}

#[test]
fn typos_get_a_suggestion() {
    let (p, s) = run(Engine::Sglang, "0.5.23", "--tp-szie 8");
    assert_eq!(rules(&p), ["CFG001"]);
    let f = &p.findings[0];
    assert_eq!(f.get("suggestion"), Some("--tp-size"));
    assert_eq!(f.get("engine"), Some("sglang"));
    assert_eq!(s.text(f.primary.unwrap()), "--tp-szie");
    assert!(p.args.get("tp_size").is_none());
}

#[test]
fn ambiguous_prefix_is_an_error() {
    let (p, _) = run(Engine::Sglang, "0.5.23", "--cuda-graph-max 8");
    assert_eq!(rules(&p), ["CFG005"]);
    assert!(p.findings[0]
        .get("candidates")
        .unwrap()
        .contains("--cuda-graph-max-bs-decode"));
}

/// A long option that is not exact is resolved once per release and remembered: every launch
/// of a run gets the first one's answer, and each release keeps its own.
#[test]
fn inexact_options_resolve_alike_on_every_launch_and_per_release() {
    for _ in 0..3 {
        let (p, _) = run(Engine::Sglang, "0.5.23", "--model-path m --tp 8");
        assert!(p.findings.is_empty(), "{:?}", p.findings);
        assert_eq!(p.args.int("tp_size"), Some(8));
        let (p, _) = run(Engine::Sglang, "0.5.23", "--cuda-graph-max 8");
        assert_eq!(rules(&p), ["CFG005"]);
        // 0.5.9 has only `--cuda-graph-max-bs` under this prefix.
        let (p, _) = run(Engine::Sglang, "0.5.9", "--cuda-graph-max 8");
        assert!(p.findings.is_empty(), "{:?}", p.findings);
        assert_eq!(p.args.int("cuda_graph_max_bs"), Some(8));
    }
}

#[test]
fn invalid_values_and_choices() {
    let (p, _) = run(Engine::Sglang, "0.5.23", "--tp-size eight");
    assert_eq!(rules(&p), ["CFG004"]);
    let (p, _) = run(Engine::Sglang, "0.5.23", "--kv-cache-dtype fp9");
    assert_eq!(rules(&p), ["CFG004"]);
    let (p, _) = run(Engine::Sglang, "0.5.23", "--kv-cache-dtype fp8_e4m3");
    assert_eq!(p.args.text("kv_cache_dtype"), Some("fp8_e4m3"));
}

#[test]
fn vllm_json_valued_options_take_json() {
    // arg_utils.py: dict fields are `parse_type(json.loads)`, config dataclasses
    // `parse_dataclass` (`TypeAdapter(cls).validate_json`, a JSON object).
    let refused = [
        "--override-generation-config generate",
        "--eplb-config 8",
        "--compilation-config [3]",
    ];
    for line in refused {
        let (p, _) = run(Engine::Vllm, "0.33.0", line);
        assert_eq!(rules(&p), ["CFG004"], "{line}");
    }
    let taken = [
        r#"--override-generation-config {"temperature":0.5}"#,
        r#"--eplb-config {"window_size":1k}"#,
        "--speculative-config None",
    ];
    for line in taken {
        let (p, _) = run(Engine::Vllm, "0.33.0", line);
        assert!(rules(&p).is_empty(), "{line}: {:?}", rules(&p));
    }
    // Up to 0.11 `-O` is `--compilation-config`: FlexibleArgumentParser turns `-O3` and `-O 3`
    // into `-O.level=3`, a JSON object; a bare `3` is not one.
    for line in ["-O3", "-O 3"] {
        let (p, _) = run(Engine::Vllm, "0.10.0", line);
        assert!(rules(&p).is_empty(), "{line}: {:?}", rules(&p));
        assert_eq!(p.args.text("compilation_config"), Some(r#"{"level":3}"#));
    }
    let (p, _) = run(Engine::Vllm, "0.10.0", "--compilation-config 3");
    assert_eq!(rules(&p), ["CFG004"]);
}

#[test]
fn unresolved_values_are_kept_raw() {
    let (p, _) = run(Engine::Sglang, "0.5.23", "--context-length $CTX");
    assert!(p.findings.is_empty());
    let s = p.args.get("context_length").unwrap();
    assert_eq!(s.value, SettingValue::Text("$CTX".into()));
    assert_eq!(s.unresolved, ["CTX"]);
}

#[test]
fn nargs_lists() {
    let (p, _) = run(
        Engine::Sglang,
        "0.5.23",
        "--cuda-graph-bs-decode 1 2 4 --tp 2",
    );
    assert_eq!(
        p.args.get("cuda_graph_bs_decode").map(|s| &s.value),
        Some(&SettingValue::List(vec![
            "1".into(),
            "2".into(),
            "4".into()
        ]))
    );
    assert_eq!(p.args.int("tp_size"), Some(2));
}

#[test]
fn default_version_is_the_latest() {
    assert_eq!(
        engine::supported(Engine::Sglang),
        (Version::new(0, 4, 6), Version::new(0, 5, 23))
    );
    assert_eq!(
        engine::supported(Engine::Vllm),
        (Version::new(0, 11, 0), Version::new(0, 33, 0))
    );
    let mut sources = Sources::default();
    let l = launch(&mut sources, Engine::Sglang, "--tp 8");
    let mut cx = ParseContext {
        sources: &mut sources,
        base_dir: None,
    };
    assert_eq!(
        engine::parse(&l, None, &mut cx).args.version,
        Version::new(0, 5, 23)
    );
}

fn with_config(engine: Engine, yaml: &str, line: &str) -> (Parsed, Sources) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.yaml"), yaml).unwrap();
    let mut sources = Sources::default();
    let l = launch(&mut sources, engine, line);
    let mut cx = ParseContext {
        sources: &mut sources,
        base_dir: Some(dir.path().to_path_buf()),
    };
    let p = engine::parse(&l, None, &mut cx);
    (p, sources)
}

#[test]
fn sglang_config_merges_under_the_command_line_with_spans_into_the_file() {
    let yaml = "model-path: zai-org/GLM-5\ntp-size: 8\ncontext-length: 1048576\nenable-metrics: true\ndisable-radix-cache: false\n";
    let (p, s) = with_config(Engine::Sglang, yaml, "--config c.yaml --tp-size 4");
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(p.args.int("tp_size"), Some(4));
    assert_eq!(p.args.int("context_length"), Some(1_048_576));
    assert!(p.args.flag("enable_metrics"));
    assert!(p.args.get("disable_radix_cache").is_none());
    let ctx = p.args.get("context_length").unwrap();
    assert_eq!(s.get(ctx.flag_loc.file).name, "c.yaml");
    assert_eq!(s.text(ctx.flag_loc), "context-length");
    assert_eq!(s.text(ctx.value_loc), "1048576");
    assert_eq!(s.position(ctx.value_loc).line, 3);
}

#[test]
fn vllm_config_bools_lists_dicts_and_model() {
    let yaml = "model: meta-llama/Llama-3.1-8B-Instruct\nmax_model_len: 32K\nenable-prefix-caching: false\nspeculative-config:\n  method: eagle3\n  num_speculative_tokens: 3\n";
    let (p, _) = with_config(Engine::Vllm, yaml, "--config c.yaml --max-model-len 8192");
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(
        p.args.text("model"),
        Some("meta-llama/Llama-3.1-8B-Instruct")
    );
    assert_eq!(p.args.int("max_model_len"), Some(8192));
    assert_eq!(
        p.args.get("enable_prefix_caching").map(|s| &s.value),
        Some(&SettingValue::Flag(false))
    );
    let spec = p.args.text("speculative_config").unwrap();
    let json: serde_json::Value = serde_json::from_str(spec).unwrap();
    assert_eq!(json["num_speculative_tokens"], 3);
}

#[test]
fn config_file_problems() {
    let (p, _) = with_config(Engine::Sglang, "a: [1", "--config c.yaml");
    assert_eq!(rules(&p), ["CFG006"]);
    let (p, _) = with_config(Engine::Sglang, "- a\n- b\n", "--config c.yaml");
    assert_eq!(rules(&p), ["CFG006"]);
    let (p, _) = with_config(Engine::Vllm, "a: 1", "m --config c.json");
    assert_eq!(rules(&p), ["CFG006"]);
    let (p, _) = with_config(Engine::Vllm, "a: 1", "m --config missing.yaml");
    assert_eq!(rules(&p), ["CFG006"]);
    assert_eq!(p.findings[0].get("path"), Some("missing.yaml"));
}

/// Parses a whole command (`vllm serve ...`) through the shell extractor, as `kvlint check` does.
fn cmd(line: &str) -> Parsed {
    cmd_in(line, None)
}

fn cmd_in(line: &str, dir: Option<&std::path::Path>) -> Parsed {
    cmd_at(line, dir, None)
}

fn cmd_at(line: &str, dir: Option<&std::path::Path>, version: Option<&str>) -> Parsed {
    let mut sources = Sources::default();
    let file = sources.add("cmd.sh", line);
    let l = kvlint::extract::parse_command_line(file, &sources)
        .launches
        .into_iter()
        .next()
        .expect("a launch");
    let mut cx = ParseContext {
        sources: &mut sources,
        base_dir: dir.map(std::path::Path::to_path_buf),
    };
    let version = version.and_then(Version::parse);
    engine::parse(&l, version.as_ref(), &mut cx)
}

// vllm/utils/argparse_utils.py::FlexibleArgumentParser.parse_args moves the first `--model` to
// the positional, and entrypoints/cli/serve.py copies the positional over `model`.
#[test]
fn vllm_serve_with_two_models_serves_the_first() {
    let p = cmd("vllm serve --model Qwen/Qwen3-32B --model Qwen/Qwen3-8B");
    assert_eq!(rules(&p), ["CFG003"]);
    assert_eq!(p.findings[0].get("which"), Some("the first value"));
    assert_eq!(p.findings[0].get("value"), Some("Qwen/Qwen3-32B"));
    assert_eq!(p.args.text("model"), Some("Qwen/Qwen3-32B"));
    // A positional and a `--model`: the moved `--model` makes two positionals, which argparse refuses.
    let p = cmd("vllm serve Qwen/Qwen3-8B --model Qwen/Qwen3-32B");
    assert_eq!(rules(&p), ["CFG001"]);
}

#[test]
fn vllm_config_equals_form_is_not_merged() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.yaml"), "max-model-len: 4096\n").unwrap();
    let p = cmd_in("vllm serve m --config=c.yaml", Some(dir.path()));
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(p.args.int("max_model_len"), None);
    let p = cmd_in("vllm serve m --config c.yaml", Some(dir.path()));
    assert_eq!(p.args.int("max_model_len"), Some(4096));
    let p = cmd_in(
        "vllm serve m --config c.yaml --config c.yaml",
        Some(dir.path()),
    );
    assert_eq!(rules(&p), ["CFG006"]);
}

#[test]
fn vllm_api_server_ignores_a_positional_model() {
    let p =
        cmd("python3 -m vllm.entrypoints.openai.api_server Qwen/Qwen3-32B --max-model-len 8192");
    assert_eq!(rules(&p), ["CFG004"]);
    assert_eq!(p.args.text("model"), None);
    let p = cmd("python3 -m vllm.entrypoints.openai.api_server --model Qwen/Qwen3-32B");
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(p.args.text("model"), Some("Qwen/Qwen3-32B"));
}

#[test]
fn vllm_short_forms() {
    for o in ["-O3", "-O 3", "-O=3"] {
        let p = cmd(&format!("vllm serve m {o}"));
        assert!(p.findings.is_empty(), "{o}: {:?}", p.findings);
        assert_eq!(p.args.text("optimization_level"), Some("3"), "{o}");
    }
    let p = cmd("vllm serve m -Odecode -tp=2 -qfp8");
    // argparse keeps the string; VllmConfig validates it as OptimizationLevel 0–3 (0.33.0).
    assert_eq!(rules(&p), ["CFG004"]);
    assert_eq!(p.args.text("optimization_level"), Some("decode"));
    assert_eq!(p.args.int("tensor_parallel_size"), Some(2));
    assert_eq!(p.args.text("quantization"), Some("fp8"));
    // `-O` itself is gone since 0.12 (it was --compilation-config): only -O0..-O3 are rewritten.
    // With the release unknown, 0.11 may run and accept it: a warning naming the releases.
    let p = cmd("vllm serve m -O decode");
    assert_eq!(rules(&p), ["VER003"]);
    assert_eq!(p.findings[0].get("accepted"), Some("0.10.0 to 0.11.0"));
    assert_eq!(
        p.findings[0].get("removed"),
        Some(" and was removed in 0.12.0")
    );
    assert_eq!(p.args.could_run, [Version::new(0, 11, 0)]);
}

#[test]
fn vllm_dotted_json_keys_build_the_config() {
    let p = cmd("vllm serve m --kv-transfer-config.kv_connector NixlConnector --kv-transfer-config.kv_role kv_producer");
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    let json: serde_json::Value =
        serde_json::from_str(p.args.text("kv_transfer_config").unwrap()).unwrap();
    assert_eq!(json["kv_role"], "kv_producer");
    assert_eq!(json["kv_connector"], "NixlConnector");
    // `-0.5` reads as a dotted option too; at the end it has no value and vLLM fails.
    let p = cmd("vllm serve m --gpu-memory-utilization -0.5");
    assert!(rules(&p).contains(&"CFG004"), "{:?}", p.findings);
}

#[test]
fn sglang_serve_positional_is_the_model_path() {
    let p = cmd("sglang serve Qwen/Qwen3-8B --tp 2");
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(p.args.text("model_path"), Some("Qwen/Qwen3-8B"));
    let p = cmd("python3 -m sglang.launch_server Qwen/Qwen3-8B");
    assert_eq!(rules(&p), ["CFG001"]);
}

#[test]
fn integers_in_every_form_python_int_takes() {
    let p = cmd("python3 -m sglang.launch_server --model-path m --max-total-tokens 32_768 --tp +2 --context-length ８１９２");
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(p.args.int("max_total_tokens"), Some(32768));
    assert_eq!(p.args.int("tp_size"), Some(2));
    assert_eq!(p.args.int("context_length"), Some(8192));
    let p = cmd("vllm serve m --max-model-len 32_768 -tp ２");
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(p.args.int("max_model_len"), Some(32768));
    assert_eq!(p.args.int("tensor_parallel_size"), Some(2));
}

#[test]
fn sglang_decimal_si_suffixes_are_exact() {
    let p = cmd("python3 -m sglang.launch_server --model-path m --context-length 4.1M");
    assert_eq!(p.args.int("context_length"), Some(4_100_000));
    // vLLM computes int(float("4.1") * 10**6).
    let p = cmd("vllm serve m --max-model-len 4.1m");
    assert_eq!(p.args.int("max_model_len"), Some(4_099_999));
}

#[test]
fn stray_positionals_and_values_on_store_true_are_refused() {
    let p = cmd("python3 -m sglang.launch_server --model-path m --enable-dp-attention true");
    assert_eq!(rules(&p), ["CFG004"]);
    assert_eq!(p.findings[0].get("flag"), Some("--enable-dp-attention"));
    let p = cmd("python3 -m sglang.launch_server --model-path m stray");
    assert_eq!(rules(&p), ["CFG001"]);
    let p = cmd("vllm serve m --enforce-eager true");
    assert_eq!(rules(&p), ["CFG004"]);
}

#[test]
fn config_yaml_reads_as_pyyaml() {
    // A repeated key: the last value wins, the first is never parsed.
    let (p, _) = with_config(
        Engine::Vllm,
        "gpu-memory-utilization: x\ngpu-memory-utilization: 0.8\n",
        "m --config c.yaml",
    );
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(p.args.float("gpu_memory_utilization"), Some(0.8));
    // `1e4` is a string to PyYAML (a float needs a dot), so int() refuses it.
    let (p, _) = with_config(Engine::Sglang, "context-length: 1e4\n", "--config c.yaml");
    assert_eq!(rules(&p), ["CFG004"]);
    // `yes` is a YAML 1.1 boolean.
    let (p, _) = with_config(Engine::Sglang, "enable-metrics: yes\n", "--config c.yaml");
    assert!(p.args.flag("enable_metrics"), "{:?}", p.findings);
    // Two --config options: both engines refuse to start.
    let (p, _) = with_config(
        Engine::Sglang,
        "tp-size: 2\n",
        "--config c.yaml --config c.yaml",
    );
    assert_eq!(rules(&p), ["CFG006"]);
}

#[test]
fn sglang_refuses_deprecated_store_true_keys_in_config_files() {
    let (p, _) = with_config(
        Engine::Sglang,
        "disable-cuda-graph: true\n",
        "--config c.yaml",
    );
    assert_eq!(rules(&p), ["CFG006"]);
    let (p, _) = with_config(
        Engine::Sglang,
        "enable-dp-attention: false\n",
        "--config c.yaml",
    );
    assert_eq!(rules(&p), ["CFG006"]);
    // On the command line they still work.
    let p = cmd("python3 -m sglang.launch_server --model-path m --disable-cuda-graph");
    assert!(p.findings.is_empty(), "{:?}", p.findings);
}

fn startup(line: &str) -> Vec<(String, String)> {
    let p = cmd(line);
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    engine::startup::check(&p.args)
        .iter()
        .map(|f| {
            assert_eq!(f.rule, "CFG004");
            (
                f.get("flag").unwrap().to_string(),
                f.get("value").unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn startup_validation_mirrors_the_engines_checks() {
    let sg = "python3 -m sglang.launch_server --model-path m";
    for frac in ["1.2", "0", "-0.5", "inf", "nan"] {
        let got = startup(&format!("{sg} --mem-fraction-static {frac}"));
        assert_eq!(got.len(), 1, "{frac}: {got:?}");
        assert_eq!(got[0].0, "--mem-fraction-static");
    }
    assert!(startup(&format!("{sg} --mem-fraction-static 1")).is_empty());
    let got = startup(&format!(
        "{sg} --context-length 0 --tp 0 --dp-size -1 --page-size 0"
    ));
    let flags: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        flags,
        ["--context-length", "--tp-size", "--dp-size", "--page-size"]
    );
    let got =
        startup("vllm serve m --gpu-memory-utilization 2 --max-model-len 0 -pp 0 --block-size 0");
    let flags: Vec<&str> = got.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        flags,
        [
            "--gpu-memory-utilization",
            "--max-model-len",
            "--pipeline-parallel-size",
            "--block-size"
        ]
    );
    // vLLM 0.33 validates --kv-cache-dtype in CacheConfig; SGLang's argparse choices hold bf16.
    assert_eq!(startup("vllm serve m --kv-cache-dtype bf16").len(), 1);
    assert_eq!(startup("vllm serve m --kv-cache-dtype FP8").len(), 1);
    assert!(startup("vllm serve m --kv-cache-dtype fp8").is_empty());
    let p = cmd(&format!("{sg} --kv-cache-dtype FP8"));
    assert_eq!(rules(&p), ["CFG004"]);
    let got = startup("trtllm-serve m --kv_cache_free_gpu_memory_fraction 1.5");
    assert_eq!(got.len(), 1, "{got:?}");
}

fn capacity_json(args: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kvlint"))
        .args(["capacity", "--gpu", "h100", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    // 0 passes, 1 refused: either way the plan is printed.
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    if json.is_array() {
        json[0].clone()
    } else {
        json
    }
}

#[test]
fn dtype_float32_sets_weight_and_kv_bytes() {
    // vLLM logs about 110,000 tokens for Llama-3.1-8B in float32 at util 0.75 on one H100 (issue 11).
    let vllm = |extra: &[&str]| {
        let mut a = vec!["--engine-version", "vllm=0.19.0", "--", "vllm", "serve"];
        a.extend([
            "meta-llama/Llama-3.1-8B-Instruct",
            "--gpu-memory-utilization",
            "0.75",
        ]);
        a.extend(extra);
        capacity_json(&a)
    };
    let f32 = vllm(&["--dtype", "float32"]);
    let pool = f32["pool_tokens"].as_f64().unwrap();
    assert!((pool / 110_000.0 - 1.0).abs() < 0.05, "{pool}");
    let bf16 = vllm(&[]);
    assert_eq!(
        f32["kv_bytes_per_token"].as_u64().unwrap(),
        2 * bf16["kv_bytes_per_token"].as_u64().unwrap()
    );
    // SGLang: float32 doubles the weights of an unquantized bf16 checkpoint, not only the KV.
    let sglang = |extra: &[&str]| {
        let mut a = vec!["--engine-version", "sglang=0.5.20", "--", "sglang", "serve"];
        a.extend(["meta-llama/Llama-3.1-8B-Instruct"]);
        a.extend(extra);
        capacity_json(&a)
    };
    let (f32, bf16) = (
        sglang(&["--dtype", "float32"]),
        sglang(&["--dtype", "bfloat16"]),
    );
    let ratio = f32["weights_bytes"].as_f64().unwrap() / bf16["weights_bytes"].as_f64().unwrap();
    assert!(ratio > 1.95 && ratio < 2.05, "{ratio}");
    assert_eq!(
        f32["kv_bytes_per_token"].as_u64().unwrap(),
        2 * bf16["kv_bytes_per_token"].as_u64().unwrap()
    );
}

#[test]
fn a_layout_larger_than_the_gpus_given_is_par002() {
    let tp8 = "vllm serve Qwen/Qwen3-8B --max-model-len 8192 -tp 8\n";
    let got = check_rules(&["--gpu", "l4x1", "--engine-version", "vllm=0.19.0"], tp8);
    assert!(got.contains(&"PAR002".to_string()), "{got:?}");
    let got = check_rules(&["--gpu", "h100x8", "--engine-version", "vllm=0.19.0"], tp8);
    assert!(!got.contains(&"PAR002".to_string()), "{got:?}");
    // SGLang: with DP attention the 8 DP ranks live inside the TP 8 group (8 GPUs); without it
    // each DP replica is its own TP group (64 GPUs).
    let sg = "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --context-length 8192 --tp 8 --dp 8";
    let v = ["--gpu", "h100x8", "--engine-version", "sglang=0.5.23"];
    let got = check_rules(&v, &format!("{sg} --enable-dp-attention\n"));
    assert!(!got.contains(&"PAR002".to_string()), "{got:?}");
    let got = check_rules(&v, &format!("{sg}\n"));
    assert!(got.contains(&"PAR002".to_string()), "{got:?}");
}

#[test]
fn vllm_optimization_levels_outside_0_to_3_are_refused() {
    // vllm/config/vllm.py::OptimizationLevel (IntEnum O0..O3), validated by pydantic in lax
    // mode when VllmConfig is built: "4" and "５" fail, " 3", "+1" and "03" pass.
    for o in ["-O4", "-O=5", "--optimization-level 4", "-O３"] {
        let (p, _) = run(Engine::Vllm, "0.33.0", &format!("--model m {o}"));
        assert_eq!(rules(&p), ["CFG004"], "{o}");
    }
    for o in [
        "-O0",
        "-O=2",
        "--optimization-level +1",
        "--optimization-level 03",
    ] {
        let (p, _) = run(Engine::Vllm, "0.33.0", &format!("--model m {o}"));
        assert!(p.findings.is_empty(), "{o}: {:?}", p.findings);
    }
}

#[test]
fn sglang_serve_model_type_is_taken_out_before_the_server_parser() {
    // sglang/cli/serve.py::_extract_model_type_override (0.5.10 on): exact `--model-type V`
    // and `--model-type=V` only, removed before `_normalize_positional_model_path`.
    let serve =
        |version: &str, line: &str| cmd_at(&format!("sglang serve {line}"), None, Some(version));
    let p = serve("0.5.23", "--model-type llm Qwen/Qwen3-8B --tp 2");
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    assert_eq!(p.args.text("model_path"), Some("Qwen/Qwen3-8B"));
    assert_eq!(p.args.int("tp_size"), Some(2));
    let p = serve("0.5.23", "Qwen/Qwen3-8B --model-type=auto");
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    // ServeBackendRegistry.get: "Unknown serve backend 'nope'".
    assert_eq!(
        rules(&serve("0.5.23", "Qwen/Qwen3-8B --model-type nope")),
        ["CFG004"]
    );
    // "--model-type requires a value."
    assert_eq!(
        rules(&serve("0.5.23", "Qwen/Qwen3-8B --model-type")),
        ["CFG004"]
    );
    // A diffusion pipeline has no KV pool to plan.
    assert_eq!(
        rules(&serve("0.5.23", "m --model-type diffusion")),
        ["INP006"]
    );
    // Not a prefix option: `--model-typ` is the server parser's, which has no such option.
    assert_eq!(rules(&serve("0.5.23", "m --model-typ llm")), ["CFG001"]);
    // 0.5.9's `sglang serve` has no --model-type: the server parser refuses it.
    assert_eq!(rules(&serve("0.5.9", "m --model-type llm")), ["CFG001"]);
}

/// Which engines take a flag, as their own parsers do: a flag several take tells no engine apart;
/// an abbreviation counts (`--max_seq_len` is a prefix of vLLM 0.10's `--max-seq-len-to-capture`).
#[test]
fn engines_taking_a_flag_follow_each_parser() {
    use kvlint::engine::engines_taking;
    let cases: [(&str, &[Engine]); 8] = [
        ("--max-model-len", &[Engine::Vllm]),
        ("--gpu-memory-utilization", &[Engine::Vllm]),
        ("--context-length", &[Engine::Sglang]),
        ("--mem-fraction-static", &[Engine::Sglang]),
        ("--tp_size", &[Engine::Trtllm]),
        ("--max_seq_len", &[Engine::Vllm, Engine::Trtllm]),
        ("--tensor-parallel-size", &[Engine::Sglang, Engine::Vllm]),
        ("--port", &[Engine::Sglang, Engine::Vllm, Engine::Trtllm]),
    ];
    for (flag, want) in cases {
        assert_eq!(engines_taking(flag), want, "{flag}");
    }
    assert!(engines_taking("--model-repository").is_empty());
}
