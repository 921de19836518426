//! Launches grouped into deployments: prefill/decode pairs in one object, across objects and
//! files, and in one script; the deployment rules that need the grouping; the `deployments` JSON.

mod common;

use common::{kvlint, kvlint_stdin};
use kvlint::capacity::Role;
use kvlint::deployment::Deployment;
use kvlint::pipeline::{Options, Outcome};

/// Checks files given as `(name, text)` in one run, as `kvlint check A B` does.
fn run(files: &[(&str, &str)]) -> Outcome {
    let mut out = Outcome::default();
    for (name, text) in files {
        let id = out.sources.add(*name, *text);
        out.check_file(id, &Options::default(), None);
    }
    out.finish(1);
    out
}

fn read(path: &str) -> (String, String) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    (path.to_string(), text)
}

fn run_paths(paths: &[String]) -> Outcome {
    let files: Vec<(String, String)> = paths.iter().map(|p| read(p)).collect();
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    run(&refs)
}

/// `(prefill count, decode count, unified count)` of a deployment.
fn shape(d: &Deployment) -> (usize, usize, usize) {
    let n = |r| d.with_role(r).count();
    (n(Role::Prefill), n(Role::Decode), n(Role::Unified))
}

fn deployment(prefill: &str, decode: &str) -> String {
    let server = |name: &str, role: &str, model: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}, namespace: llm}}\n\
             spec:\n  template:\n    spec:\n      containers:\n        - name: engine\n          \
             command: [python3, -m, sglang.launch_server, --model-path, {model}, --disaggregation-mode, {role}]\n"
        )
    };
    let (pn, pm) = prefill.split_once('=').unwrap();
    let (dn, dm) = decode.split_once('=').unwrap();
    format!(
        "{}---\n{}",
        server(pn, "prefill", pm),
        server(dn, "decode", dm)
    )
}

#[test]
fn halves_in_separate_objects_pair_by_name() {
    let out = run(&[(
        "pd.yaml",
        &deployment("chat-prefill=Qwen/Qwen3-8B", "chat-decode=Qwen/Qwen3-32B"),
    )]);
    assert_eq!(out.deployments.len(), 1);
    let d = &out.deployments[0];
    assert_eq!(
        d.id,
        "Deployment/llm/chat-prefill + Deployment/llm/chat-decode"
    );
    assert!(d.is_pd_pair());
    let rules: Vec<&str> = out.findings.iter().map(|f| f.rule).collect();
    assert!(rules.contains(&"PD004"), "{rules:?}");
}

#[test]
fn halves_with_unrelated_names_pair_by_their_one_shared_model() {
    let out = run(&[(
        "pd.yaml",
        &deployment("alpha=Qwen/Qwen3-8B", "omega=Qwen/Qwen3-8B"),
    )]);
    assert_eq!(out.deployments.len(), 1);
    assert_eq!(shape(&out.deployments[0]), (1, 1, 0));
}

#[test]
fn two_decode_candidates_for_one_model_are_not_guessed() {
    let two = deployment("alpha=Qwen/Qwen3-8B", "omega=Qwen/Qwen3-8B");
    let other = deployment("beta=Qwen/Qwen3-32B", "gamma=Qwen/Qwen3-8B");
    let out = run(&[("a.yaml", &two), ("b.yaml", &other)]);
    let pairs = out.deployments.iter().filter(|d| d.is_pd_pair()).count();
    assert_eq!(pairs, 0, "{:?}", out.deployments);
}

#[test]
fn halves_of_different_namespaces_do_not_pair() {
    let text = deployment("chat-prefill=Qwen/Qwen3-8B", "chat-decode=Qwen/Qwen3-8B");
    let moved = text.replacen("namespace: llm}", "namespace: other}", 1);
    let out = run(&[("pd.yaml", &moved)]);
    assert_eq!(out.deployments.len(), 2, "{:?}", out.deployments);
    assert!(!out.deployments.iter().any(Deployment::is_pd_pair));
}

#[test]
fn one_script_with_both_halves_is_one_pair() {
    let out = run_paths(&["fixtures/extract/pd-disagg.sh".to_string()]);
    assert_eq!(out.deployments.len(), 1);
    assert_eq!(shape(&out.deployments[0]), (1, 1, 0));
    assert!(
        !out.findings.iter().any(|f| f.rule == "GPU001"),
        "GPUs 0-3 and 4-7 are disjoint"
    );
}

#[test]
fn a_unified_server_is_no_pair() {
    let out = run(&[(
        "s.sh",
        "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B\n",
    )]);
    assert_eq!(out.deployments.len(), 1);
    assert_eq!(shape(&out.deployments[0]), (0, 0, 1));
    assert!(!out.deployments[0].is_pd_pair());
}

#[test]
fn engine_settings_decide_the_role_and_kv_both_falls_back_to_the_object() {
    let script = "vllm serve Qwen/Qwen3-8B --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_producer\"}'\n\
                  vllm serve Qwen/Qwen3-8B --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\"}'\n";
    let out = run(&[("v.sh", script)]);
    assert_eq!(shape(&out.deployments[0]), (1, 0, 1));
}

#[test]
fn check_json_lists_deployments_with_role_indices() {
    let run = kvlint(&[
        "check",
        "--format",
        "json",
        "fixtures/PD001/pass-same-context.yaml",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(
        doc["deployments"],
        serde_json::json!([{
            "id": "Deployment/llm/qwen-prefill + Deployment/llm/qwen-decode",
            "pd_pair": true,
            "roles": {"prefill": [0], "decode": [1]},
        }])
    );
}

#[test]
fn pd_findings_point_at_both_halves() {
    let run = kvlint(&[
        "check",
        "--format",
        "json",
        "fixtures/PD002/fire-page-size.yaml",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let f = &doc["findings"][0];
    assert_eq!(f["rule"], "PD002");
    assert_eq!(
        f["message"],
        "prefill uses KV pages of 64 tokens, decode 16"
    );
    assert_eq!(f["object"]["name"], "qwen-prefill");
    let human = kvlint(&["check", "fixtures/PD002/fire-page-size.yaml"]).stdout;
    assert!(
        human.contains("prefill: 64") && human.contains("decode: 16"),
        "{human}"
    );
}

#[test]
fn repeated_option_warns_but_repeatable_and_config_overrides_do_not() {
    let twice = kvlint_stdin(
        &["check", "--format", "json", "-"],
        Some("python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2 --tp-size 4\n"),
    );
    assert!(twice.stdout.contains("\"CFG003\""), "{}", twice.stdout);
    let append = kvlint_stdin(
        &["check", "--format", "json", "-"],
        Some("vllm serve Qwen/Qwen3-8B --middleware a.B --middleware c.D\n"),
    );
    assert!(!append.stdout.contains("\"CFG003\""), "{}", append.stdout);
    let dir = std::env::temp_dir().join(format!("kvlint-cfg003-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("c.yaml"), "context-length: 8192\n").unwrap();
    let script = dir.join("run.sh");
    std::fs::write(
        &script,
        "python3 -m sglang.launch_server --config c.yaml --model-path Qwen/Qwen3-8B --context-length 4096\n",
    )
    .unwrap();
    let over = kvlint(&["check", "--format", "json", script.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert!(!over.stdout.contains("\"CFG003\""), "{}", over.stdout);
}

/// `../shared/manifests/` from the repository root; `KVLINT_SHARED` points elsewhere (worktrees).
fn manifest(name: &str) -> String {
    let shared = std::env::var("KVLINT_SHARED").unwrap_or_else(|_| "../shared".into());
    format!("{shared}/manifests/{name}")
}

#[test]
#[ignore = "reads ../shared"]
fn shared_manifests_hold_one_pd_pair_each() {
    for name in [
        "llmd-disaggregatedset-sglang-pd.yaml",
        "dynamo-dgd-sglang-disagg.yaml",
        "ome-clusterservingruntime-sglang-pd.yaml",
        "kserve-llminferenceservice-vllm-pd.yaml",
        "production-stack-values-vllm-pd.yaml",
    ] {
        let out = run_paths(&[manifest(name)]);
        assert_eq!(out.deployments.len(), 1, "{name}: {:?}", out.deployments);
        assert_eq!(shape(&out.deployments[0]), (1, 1, 0), "{name}");
    }
}

#[test]
#[ignore = "reads ../shared"]
fn lws_halves_in_two_files_are_one_pair() {
    let out = run_paths(&[
        manifest("sglang-lws-pd-prefill.yaml"),
        manifest("sglang-lws-pd-decode.yaml"),
    ]);
    assert_eq!(out.deployments.len(), 1, "{:?}", out.deployments);
    let d = &out.deployments[0];
    assert_eq!(
        d.id,
        "LeaderWorkerSet/deepseekr10528-prefill-main + LeaderWorkerSet/deepseekr10528-decode-main"
    );
    assert_eq!(shape(d), (1, 1, 0));
    // Same --page-size 64, --context-length 32768, model path; TP 16 written as --tp and --tp-size.
    let pd: Vec<&str> = out
        .findings
        .iter()
        .map(|f| f.rule)
        .filter(|r| r.starts_with("PD"))
        .collect();
    assert!(pd.is_empty(), "{pd:?}");
    // 8 GPUs × 2 pods = TP 16 with DP attention on both halves.
    assert!(!out.findings.iter().any(|f| f.rule == "PAR002"));
}

#[test]
#[ignore = "reads ../shared"]
fn ome_runtime_on_sglang_0_5_5_is_vulnerable() {
    let out = run_paths(&[manifest("ome-clusterservingruntime-sglang-pd.yaml")]);
    let ver = out.findings.iter().filter(|f| f.rule == "VER001").count();
    assert_eq!(ver, 2, "both halves run an image tagged v0.5.5.post3");
}
