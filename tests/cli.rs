//! Whole CLI runs, snapshot-tested: stdout, stderr and exit code together.

mod common;

use common::{kvlint, kvlint_stdin};
use serde_json::Value;

const INCIDENT: &[&str] = &[
    "check",
    "--gpu",
    "h200x8",
    "--engine-version",
    "0.5.20",
    "fixtures/incident/prefill.sh",
];

#[test]
fn the_incident_is_refused_with_kv001_pointing_at_the_context() {
    let run = kvlint(INCIDENT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stdout.contains("KV001"), "{}", run.stdout);
    insta::assert_snapshot!(run.transcript(INCIDENT));
}

#[test]
fn the_incident_as_json_states_pool_and_context() {
    let mut args = INCIDENT.to_vec();
    args.insert(1, "--format");
    args.insert(2, "json");
    let run = kvlint(&args);
    assert_eq!(run.code, 1);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["schema_version"], 1);
    let launch = &doc["launches"][0];
    let pool = launch["pool_tokens"].as_u64().unwrap();
    assert!((600_000..=750_000).contains(&pool), "incident pool {pool}");
    assert_eq!(launch["context_length"], 1_048_576);
    assert_eq!(launch["role"], "prefill");
    let kv001 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "KV001")
        .unwrap();
    assert_eq!(kv001["level"], "deny");
    // The frame points at `--context-length 1048576`, line 17 of the script.
    assert_eq!(
        (kv001["line"].as_u64(), kv001["column"].as_u64()),
        (Some(17), Some(3))
    );
    insta::assert_json_snapshot!(doc, { ".launches[].assumptions" => "[assumptions]" });
}

#[test]
fn capacity_prints_the_plan_of_one_launch() {
    let args = [
        "capacity",
        "--gpu",
        "h100-80gb",
        "--engine-version",
        "0.19.0",
        "--",
        "vllm",
        "serve",
        "meta-llama/Llama-3.1-8B-Instruct",
        "--max-model-len",
        "8192",
        "--gpu-memory-utilization",
        "0.95",
        "--no-enable-prefix-caching",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.transcript(&args));
    let mut json_args = args.to_vec();
    json_args.insert(1, "--format");
    json_args.insert(2, "json");
    let plan: serde_json::Value = serde_json::from_str(&kvlint(&json_args).stdout).unwrap();
    for key in [
        "engine",
        "engine_version",
        "role",
        "model",
        "gpu",
        "tp",
        "context_length",
        "kv_bytes_per_token",
        "pool_tokens",
        "pool_tokens_low",
        "pool_tokens_high",
        "budget_bytes",
        "weights_bytes",
        "assumptions",
    ] {
        assert!(plan.get(key).is_some(), "capacity JSON lacks {key}");
    }
    // Llama 3.1 8B: 32 layers × 8 KV heads × 128 × 2 (K, V) × 2 bytes.
    assert_eq!(plan["kv_bytes_per_token"], 131_072);
}

#[test]
fn capacity_with_an_unknown_model_exits_2_with_one_line() {
    let run = kvlint(&[
        "capacity",
        "--gpu",
        "h100-80gb",
        "--",
        "vllm",
        "serve",
        "my-org/private-7b",
    ]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("pass --model-config"), "{}", run.stderr);
    assert!(run.stdout.is_empty());
}

#[test]
fn capacity_with_an_unknown_gpu_exits_2_with_one_line() {
    let run = kvlint(&[
        "capacity",
        "--gpu",
        "h300",
        "--",
        "vllm",
        "serve",
        "Qwen/Qwen3-8B",
    ]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("h300"), "{}", run.stderr);
}

#[test]
fn capacity_without_a_gpu_exits_2_with_one_line() {
    let run = kvlint(&["capacity", "--", "vllm", "serve", "Qwen/Qwen3-8B"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
}

#[test]
fn check_with_an_unreadable_path_exits_2_naming_it() {
    let run = kvlint(&["check", "--gpu", "h200", "no/such/file.sh"]);
    assert_eq!(run.code, 2);
    assert_eq!(run.stderr.lines().count(), 1);
    assert!(run.stderr.contains("no/such/file.sh"), "{}", run.stderr);
}

#[test]
fn check_with_bad_arguments_exits_2() {
    assert_eq!(kvlint(&["check", "--format", "xml", "fixtures"]).code, 2);
    assert_eq!(
        kvlint(&[
            "check",
            "--gpu",
            "h200",
            "--engine-version",
            "banana",
            "fixtures/incident"
        ])
        .code,
        2
    );
}

#[test]
fn check_reads_stdin() {
    let run = kvlint_stdin(
        &["check", "--gpu", "h100-80gb", "-"],
        Some("vllm serve Qwen/Qwen3-8B --max-model-len 32768\n"),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("<stdin>:1: vllm"), "{}", run.stdout);
}

#[test]
fn one_bad_input_does_not_hide_the_other_launches() {
    let args = [
        "check",
        "--gpu",
        "h100-80gb",
        "--format",
        "json",
        "fixtures/INP001/fire-broken.yaml",
        "fixtures/INP002",
        "fixtures/KV005/pass-within-model.sh",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let rules: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"INP001") && rules.contains(&"INP002"),
        "{rules:?}"
    );
    // The unknown model's launch is still listed, with the model as written and nulls for what
    // could not be computed.
    let launches = doc["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 3, "{launches:#?}");
    assert!(launches
        .iter()
        .any(|l| l["model"].is_string() && l["pool_tokens"].is_null()));
    assert!(launches.iter().any(|l| l["pool_tokens"].as_u64().is_some()));
}

#[test]
fn explain_prints_the_rule_docs() {
    let run = kvlint(&["explain", "KV001"]);
    assert_eq!(run.code, 0);
    insta::assert_snapshot!(run.stdout);
    assert_eq!(
        kvlint(&["explain", "pool-below-context"]).stdout,
        run.stdout
    );
    assert_eq!(kvlint(&["explain", "NOPE01"]).code, 2);
}

#[test]
fn rules_json_lists_every_rule_file() {
    let run = kvlint(&["rules", "--format", "json"]);
    assert_eq!(run.code, 0);
    let rules: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let files = std::fs::read_dir(common::root().join("rules"))
        .unwrap()
        .count();
    assert_eq!(rules.as_array().unwrap().len(), files);
    assert!(rules
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["docs"]["what"].is_string()));
}

// ---- GPU precedence: the input's own GPU wins over every default ----

/// A Deployment pinned to A100-40GB nodes serving Qwen3-32B (about 61 GiB of weights).
const A100_QWEN: &str = "fixtures/GPU002/fire-flag-vs-node-selector.yaml";

fn json_of(run: &common::Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

fn rules_of(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_node_selector_gpu_is_refused_with_or_without_a_gpu_default() {
    for extra in [&[][..], &["--gpu", "h200"][..], &["--gpu", "h200x8"][..]] {
        let mut args = vec!["check", "--format", "json"];
        args.extend_from_slice(extra);
        args.push(A100_QWEN);
        let run = kvlint(&args);
        assert_eq!(run.code, 1, "{args:?}: {}", run.stdout);
        let doc = json_of(&run);
        let rules = rules_of(&doc);
        assert!(
            rules.contains(&"MEM001".into()) && rules.contains(&"KV001".into()),
            "{args:?}: {rules:?}"
        );
        // A default that names another GPU is said, never used.
        assert_eq!(
            rules.contains(&"GPU002".into()),
            !extra.is_empty(),
            "{rules:?}"
        );
        let launch = &doc["launches"][0];
        assert_eq!(launch["gpu"], "A100-40GB");
        // The pod's own count (1), not the default's 8.
        assert_eq!(launch["gpu_count"], 1, "{args:?}");
        assert_eq!(launch["verdict"], "refused");
        assert_eq!(
            launch["gpu_source"],
            serde_json::json!({"kind": "input", "file": A100_QWEN, "line": 12, "column": 33})
        );
    }
}

#[test]
fn the_human_line_and_gpu002_name_both_gpus_and_where_they_came_from() {
    let args = ["check", "--gpu", "h200", A100_QWEN];
    let run = kvlint(&args);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.contains("on 1×A100-40GB (TP 1, GPU from the input, fixtures/GPU002/fire-flag-vs-node-selector.yaml:12)"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("planned on 1×A100-40GB, which the input names, but --gpu says H200"),
        "{}",
        run.stdout
    );
}

#[test]
fn sarif_results_and_run_properties_say_where_the_gpu_came_from() {
    let doc = json_of(&kvlint(&[
        "check", "--format", "sarif", "--gpu", "h200", A100_QWEN,
    ]));
    let run = &doc["runs"][0];
    let source = serde_json::json!({
        "kind": "input",
        "location": {"uri": A100_QWEN, "line": 12}
    });
    let kv001 = run["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "KV001")
        .unwrap();
    assert_eq!(kv001["properties"]["gpu"], "A100-40GB");
    assert_eq!(kv001["properties"]["gpuSource"], source);
    let launch = &run["properties"]["launches"][0];
    assert_eq!(launch["gpuSource"], source);
    assert_eq!(launch["verdict"], "refused");
}

#[test]
fn affinity_with_several_gpus_plans_on_the_smallest_and_eks_labels_name_the_gpu() {
    for (file, gpu, line) in [
        ("fixtures/pipeline/affinity-two-gpus.yaml", "A100-40GB", 17),
        ("fixtures/pipeline/eks-karpenter-l4.yaml", "L4", 10),
    ] {
        let run = kvlint(&["check", "--format", "json", "--gpu", "h200", file]);
        assert_eq!(run.code, 1, "{file}");
        let launch = &json_of(&run)["launches"][0];
        assert_eq!(launch["gpu"], gpu, "{file}");
        assert_eq!(launch["gpu_source"]["line"], line, "{file}");
        assert_eq!(launch["verdict"], "refused", "{file}");
    }
}

#[test]
fn the_input_count_wins_over_the_default_count() {
    let run = kvlint(&[
        "check",
        "--format",
        "json",
        "--gpu",
        "h200x8",
        "fixtures/GPU002/fire-count-vs-resources.yaml",
    ]);
    let doc = json_of(&run);
    assert_eq!(doc["launches"][0]["gpu_count"], 2);
    let gpu002 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "GPU002")
        .expect("GPU002 on the count");
    assert!(
        gpu002["message"].as_str().unwrap().contains("2×H200")
            && gpu002["message"].as_str().unwrap().contains("8×H200"),
        "{gpu002}"
    );
}

#[test]
fn a_default_fills_in_only_where_the_input_names_no_gpu() {
    let run = kvlint(&[
        "check",
        "--format",
        "json",
        "--gpu",
        "h200x2",
        "fixtures/GPU002/pass-flag-only.sh",
    ]);
    let doc = json_of(&run);
    let launch = &doc["launches"][0];
    assert_eq!(launch["gpu"], "H200");
    assert_eq!(launch["gpu_count"], 2);
    assert_eq!(launch["gpu_source"], serde_json::json!({"kind": "flag"}));
    assert!(!rules_of(&doc).contains(&"GPU002".into()));
}

#[test]
fn an_input_gpu_missing_from_the_catalog_is_inp003_even_with_a_default() {
    let run = kvlint(&[
        "check",
        "--format",
        "json",
        "--gpu",
        "h200",
        "fixtures/pipeline/unknown-gpu.yaml",
    ]);
    assert_eq!(run.code, 1);
    let doc = json_of(&run);
    assert_eq!(rules_of(&doc), ["INP003"]);
    let launch = &doc["launches"][0];
    // Every setting the launch writes is still there; the GPU as the input names it.
    assert_eq!(launch["engine"], "sglang");
    assert_eq!(launch["engine_version"], "0.5.22");
    assert_eq!(launch["model"], "Qwen/Qwen3-8B");
    assert_eq!(launch["gpu"], "NVIDIA-Z900-SXM");
    assert_eq!(launch["gpu_count"], 2);
    assert_eq!(launch["gpu_source"]["kind"], "input");
    assert_eq!(launch["tp"], 2);
    assert_eq!(launch["context_length"], 32_768);
    assert_eq!(launch["memory_fraction"], 0.8);
    assert_eq!(launch["page_size"], 64);
    assert_eq!(launch["kv_cache_dtype"], Value::Null);
    assert_eq!(launch["pool_tokens"], Value::Null);
}

#[test]
fn the_webhook_default_gpu_is_a_fallback_too() {
    use kvlint::webhook::admission::{review, Policy};
    let object = serde_json::json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "qwen3-32b", "namespace": "llm"},
        "spec": {"template": {"spec": {
            "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB"},
            "containers": [{
                "name": "vllm",
                "image": "vllm/vllm-openai:v0.19.0",
                "command": ["vllm", "serve", "Qwen/Qwen3-32B"],
                "args": ["--max-model-len", "32768"],
                "resources": {"limits": {"nvidia.com/gpu": 1}}
            }]
        }}}
    });
    let body = serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u1",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "name": "qwen3-32b",
            "namespace": "llm",
            "operation": "CREATE",
            "userInfo": {"username": "test"},
            "object": object,
            "dryRun": false
        }
    });
    let req = kvlint::webhook::server::parse_review(body.to_string().as_bytes()).unwrap();
    let mut policy = Policy::default();
    policy.options.gpu = Some(kvlint::gpu::parse_spec("h200").unwrap());
    policy.options.gpu_source = kvlint::gpu::GpuSource::Webhook;
    let verdict = review(req, 0, &policy, None).expect("no deadline");
    assert!(!verdict.allowed, "{verdict:?}");
    let rules: Vec<&str> = verdict.findings.iter().map(|(r, _)| r.as_str()).collect();
    assert!(
        rules.contains(&"MEM001") && rules.contains(&"GPU002"),
        "{rules:?}"
    );
    assert!(
        verdict
            .warnings
            .iter()
            .any(|w| w.contains("webhook --gpu says H200")),
        "{verdict:?}"
    );
}

// ---- Nothing checked must be visible ----

#[test]
fn no_launch_is_said_in_every_format() {
    const NONE: &str = "fixtures/pipeline/no-launch.yaml";
    let human = kvlint(&["check", NONE]);
    assert_eq!(human.code, 0);
    assert_eq!(
        human.stdout,
        "no engine launch found in 1 file\nchecked 1 file, 0 launches: 0 errors, 0 warnings\n"
    );
    let doc = json_of(&kvlint(&["check", "--format", "json", NONE]));
    assert_eq!(doc["files_checked"], 1);
    assert_eq!(doc["summary"], "checked 1 file, 0 launches");
    assert_eq!(
        doc["notices"],
        serde_json::json!(["no engine launch found in 1 file"])
    );
    let sarif = json_of(&kvlint(&["check", "--format", "sarif", NONE]));
    let run = &sarif["runs"][0];
    assert_eq!(
        run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"],
        "no engine launch found in 1 file"
    );
    assert_eq!(run["properties"]["filesChecked"], 1);
    assert_eq!(
        kvlint(&["check", "--format", "github", NONE]).stdout,
        "::warning title=kvlint::no engine launch found in 1 file\n\
         ::notice title=kvlint::checked 1 file, 0 launches\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("summary.md");
    kvlint(&["check", "--summary", md.to_str().unwrap(), NONE]);
    let summary = std::fs::read_to_string(&md).unwrap();
    assert!(
        summary.contains("no engine launch found in 1 file.")
            && summary.contains("checked 1 file, 0 launches: 0 errors, 0 warnings"),
        "{summary}"
    );
    // Two files, one with a launch: no notice, and the count says both.
    let two = json_of(&kvlint(&[
        "check",
        "--format",
        "json",
        "--gpu",
        "h200",
        NONE,
        "fixtures/GPU002/pass-flag-only.sh",
    ]));
    assert_eq!(two["summary"], "checked 2 files, 1 launch");
    assert_eq!(two["notices"], serde_json::json!([]));
}

// ---- JSON keeps what was parsed ----

#[test]
fn a_launch_without_a_plan_keeps_every_parsed_setting() {
    let run = kvlint(&[
        "check",
        "--format",
        "json",
        "--gpu",
        "h200",
        "fixtures/pipeline/unknown-model.sh",
    ]);
    assert_eq!(run.code, 1);
    let doc = json_of(&run);
    // No image and no --engine-version: the release is unknown too (VER002).
    assert_eq!(rules_of(&doc), ["INP002", "VER002"]);
    let l = &doc["launches"][0];
    let expect = serde_json::json!({
        "engine": "vllm", "engine_version": "0.33.0", "role": "unified",
        "model": "my-org/private-70b", "gpu": "H200", "gpu_count": null,
        "tp": 4, "pp": 2, "dp": 1, "context_length": 65536, "memory_fraction": 0.85,
        "kv_cache_dtype": "fp8", "page_size": 32, "pool_tokens": null,
        "kv_bytes_per_token": null, "verdict": "refused"
    });
    for (k, v) in expect.as_object().unwrap() {
        assert_eq!(&l[k], v, "{k}");
    }
}

// ---- capacity ----

#[test]
fn capacity_exits_1_when_the_launch_is_refused_and_its_json_says_why() {
    let args = [
        "capacity",
        "--gpu",
        "a100-40gb",
        "--format",
        "json",
        "--",
        "vllm",
        "serve",
        "Qwen/Qwen3-32B",
        "--max-model-len",
        "32768",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let plan = json_of(&run);
    assert_eq!(plan["verdict"], "refused");
    let rules: Vec<&str> = plan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(
        rules.contains(&"KV001") && rules.contains(&"MEM001"),
        "{rules:?}"
    );
    let human = kvlint(&[&args[..3], &args[5..]].concat());
    assert_eq!(human.code, 1);
    assert!(
        human.stdout.contains("verdict: refused"),
        "{}",
        human.stdout
    );
}

#[test]
fn capacity_names_every_engine_when_the_command_is_not_a_launch() {
    let run = kvlint(&["capacity", "--gpu", "h200", "--", "python3", "app.py"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("SGLang, vLLM or TensorRT-LLM"),
        "{}",
        run.stderr
    );
}

// ---- Advice that cannot be followed is never given ----

#[test]
fn when_nothing_fits_the_help_says_so_and_offers_a_change_that_works() {
    let run = kvlint(&["check", A100_QWEN]);
    assert!(!run.stdout.contains(" to 0,"), "{}", run.stdout);
    let doc = json_of(&kvlint(&["check", "--format", "json", A100_QWEN]));
    let kv001 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "KV001")
        .unwrap();
    let help = kv001["help"].as_str().unwrap();
    assert!(
        help.starts_with(
            "Qwen/Qwen3-32B does not fit on 1×A100-40GB at --gpu-memory-utilization 0.9; "
        ),
        "{help}"
    );
    // The suggested TP is the smallest that works: planned again here, TP 4 passes and TP 2 is
    // refused (about 1.3 GiB of KV per rank beside 30.5 GiB of weights: even its band's high end
    // holds under 32,768 tokens).
    assert!(help.contains("spread it over 4 GPUs (TP 4"), "{help}");
    let at_tp = |tp: &str| {
        let run = kvlint(&[
            "capacity",
            "--format",
            "json",
            "--gpu",
            "a100-40gb",
            "--engine-version",
            "0.19.0",
            "--",
            "vllm",
            "serve",
            "Qwen/Qwen3-32B",
            "--max-model-len",
            "32768",
            "--tensor-parallel-size",
            tp,
        ]);
        json_of(&run)["verdict"].as_str().unwrap().to_string()
    };
    assert_eq!(
        (at_tp("2").as_str(), at_tp("4").as_str()),
        ("refused", "passes")
    );
}

#[test]
fn a_run_that_found_no_launch_says_what_it_skipped_on_purpose() {
    // An in-process benchmark is no server launch (INP007, `allow`): the no-launch line still
    // says it was seen and skipped, so the exit 0 is not a silent one.
    let run = kvlint_stdin(
        &["check", "--stdin-filename", "bench.sh", "-"],
        Some("srun bash -c \"python3 -m sglang.bench_offline_throughput --model-path m --dp 2\"\n"),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(
            "no engine launch found in 1 file; skipped on purpose: SGLang's in-process \
             throughput benchmark (sglang.bench_offline_throughput) (INP007)"
        ),
        "{}",
        run.stdout
    );
    // Nothing skipped: the line is as before.
    let run = kvlint_stdin(
        &["check", "--stdin-filename", "empty.sh", "-"],
        Some("echo hello\n"),
    );
    assert!(
        run.stdout.contains("no engine launch found in 1 file\n"),
        "{}",
        run.stdout
    );
}
