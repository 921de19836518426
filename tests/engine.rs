//! Engine argparse behaviour; expected values come from the engines' argparse semantics.

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
