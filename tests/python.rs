//! Python launchers (`src/extract/python`): argv lists run through `subprocess`/`os.system`,
//! Modal and BentoML decorator GPUs, unknown values as INP004 at their span, syntax errors as
//! INP001 naming the line, bounded reads; and the real Python files of other projects in
//! `../shared/platforms`. The engines' constructors (`vllm.LLM`, `sglang.Engine`, TensorRT-LLM's
//! `LLM`, Ray `LLMConfig`) are platform files, checked by `tests/platforms.rs` on their fixtures;
//! the config objects handed to them are read here.

mod common;

use common::{kvlint, root};
use serde_json::Value;
use std::path::Path;

fn check(path: &Path, extra: &[&str]) -> Value {
    let file = path.to_string_lossy().into_owned();
    let mut args = vec!["check", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(&file);
    let run = kvlint(&args);
    assert!(
        run.code == 0 || run.code == 1,
        "{file}: exit {}\n{}",
        run.code,
        run.stderr
    );
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{file}: {e}\n{}", run.stdout))
}

fn fixture(name: &str) -> std::path::PathBuf {
    root().join("fixtures/python").join(name)
}

/// Each launch as a careful reader lists it: `engine= role= tp= context= model= gpu=`.
fn launches(doc: &Value) -> Vec<String> {
    let text = |v: &Value| match v {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            format!(
                "engine={} role={} tp={} context={} model={} gpu={}",
                text(&l["engine"]),
                text(&l["role"]),
                text(&l["tp"]),
                text(&l["context_length"]),
                text(&l["model"]),
                text(&l["gpu"])
            )
        })
        .collect()
}

/// `(rule, line, column)` of every finding.
fn findings(doc: &Value) -> Vec<(String, u64, u64)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap_or(0),
                f["column"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

const VLLM: &[&str] = &["--engine-version", "vllm=0.33.0"];
const SGLANG: &[&str] = &["--engine-version", "sglang=0.5.23"];

#[test]
fn modal_function_gpu_string_names_the_gpu_and_its_count() {
    let doc = check(&fixture("modal-function-gpu.py"), VLLM);
    assert_eq!(
        launches(&doc),
        ["engine=vllm role=unified tp=8 context=32768 model=Qwen/Qwen3-8B gpu=H100-80GB"]
    );
    assert_eq!(doc["launches"][0]["object"]["name"], "serve");
}

#[test]
fn modal_class_gpu_object_and_a_joined_shell_line_with_a_constant_splat() {
    let doc = check(&fixture("modal-cls-gpu-object.py"), SGLANG);
    assert_eq!(
        launches(&doc),
        ["engine=sglang role=unified tp=2 context=16384 model=Qwen/Qwen3-8B gpu=A100-40GB"]
    );
}

/// A module-level launcher that a Modal GPU function calls but that `__main__` also runs locally:
/// the local machine's GPU is not in the file, so the launch names none (INP003), never the Modal
/// function's H100.
#[test]
fn a_helper_also_run_outside_modal_names_no_gpu() {
    let doc = check(&fixture("modal-helper-also-run-locally.py"), VLLM);
    assert_eq!(
        launches(&doc),
        ["engine=vllm role=unified tp=1 context=8192 model=Qwen/Qwen3-8B gpu=-"]
    );
    assert!(findings(&doc)
        .iter()
        .any(|(r, l, _)| r == "INP003" && *l == 12));
}

/// A Modal fallback list that ends in `"any"` may land on a GPU the file does not name: the
/// unknown entry wins over the H100 and is reported (INP003 at the list item).
#[test]
fn a_fallback_list_with_any_gpu_is_reported_not_planned_on_the_h100() {
    let doc = check(&fixture("modal-gpu-fallback-any.py"), VLLM);
    assert_eq!(
        launches(&doc),
        ["engine=vllm role=unified tp=1 context=8192 model=Qwen/Qwen3-8B gpu=any"]
    );
    assert!(
        findings(&doc).contains(&("INP003".into(), 10, 28)),
        "{doc:#}"
    );
}

#[test]
fn bentoml_resources_and_command_argv() {
    let doc = check(&fixture("bentoml-service.py"), VLLM);
    assert_eq!(
        launches(&doc),
        ["engine=vllm role=unified tp=2 context=8192 model=Qwen/Qwen3-8B gpu=H100-80GB"]
    );
    assert_eq!(doc["launches"][0]["object"]["name"], "LLM.__command__");
}

#[test]
fn os_system_and_shlex_split_of_constants() {
    let doc = check(&fixture("os-system-shlex.py"), &[]);
    assert_eq!(
        launches(&doc),
        [
            "engine=sglang role=unified tp=4 context=8192 model=Qwen/Qwen3-8B gpu=-",
            "engine=vllm role=unified tp=1 context=4096 model=Qwen/Qwen3-8B gpu=-",
        ]
    );
}

/// SGLang's doc helper `launch_server_cmd` runs its command string: the launch in it is read as
/// a shell line's, not left as an INP006 entrypoint mention.
#[test]
fn sglang_launch_server_cmd_string_is_a_launch() {
    let doc = check(&fixture("sglang-launch-server-cmd.py"), SGLANG);
    assert_eq!(
        launches(&doc),
        ["engine=sglang role=unified tp=2 context=16384 model=Qwen/Qwen3-8B gpu=-"]
    );
    assert!(!findings(&doc).iter().any(|(r, _, _)| r == "INP006"));
}

/// A dict of an engine's flag names handed to its argument parser is read by its keys; the model
/// the environment gives is INP004 at its span.
#[test]
fn a_dict_of_engine_flags_is_read_by_its_keys() {
    let doc = check(&fixture("ray-serve-cli-dict.py"), VLLM);
    assert_eq!(
        launches(&doc),
        ["engine=vllm role=unified tp=2 context=8192 model=- gpu=-"]
    );
    let kind = doc["launches"][0]["object"]["kind"].as_str().unwrap();
    assert!(kind.contains("recognized by their keys"), "{kind}");
    let inp004: Vec<_> = findings(&doc)
        .into_iter()
        .filter(|(r, _, _)| r == "INP004")
        .collect();
    assert_eq!(inp004, [("INP004".into(), 19, 27)], "{doc:#}");
}

/// A parameter and a splat of a name the file never binds are INP004 where they are written.
#[test]
fn parameters_and_unknown_splats_are_inp004_at_their_spans() {
    let doc = check(&fixture("parameter-unknown.py"), &["--gpu", "H100-80GB"]);
    let inp004: Vec<_> = findings(&doc)
        .into_iter()
        .filter(|(r, _, _)| r == "INP004")
        .collect();
    assert_eq!(
        inp004,
        [("INP004".into(), 6, 74), ("INP004".into(), 6, 83)],
        "{doc:#}"
    );
}

#[test]
fn a_splat_added_before_the_call_is_the_launchs_and_refuses_it() {
    let doc = check(
        &fixture("argv-growth-before-call.py"),
        &["--gpu", "H100-80GB"],
    );
    let inp004: Vec<_> = findings(&doc)
        .into_iter()
        .filter(|(r, _, _)| r == "INP004")
        .collect();
    assert_eq!(inp004, [("INP004".into(), 7, 1)], "{doc:#}");
    assert_eq!(doc["launches"][0]["verdict"], "refused", "{doc:#}");
}

#[test]
fn a_syntax_error_is_inp001_naming_the_line() {
    let doc = check(&fixture("syntax-error.py"), &[]);
    assert_eq!(findings(&doc), [("INP001".into(), 5, 12)], "{doc:#}");
    let message = doc["findings"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("invalid Python syntax at line 5"),
        "{message}"
    );
    assert!(doc["launches"].as_array().unwrap().is_empty());
}

#[test]
fn a_file_that_names_no_engine_is_not_read() {
    let doc = check(&fixture("no-launcher.py"), &[]);
    assert!(doc["launches"].as_array().unwrap().is_empty());
    assert!(findings(&doc).is_empty(), "{doc:#}");
}

/// Deep nesting is followed only so far (no stack overflow), and a file over the size cap is
/// INP001, not read.
#[test]
fn deep_nesting_and_oversized_files_are_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("deep.py");
    let depth = 20_000;
    let text = format!(
        "import subprocess\nX = {}{}\nsubprocess.run([\"vllm\", \"serve\", \"m\", *X])\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    std::fs::write(&deep, text).unwrap();
    let doc = check(&deep, VLLM);
    assert_eq!(doc["launches"].as_array().unwrap().len(), 1, "{doc:#}");

    let big = dir.path().join("big.py");
    let text = format!("# vllm\n{}", "x = 1\n".repeat(1 << 20));
    std::fs::write(&big, text).unwrap();
    let doc = check(&big, &[]);
    assert_eq!(findings(&doc), [("INP001".into(), 1, 1)], "{doc:#}");
}

/// A directory walk takes the Python files that name an engine, and only those.
#[test]
fn a_directory_walk_reads_python_files_that_name_an_engine() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("os-system-shlex.py"), dir.path().join("launch.py")).unwrap();
    std::fs::copy(fixture("no-launcher.py"), dir.path().join("util.py")).unwrap();
    let doc = check(dir.path(), &[]);
    assert_eq!(doc["files_checked"], 1, "{doc:#}");
    assert_eq!(doc["launches"].as_array().unwrap().len(), 2);
}

/// The Python files of other projects in ../shared/platforms, as a careful reader lists their
/// launches; what the file does not fix (an env read, `self.model`, a splat of another module's
/// list) is INP004, never a value; an env read's default is listed and still INP004.
#[test]
#[ignore = "reads ../shared"]
fn real_python_files_of_other_projects() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "ray-serve-llm-app-deepseek-r1.py",
            &["engine=vllm role=unified tp=8 context=16384 model=deepseek-ai/DeepSeek-R1 gpu=H100-80GB"],
            &[],
        ),
        (
            // Two LLMConfig branches chosen by env GPT_OSS_SIZE: both are listed.
            "ray-serve-llm-app-gpt-oss.py",
            &[
                "engine=vllm role=unified tp=1 context=32768 model=openai/gpt-oss-20b gpu=L4",
                "engine=vllm role=unified tp=2 context=32768 model=openai/gpt-oss-120b gpu=L40S",
            ],
            &[],
        ),
        (
            // The model is `self.hf`, TP is in `*bento_args.additional_cli_args`.
            "bentovllm-service.py",
            &["engine=vllm role=unified tp=1 context=- model=- gpu=-"],
            &["INP004"],
        ),
        (
            "bentovllm-pd-decode.py",
            &["engine=vllm role=decode tp=1 context=- model=- gpu=-"],
            &["INP004"],
        ),
        (
            "modal-stopwatch-sglang.py",
            &["engine=sglang role=unified tp=1 context=- model=- gpu=-"],
            &["INP004"],
        ),
        (
            // kv_role kv_both on both, so vLLM does not say the role: the names in each launch's
            // statement do (PREFILL_PORT and prefill_devices, DECODE_PORT and decode_devices).
            "modal-stopwatch-vllm-pd.py",
            &[
                "engine=vllm role=prefill tp=1 context=- model=- gpu=-",
                "engine=vllm role=decode tp=1 context=- model=- gpu=-",
            ],
            &["INP004"],
        ),
        (
            // Every flag but host and port is appended from env vars in a loop.
            "runpod-worker-sglang-engine.py",
            &["engine=sglang role=unified tp=1 context=- model=- gpu=-"],
            &["INP004"],
        ),
        (
            // model_id and tp_size come from env reads with defaults: listed as the caller's
            // defaults, and INP004 still says the caller decides.
            "kempner-vllm-llm-kwargs.py",
            &["engine=vllm role=unified tp=1 context=2048 model=Qwen/Qwen2.5-0.5B-Instruct gpu=-"],
            &["INP004"],
        ),
    ];
    for (file, want, rules) in cases {
        let doc = check(&root().join("../shared/platforms").join(file), &[]);
        assert_eq!(&launches(&doc), want, "{file}");
        let got = common::rules(&doc);
        for r in *rules {
            assert!(got.contains(r), "{file}: no {r} in {got:?}");
        }
        assert!(!got.contains(&"CFG001"), "{file}: {got:?}");
        assert!(!got.contains(&"CFG004"), "{file}: {got:?}");
        assert!(!got.contains(&"INP006"), "{file}: {got:?}");
    }
}

/// The Modal and BentoML files of other projects are those platforms' launches (`platforms/modal.toml`,
/// `platforms/bentoml.toml`), named by the function or class that starts them. BentoVLLM's
/// `service.py` decorates with `service`, bound to `bentoml.service` or to a router's wrapper
/// depending on a build argument: no one platform, so its launch stays a Python launcher.
#[test]
#[ignore = "reads ../shared"]
fn real_modal_and_bentoml_files_are_their_platforms_launches() {
    let cases: &[(&str, &[&str])] = &[
        ("bentovllm-service.py", &["Python launcher LLM.__command__"]),
        (
            "bentovllm-pd-decode.py",
            &["BentoML service Decoder.__command__"],
        ),
        ("modal-stopwatch-sglang.py", &["Modal app SGLangBase.start"]),
        (
            "modal-stopwatch-vllm-pd.py",
            &[
                "Modal app vLLMPDDisaggregationBase.start",
                "Modal app vLLMPDDisaggregationBase.start",
            ],
        ),
    ];
    for (file, want) in cases {
        let doc = check(&root().join("../shared/platforms").join(file), &[]);
        let got: Vec<String> = doc["launches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                format!(
                    "{} {}",
                    l["object"]["kind"].as_str().unwrap(),
                    l["object"]["name"].as_str().unwrap()
                )
            })
            .collect();
        assert_eq!(&got, want, "{file}");
    }
    // The decode component's GPUs are another module's constants: none is taken from the
    // decorator, so the GPU stays unknown (INP003), never a guess.
    let doc = check(
        &root().join("../shared/platforms/bentovllm-pd-decode.py"),
        &[],
    );
    assert!(common::rules(&doc).contains(&"INP003"));
}

/// What the file fixes is followed past a binding: `a if FLAG else b` on a constant flag, `+=`
/// and `.append` of fixed items, and a dict's items set after it (the last value written);
/// nothing there is INP004.
#[test]
fn constant_branches_list_growth_and_dict_items_are_followed() {
    let doc = check(&fixture("constant-branches-and-growth.py"), VLLM);
    assert_eq!(
        launches(&doc),
        [
            "engine=vllm role=unified tp=2 context=16384 model=Qwen/Qwen2.5-7B-Instruct gpu=-",
            "engine=vllm role=unified tp=4 context=32768 model=Qwen/Qwen2.5-7B-Instruct gpu=L4",
        ]
    );
    let rules: Vec<String> = findings(&doc).into_iter().map(|(r, _, _)| r).collect();
    assert!(!rules.contains(&"INP004".to_string()), "{doc:#}");
}

/// INP004's `(line, message)` each.
fn inp004(doc: &Value) -> Vec<(u64, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "INP004")
        .map(|f| {
            let line = f["line"].as_u64().unwrap_or(0);
            (line, f["message"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

/// A caller's default is listed and planned with, and the launch is still refused: each pool
/// setting that holds one is INP004 naming the default.
fn listed_from_defaults(name: &str, launch: &str, said: &[(u64, &str)]) -> Value {
    let doc = check(&fixture(name), &["--gpu", "H100-80GB"]);
    assert_eq!(launches(&doc), [launch], "{doc:#}");
    let l = &doc["launches"][0];
    assert_eq!(l["verdict"], "refused", "{doc:#}");
    let found = inp004(&doc);
    assert_eq!(found.len(), said.len(), "{found:?}");
    for ((line, message), (want_line, want)) in found.iter().zip(said) {
        assert_eq!(line, want_line, "{found:?}");
        assert!(message.contains(want), "{message} lacks {want}");
    }
    doc
}

#[test]
fn env_read_defaults_are_listed_and_planned_but_the_caller_still_decides() {
    let doc = listed_from_defaults(
        "env-get-defaults.py",
        "engine=vllm role=unified tp=2 context=32768 model=Qwen/Qwen3-8B gpu=H100-80GB",
        &[
            (6, "MODEL (\"Qwen/Qwen3-8B\" unless set by the caller)"),
            (7, "TP (\"2\" unless set by the caller)"),
            // At the f-string the flag is written in.
            (10, "MAX_LEN (\"32768\" unless set by the caller)"),
        ],
    );
    // Planned with the defaults: a pool, not "no plan".
    assert!(doc["launches"][0]["pool_tokens"].is_u64(), "{doc:#}");
    let human = kvlint(&[
        "check",
        "--gpu",
        "H100-80GB",
        &fixture("env-get-defaults.py").to_string_lossy(),
    ]);
    assert!(human
        .stdout
        .contains("planned with 32768, what runs when the caller sets nothing"));
}

#[test]
fn an_env_default_in_an_engine_keyword_is_the_callers() {
    listed_from_defaults(
        "env-default-kwargs.py",
        "engine=sglang role=unified tp=2 context=16384 model=Qwen/Qwen3-8B gpu=H100-80GB",
        &[(7, "MAX_LEN (\"16384\" unless set by the caller)")],
    );
}

/// A config object's field (`KvCacheConfig(free_gpu_memory_fraction=...)`) read from the
/// environment with a default is the caller's too: planned with 0.8, INP004 at the read.
#[test]
fn an_env_default_in_a_config_object_is_the_callers() {
    let doc = listed_from_defaults(
        "trtllm-kv-config-env-default.py",
        "engine=trtllm role=unified tp=1 context=16384 model=Qwen/Qwen3-8B gpu=H100-80GB",
        &[(8, "KV_FRACTION (\"0.8\" unless set by the caller)")],
    );
    assert_eq!(doc["launches"][0]["memory_fraction"], 0.8, "{doc:#}");
}

/// A config made by a function is what it returns, not its arguments: the whole
/// `kv_cache_config` is a value kvlint does not see, INP004 at the call.
#[test]
fn a_config_made_by_a_function_is_unknown() {
    let doc = check(
        &fixture("trtllm-kv-config-from-function.py"),
        &["--gpu", "H100-80GB"],
    );
    let found = inp004(&doc);
    assert_eq!(found.len(), 1, "{doc:#}");
    assert_eq!(found[0].0, 7);
    assert!(found[0].1.contains("make_kv_config(0.5)"), "{found:?}");
    assert!(doc["launches"][0]["pool_tokens"].is_null(), "{doc:#}");
}

/// BentoML's env entry with no value is given at deploy time: the read's default is what runs
/// when nobody gives it; an entry with a value is that value, no finding.
#[test]
fn a_bentoml_env_listed_without_a_value_reads_as_its_default() {
    listed_from_defaults(
        "bentoml-env-default.py",
        "engine=vllm role=unified tp=2 context=8192 model=Qwen/Qwen3-8B gpu=H100-80GB",
        &[(16, "MAX_LEN (\"8192\" unless set by the caller)")],
    );
}

/// argparse defaults through `parse_known_args` and a function's parameters; a required option
/// is not read.
#[test]
fn argparse_defaults_are_listed_through_parameters_and_the_caller_still_decides() {
    listed_from_defaults(
        "argparse-defaults.py",
        "engine=sglang role=unified tp=2 context=32768 model=Qwen/Qwen3-8B gpu=H100-80GB",
        &[
            (
                16,
                "--model (\"Qwen/Qwen3-8B\" unless the caller passes --model)",
            ),
            (17, "--tp (\"2\" unless the caller passes --tp)"),
            (
                18,
                "--context-length (\"32768\" unless the caller passes --context-length)",
            ),
        ],
    );
}

/// An option with no default, or a required one, is unknown as before: nothing is planned.
#[test]
fn argparse_options_without_a_default_stay_unknown() {
    let doc = listed_from_defaults(
        "argparse-no-default.py",
        "engine=vllm role=unified tp=- context=- model=Qwen/Qwen3-8B gpu=H100-80GB",
        &[
            (
                8,
                "--model (\"Qwen/Qwen3-8B\" unless the caller passes --model)",
            ),
            (12, "args.tp"),
            (12, "args.max_len"),
        ],
    );
    assert!(doc["launches"][0]["pool_tokens"].is_null(), "{doc:#}");
}
