//! Every real deployment file in `../shared/manifests`: each launch a reader of the file would
//! list is found, with its engine, role, model, TP and context as the file writes them (expected
//! values below come from reading the files; `None` where the file leaves a value to the engine's
//! default or to a variable kvlint cannot see), and no CFG001/CFG006 falls on a flag or file the
//! engine or its wrapper accepts. Plus the shapes those files taught us, on fixtures of our own.

mod common;

use kvlint::deployment::{model_text, role_of};
use kvlint::engine::{self, ParseContext};
use kvlint::extract::extract;
use kvlint::finding::Finding;
use kvlint::launch::Engine;
use kvlint::source::Sources;
use kvlint::version::Version;

/// What a reader lists for one launch: engine, role, model, TP, context.
type Expect = (
    &'static str,
    &'static str,
    Option<&'static str>,
    Option<i64>,
    Option<i64>,
);

/// The launches of each file, in file order.
#[rustfmt::skip]
const EXPECTED: &[(&str, &[Expect])] = &[
    ("Dockerfile.tensorfuse-vllm", &[("vllm", "unified", Some("deepseek-ai/DeepSeek-R1-Distill-Llama-70B"), Some(4), Some(4096))]),
    ("admissionreview-v1-create-deployment-sglang.json", &[("sglang", "unified", Some("meta-llama/Meta-Llama-3.1-8B-Instruct"), None, None)]),
    ("ai-on-eks-deployment-vllm.yaml", &[("vllm", "unified", Some("mistralai/Ministral-8B-Instruct-2410"), None, Some(8192))]),
    ("ai-on-eks-values-lws-vllm.yaml", &[("vllm", "unified", Some("meta-llama/Llama-4-Scout-17B-16E-Instruct"), Some(4), Some(1024))]),
    ("aibrix-rayclusterfleet-vllm.yaml", &[("vllm", "unified", Some("deepseek-ai/DeepSeek-R1"), Some(16), None)]),
    ("aibrix-stormservice-sglang-pd.yaml", &[
        ("sglang", "prefill", Some("/models/Qwen3-8B"), Some(2), None),
        ("sglang", "decode", Some("/models/Qwen3-8B"), Some(2), None),
    ]),
    ("dynamo-dgd-sglang-disagg.yaml", &[
        ("sglang", "decode", Some("Qwen/Qwen3-0.6B"), Some(1), None),
        ("sglang", "prefill", Some("Qwen/Qwen3-0.6B"), Some(1), None),
    ]),
    ("dynamo-dgd-trtllm-configmap.yaml", &[("trtllm", "unified", Some("Qwen/Qwen3-0.6B"), None, None)]),
    ("harbor-compose-sglang.yaml", &[("sglang", "unified", None, None, None)]),
    ("inferencex-script-trtllm.sh", &[("trtllm", "unified", None, None, None)]),
    ("inferencex-script-vllm.sh", &[("vllm", "unified", None, None, None)]),
    ("inferencex-srtslurm-recipe-vllm-pd.yaml", &[
        ("vllm", "prefill", Some("deepseek-v4-pro"), Some(1), Some(9280)),
        ("vllm", "decode", Some("deepseek-v4-pro"), Some(8), Some(16384)),
    ]),
    ("kaito-workspace-vllm.yaml", &[("vllm", "unified", Some("deepseek-r1-distill-qwen-14b"), Some(2), Some(131072))]),
    ("kserve-llminferenceservice-vllm-pd.yaml", &[
        ("vllm", "decode", Some("Qwen/Qwen2.5-7B-Instruct"), None, None),
        ("vllm", "prefill", Some("Qwen/Qwen2.5-7B-Instruct"), None, None),
    ]),
    ("kubeai-model-vllm.yaml", &[("vllm", "unified", Some("neuralmagic/Meta-Llama-3.1-405B-Instruct-FP8"), Some(8), Some(65536))]),
    ("kuberay-rayservice-vllm.yaml", &[("vllm", "unified", Some("Qwen/Qwen2.5-7B-Instruct"), None, Some(1024))]),
    ("llmaz-backendruntime-trtllm.yaml", &[("trtllm", "unified", None, None, None)]),
    ("llmaz-service-sglang.yaml", &[("sglang", "unified", Some("/workspace/models/models--meta-llama--Meta-Llama-3.1-8B-Instruct"), Some(2), None)]),
    ("llmd-disaggregatedset-sglang-pd.yaml", &[
        ("sglang", "prefill", Some("openai/gpt-oss-120b"), Some(2), None),
        ("sglang", "decode", Some("openai/gpt-oss-120b"), Some(2), None),
    ]),
    ("lmscript-compose-vllm.yaml", &[("vllm", "unified", Some("TheBloke/Mistral-7B-Instruct-v0.2-AWQ"), None, Some(4096))]),
    // `args` differs on three paths (an EAGLE3 draft path, the speculative defaults, neither):
    // one launch per path.
    ("mlperf-script-sglang.sh", &[
        ("sglang", "unified", None, None, None),
        ("sglang", "unified", None, None, None),
        ("sglang", "unified", None, None, None),
    ]),
    ("nebius-skypilot-task-sglang.yaml", &[("sglang", "unified", Some("meta-llama/Llama-4-Scout-17B-16E-Instruct"), Some(8), Some(32768))]),
    ("odh-template-servingruntime-vllm.yaml", &[("vllm", "unified", Some("/mnt/models"), None, None)]),
    ("ome-clusterservingruntime-sglang-pd.yaml", &[
        ("sglang", "prefill", None, Some(4), None),
        ("sglang", "decode", None, Some(4), None),
    ]),
    ("production-stack-values-vllm-pd.yaml", &[
        ("vllm", "prefill", Some("meta-llama/Llama-3.1-8B-Instruct"), None, Some(32000)),
        ("vllm", "decode", Some("meta-llama/Llama-3.1-8B-Instruct"), None, Some(32000)),
    ]),
    ("sglang-deployment.yaml", &[("sglang", "unified", Some("meta-llama/Meta-Llama-3.1-8B-Instruct"), None, None)]),
    ("sglang-lws-pd-decode.yaml", &[("sglang", "decode", Some("/work/models"), Some(16), Some(32768))]),
    ("sglang-lws-pd-prefill.yaml", &[("sglang", "prefill", Some("/work/models"), Some(16), Some(32768))]),
    ("skypilot-service-vllm.yaml", &[("vllm", "unified", Some("meta-llama/Llama-4-Maverick-17B-128E-Instruct-FP8"), Some(8), Some(32768))]),
];

/// CFG001/CFG006 findings that are right: the file names something the engine does not accept.
/// `(file, rule, flag or path as written)`.
const RIGHT: &[(&str, &str, &str)] = &[
    // The ConfigMap is mounted over /workspace/, hiding the image's examples: the engine YAML at
    // ./examples/... relative to workingDir /workspace/examples/backends/trtllm does not exist.
    (
        "dynamo-dgd-trtllm-configmap.yaml",
        "CFG006",
        "./examples/backends/trtllm/engine_configs/qwen3/agg.yaml",
    ),
    // `engine_kwargs` are keyword arguments: `device` is no field of vLLM's AsyncEngineArgs or
    // FrontendArgs in any modelled release, so Ray Serve LLM refuses it ("Unknown engine
    // argument", ray llm vllm_models.py `from_llm_config`).
    ("kuberay-rayservice-vllm.yaml", "CFG001", "device"),
];

/// Findings on flags or files the engine of that file does accept, that other parts of kvlint
/// still get wrong: each says why, so the list shrinks as they are fixed (and this test fails when
/// one is fixed and not removed, or a new one appears).
const KNOWN_WRONG: &[(&str, &str, &str, &str)] = &[];

/// `../shared/manifests/` from the repository root; `KVLINT_SHARED` points elsewhere (worktrees).
fn manifests_dir() -> std::path::PathBuf {
    let shared = std::env::var("KVLINT_SHARED").unwrap_or_else(|_| "../shared".into());
    common::root().join(shared).join("manifests")
}

/// A launch as read: engine, role, model, TP, context.
type Listed = (String, String, Option<String>, Option<i64>, Option<i64>);

struct Seen {
    launches: Vec<Listed>,
    /// `(rule, flag or path)` of every CFG001/CFG006.
    config: Vec<(String, String)>,
}

fn read(path: &std::path::Path) -> Seen {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut sources = Sources::default();
    let file = sources.add(path.display().to_string(), text);
    let out = extract(file, &sources);
    let mut seen = Seen {
        launches: Vec::new(),
        config: Vec::new(),
    };
    let mut findings: Vec<Finding> = out.findings;
    for launch in &out.launches {
        let version = launch
            .engine_version
            .as_ref()
            .and_then(|(v, _)| Version::parse(v));
        let mut cx = ParseContext {
            sources: &mut sources,
            base_dir: path.parent().map(Into::into),
        };
        let parsed = engine::parse(launch, version.as_ref(), &mut cx);
        let (tp, ctx) = match launch.engine {
            Engine::Sglang => ("tp_size", "context_length"),
            Engine::Vllm => ("tensor_parallel_size", "max_model_len"),
            Engine::Trtllm => ("tensor_parallel_size", "max_seq_len"),
        };
        let known = |dest: &str| {
            parsed
                .args
                .get(dest)
                .filter(|s| s.unresolved.is_empty())
                .and(parsed.args.int(dest))
        };
        let model = model_text(&parsed.args)
            .filter(|_| {
                let dest = kvlint::deployment::model_dest(launch.engine);
                parsed
                    .args
                    .get(dest)
                    .is_some_and(|s| s.unresolved.is_empty())
            })
            .map(str::to_string);
        seen.launches.push((
            launch.engine.name().to_string(),
            format!("{:?}", role_of(launch, &parsed.args)).to_lowercase(),
            model,
            known(tp),
            known(ctx),
        ));
        findings.extend(parsed.findings);
    }
    for f in findings
        .iter()
        .filter(|f| f.rule == "CFG001" || f.rule == "CFG006")
    {
        let what = f.get("flag").or(f.get("path")).unwrap_or_default();
        seen.config.push((f.rule.to_string(), what.to_string()));
    }
    seen
}

#[test]
#[ignore = "reads ../shared"]
fn every_shared_manifest_gives_the_launches_a_reader_lists() {
    let mut problems = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(manifests_dir())
        .expect("../shared/manifests")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n != "README.md")
        .collect();
    names.sort();
    for name in &names {
        let Some((_, expected)) = EXPECTED.iter().find(|(n, _)| n == name) else {
            problems.push(format!("{name}: no expectation written for this file"));
            continue;
        };
        let seen = read(&manifests_dir().join(name));
        let want: Vec<Listed> = expected
            .iter()
            .map(|(e, r, m, tp, ctx)| {
                (
                    e.to_string(),
                    r.to_string(),
                    m.map(str::to_string),
                    *tp,
                    *ctx,
                )
            })
            .collect();
        if seen.launches != want {
            problems.push(format!(
                "{name}:\n  want {want:?}\n  got  {:?}",
                seen.launches
            ));
        }
        for (rule, what) in &seen.config {
            let right = RIGHT
                .iter()
                .any(|(n, r, w)| n == name && r == rule && w == what);
            let known = KNOWN_WRONG
                .iter()
                .any(|(n, r, w, _)| n == name && r == rule && w == what);
            if !right && !known {
                problems.push(format!("{name}: {rule} on {what}"));
            }
        }
        for (n, r, w, why) in KNOWN_WRONG.iter().filter(|(n, ..)| n == name) {
            if !seen
                .config
                .iter()
                .any(|(rule, what)| rule == r && what == w)
            {
                problems.push(format!(
                    "{n}: {r} on {w} ({why}) is fixed: remove it from KNOWN_WRONG"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The acceptance case of issue 10: a Dynamo SGLang deployment (v1alpha1 services and v1beta1
/// components) whose `--config` is a ConfigMap key mounted into the worker, with wrapper flags.
#[test]
fn dynamo_sglang_with_a_mounted_config_is_read_whole() {
    let run = common::kvlint(&[
        "check",
        "--format",
        "json",
        "fixtures/extract/k8s/dynamo-sglang-config.yaml",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
    let rules = common::rules(&doc);
    assert!(
        !rules.iter().any(|r| *r == "CFG001" || *r == "CFG006"),
        "{rules:?}"
    );
    let launches = doc["launches"].as_array().unwrap();
    let got: Vec<(&str, i64, i64, f64)> = launches
        .iter()
        .map(|l| {
            (
                l["role"].as_str().unwrap_or("-"),
                l["tp"].as_i64().unwrap_or(-1),
                l["context_length"].as_i64().unwrap_or(-1),
                l["memory_fraction"].as_f64().unwrap_or(-1.0),
            )
        })
        .collect();
    // Context and fraction come from the mounted files (prefill.yaml, and decode.yaml at sglang.yaml).
    assert_eq!(
        got,
        [("prefill", 2, 32768, 0.82), ("decode", 2, 32768, 0.85)]
    );
    assert_eq!(run.code, 0, "{}", run.stdout);
}

/// The parts of `check --format json` that make the verdict: each launch without where it is
/// written, each finding's rule and message, and the exit code.
fn verdict(path: &str) -> (i32, Vec<serde_json::Value>, Vec<String>) {
    let run = common::kvlint(&["check", "--format", "json", path]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
    let launches = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let mut l = l.clone();
            for key in ["file", "line", "column", "end_line", "end_column"] {
                l.as_object_mut().unwrap().remove(key);
            }
            // Where the GPU is written differs between the two files; what it is does not.
            if let Some(src) = l["gpu_source"].as_object_mut() {
                for key in ["file", "line", "column"] {
                    src.remove(key);
                }
            }
            l
        })
        .collect();
    let findings = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| format!("{} {}", f["rule"], f["message"]))
        .collect();
    (run.code, launches, findings)
}

/// `kubectl get -o yaml` prints a `kind: List`; `helm template` prints documents: the same
/// objects either way get the same verdict.
#[test]
fn a_kubectl_list_has_the_verdict_of_its_objects_as_documents() {
    let list = verdict("fixtures/extract/k8s/list.yaml");
    let docs = verdict("fixtures/extract/k8s/list-items.yaml");
    assert_eq!(list, docs);
    assert_eq!(list.1.len(), 2);
    assert_eq!(list.0, 1, "the prefill half is refused: {:?}", list.2);
}

/// Chart templates are not YAML errors: a template naming an engine is INP006 with the command
/// that renders the chart (its root found by `Chart.yaml`), one naming none is INP007.
#[test]
fn helm_chart_templates_say_how_to_check_the_rendered_chart() {
    let run = common::kvlint(&[
        "check",
        "--format",
        "json",
        "--config",
        "fixtures/INP007/kvlint.toml",
        "fixtures/extract/chart/templates/deployment.yaml",
        "fixtures/extract/chart/templates/service.yaml",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
    let findings: Vec<(&str, &str)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["help"].as_str().unwrap()))
        .collect();
    assert_eq!(findings.len(), 2, "{findings:?}");
    for (rule, help) in &findings {
        assert!(
            help.contains("helm template fixtures/extract/chart"),
            "{help}"
        );
        assert!(help.contains("| kvlint check -"), "{help}");
        assert_ne!(*rule, "INP001");
    }
    assert_eq!(findings[0].0, "INP006");
    assert_eq!(findings[1].0, "INP007");
    assert_eq!(run.code, 1);
}

/// A TensorRT-LLM extra-options file is read as TensorRT-LLM's, never as a vLLM `--config`.
#[test]
fn a_trtllm_extra_options_file_is_tensorrt_llm() {
    let path = "fixtures/extract/trtllm-extra-options.yaml";
    let text = std::fs::read_to_string(common::root().join(path)).unwrap();
    let mut sources = Sources::default();
    let file = sources.add(path, text);
    let out = extract(file, &sources);
    assert_eq!(out.launches.len(), 1);
    assert_eq!(out.launches[0].engine, Engine::Trtllm);
    let mut cx = ParseContext {
        sources: &mut sources,
        base_dir: None,
    };
    let parsed = engine::parse(&out.launches[0], None, &mut cx);
    assert!(parsed.findings.is_empty(), "{:?}", parsed.findings);
    let a = &parsed.args;
    assert_eq!(a.int("tensor_parallel_size"), Some(8));
    assert_eq!(a.int("max_seq_len"), Some(9216));
    assert_eq!(a.float(engine::trtllm::FRACTION), Some(0.8));
}

/// `dynamo.vllm` workers: `--is-prefill-worker` / `--is-decode-worker` give the role, and the
/// wrapper's flags (`--connector`, `--dyn-*`, `--router-*`, `--no-use-vllm-tokenizer`) are not
/// vLLM's unknown flags; `--enforce-eager` still reaches vLLM.
#[test]
fn dynamo_vllm_workers_take_their_role_and_flags_from_the_wrapper() {
    let run = common::kvlint(&[
        "check",
        "--format",
        "json",
        "fixtures/extract/k8s/dynamo-vllm.yaml",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
    let rules = common::rules(&doc);
    assert!(!rules.iter().any(|r| r.starts_with("CFG")), "{rules:?}");
    let contexts: Vec<i64> = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["context_length"].as_i64().unwrap_or(-1))
        .collect();
    assert_eq!(contexts, [32768, 32768]);
    // The roles make the two workers one prefill/decode pair.
    assert_eq!(
        doc["deployments"],
        serde_json::json!([{"id": "DynamoGraphDeployment/qwen-vllm", "pd_pair": true,
            "roles": {"prefill": [0], "decode": [1]}}])
    );
}
