//! Kubernetes objects, serving CRDs, Helm values and compose files → launches. The snapshots list,
//! per launch, what a reader of the file would: engine, role, model, TP, context, memory fraction,
//! GPUs; expected values are what the files say.

mod common;
use kvlint::extract::{extract, Extracted};
use kvlint::launch::{Arg, Launch};
use kvlint::source::{Loc, Sources};
use std::fmt::Write;

fn load(path: &str) -> (Sources, Extracted) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut sources = Sources::default();
    let id = sources.add(path, text);
    let out = extract(id, &sources);
    (sources, out)
}

/// The value of the last of `names` given as `--k v` or `--k=v` (underscores read as dashes).
fn flag(args: &[Arg], names: &[&str]) -> Option<String> {
    let mut found = None;
    for (i, a) in args.iter().enumerate() {
        let norm = a.text.replace('_', "-");
        let (name, inline) = norm
            .split_once('=')
            .map_or((norm.as_str(), None), |(n, v)| (n, Some(v)));
        if names.contains(&name) {
            found = inline
                .map(str::to_string)
                .or_else(|| args.get(i + 1).map(|v| v.text.clone()));
        }
    }
    found
}

fn model(l: &Launch) -> Option<String> {
    match l.engine.name() {
        "vllm" => l
            .args
            .first()
            .filter(|a| !a.text.starts_with('-'))
            .map(|a| a.text.clone())
            .or_else(|| flag(&l.args, &["--model"])),
        _ => flag(&l.args, &["--model-path", "--model"]),
    }
}

/// One line per launch, and one per finding.
fn summary(s: &Sources, out: &Extracted) -> String {
    let mut text = String::new();
    for l in &out.launches {
        let (tp, ctx, mem) = match l.engine.name() {
            "vllm" => (
                &["--tensor-parallel-size", "-tp"][..],
                &["--max-model-len"][..],
                &["--gpu-memory-utilization"][..],
            ),
            _ => (
                &["--tp", "--tp-size", "--tensor-parallel-size"][..],
                &["--context-length"][..],
                &["--mem-fraction-static", "--mem-frac"][..],
            ),
        };
        // Keyword arguments (Ray Serve `engine_kwargs`) are options too.
        let kwargs = l.kwargs.iter().flat_map(|k| k.tokens.iter().cloned());
        let args: Vec<_> = l.args.iter().cloned().chain(kwargs).collect();
        let o = l.object.as_ref();
        let p = &l.placement;
        let show = |v: Option<String>| v.unwrap_or_else(|| "-".into());
        let at = s.position(l.command);
        let _ = writeln!(
            text,
            "{}:{} {} {}/{}[{}] role={} model={} tp={} ctx={} mem={} gpus={}x{} gpu={} version={} group={}",
            at.line,
            at.column,
            l.engine.name(),
            show(o.map(|o| o.kind.clone())),
            show(o.map(|o| o.name.clone())),
            show(o.and_then(|o| o.container.clone())),
            show(l.role_hint.clone()),
            show(model(l)),
            show(flag(&args, tp)),
            show(flag(&args, ctx)),
            show(flag(&args, mem)),
            show(p.gpus_per_pod.map(|n| n.to_string())),
            show(p.pods.map(|n| n.to_string())),
            show(p.gpu.as_ref().map(|g| g.0.clone())),
            show(l.engine_version.as_ref().map(|v| v.0.clone())),
            show(l.group.clone()),
        );
    }
    for f in &out.findings {
        let at = f.primary.map(|l| s.position(l));
        let _ = writeln!(
            text,
            "{} at {:?}: {:?}",
            f.rule,
            at.map(|p| (p.line, p.column)),
            f.vars
        );
    }
    text
}

fn arg<'a>(l: &'a Launch, flag: &str) -> &'a Arg {
    let i = l
        .args
        .iter()
        .position(|a| a.text == flag)
        .unwrap_or_else(|| panic!("no {flag}"));
    &l.args[i + 1]
}

fn pos(s: &Sources, loc: Loc) -> (usize, usize, usize, usize) {
    let p = s.position(loc);
    (p.line, p.column, p.end_line, p.end_column)
}

#[test]
fn multi_document_file_with_a_broken_document() {
    let (s, out) = load("fixtures/extract/k8s/multi-doc.yaml");
    insta::assert_snapshot!(summary(&s, &out));
}

#[test]
fn words_inside_a_block_string_point_at_their_bytes() {
    let (s, out) = load("fixtures/extract/k8s/multi-doc.yaml");
    let sts = &out.launches[0];
    // `--tp 8` on line 37, inside the `|` block: `8` at column 44.
    assert_eq!(pos(&s, arg(sts, "--tp").loc), (37, 44, 37, 45));
    // `$(MODEL)` is Kubernetes' expansion from the container env: the value, at the reference.
    let m = arg(sts, "--model-path");
    assert_eq!(
        (m.text.as_str(), s.text(m.loc)),
        ("zai-org/GLM-4.6", "$(MODEL)")
    );
    // `$CTX` is the shell's, which sees the container env exported.
    assert_eq!(arg(sts, "--context-length").text, "131072");
    // RANK comes from the downward API: unknown to Kubernetes, so the shell sees `$(RANK)`, a
    // command substitution, which is unknown too.
    assert_eq!(arg(sts, "--node-rank").unresolved, ["$(RANK)"]);
    assert_eq!(s.text(sts.placement.gpu.as_ref().unwrap().1), "NVIDIA-H200");
    assert_eq!(
        s.text(sts.engine_version.as_ref().unwrap().1),
        "lmsysorg/sglang:v0.5.21-cu129"
    );
}

#[test]
fn exec_form_words_point_at_their_scalars() {
    let (s, out) = load("fixtures/extract/k8s/multi-doc.yaml");
    let lws = &out.launches[1];
    assert_eq!(s.text(lws.args[0].loc), "\"Qwen/Qwen3-32B\"");
    // The image's entrypoint (`vllm serve`) stands at the image.
    assert_eq!(s.text(lws.command), "vllm/vllm-openai:v0.11.0");
}

#[test]
fn compose_services() {
    let (s, out) = load("fixtures/extract/k8s/compose.yaml");
    insta::assert_snapshot!(summary(&s, &out));
    let sglang = &out.launches[0];
    assert_eq!(
        pos(&s, arg(sglang, "--mem-fraction-static").loc),
        (7, 117, 7, 121)
    );
    assert_eq!(arg(sglang, "--context-length").unresolved, ["CTX"]);
}

/// Compose fills the file from the project's `.env` (a nested default, a value using one above
/// it, an image tag); the container's shell reads `environment` and `env_file` (`$$VAR`); a
/// variable the `.env` does not set is unknown, its default (if any) what runs when the shell that
/// runs compose sets nothing, and a whole word of one with none (`${EXTRA_ARGS:-}`) may be any
/// flag (INP004); a required variable set empty makes compose refuse the file (INP001).
#[test]
fn compose_values_come_from_the_project_env() {
    let (s, out) = load("fixtures/extract/compose-env/compose.yaml");
    insta::assert_snapshot!(summary(&s, &out));
    // A value from the `.env` stands where it is referenced.
    let ctx = arg(&out.launches[0], "--context-length");
    assert_eq!(
        (ctx.text.as_str(), s.text(ctx.loc)),
        ("65536", "\"${CTX:-4096}\"")
    );
    // A caller's default: its value, the variable still named (INP004 where the pool needs it).
    let unknown = arg(&out.launches[2], "--max-model-len");
    assert_eq!(
        unknown.unresolved,
        ["UNSET (\"8192\" unless set by the shell that runs compose)"]
    );
    assert_eq!((unknown.text.as_str(), unknown.defaulted), ("8192", true));
    assert_eq!(s.text(unknown.loc), "${UNSET-8192}");
}

#[test]
fn storm_service_and_role_based_group() {
    let (s, out) = load("fixtures/extract/k8s/crds.yaml");
    insta::assert_snapshot!(summary(&s, &out));
}

/// ReplicationController, CronJob, a custom resource's own pod templates (roles from the keys and
/// names above them) and an object it embeds; native sidecars, and the init and ephemeral
/// containers that are no launch.
#[test]
fn every_pod_template_is_read_wherever_it_sits() {
    let (s, out) = load("fixtures/extract/k8s/pod-templates.yaml");
    insta::assert_snapshot!(summary(&s, &out));
}

/// A router leader (the workers' engine spans the worker pods), ranks of one engine (one launch),
/// workers that differ from the leader (two launches), and workers only.
#[test]
fn both_leader_worker_set_templates_are_read() {
    let (s, out) = load("fixtures/extract/k8s/lws-templates.yaml");
    insta::assert_snapshot!(summary(&s, &out));
}

/// KubeAI, KAITO (+ ConfigMap), RayService, RayClusterFleet, llmaz Service and BackendRuntime, an
/// OpenShift Template, a `kind: List`, and a router that is no launch.
#[test]
fn serving_resources_built_by_their_controllers() {
    let (s, out) = load("fixtures/extract/k8s/serving.yaml");
    insta::assert_snapshot!(summary(&s, &out));
    // The KAITO flags are the ConfigMap's, with spans in this file (line 32 is in its data).
    let kaito = arg(&out.launches[1], "--max-model-len");
    assert_eq!((s.text(kaito.loc), pos(&s, kaito.loc).0), ("16384", 32));
    // The Ray Serve engine_kwargs are read out of the serveConfigV2 string (line 61), as
    // keyword arguments.
    let kwarg = out.launches[2]
        .kwargs
        .iter()
        .find(|k| k.key == "max_model_len");
    let ray = &kwarg.expect("max_model_len").tokens[1];
    assert_eq!((s.text(ray.loc), pos(&s, ray.loc).0), ("8192", 61));
}

/// SkyPilot `run:` (rank 0, SkyPilot's variables), an srt-slurm recipe, ai-on-eks chart values.
#[test]
fn skypilot_srt_slurm_and_inference_chart_values() {
    for name in ["skypilot", "srt-slurm", "inference-charts-values"] {
        let (s, out) = load(&format!("fixtures/extract/{name}.yaml"));
        insta::assert_snapshot!(name.replace('-', "_"), summary(&s, &out));
    }
    let (s, out) = load("fixtures/extract/skypilot.yaml");
    // `$SKYPILOT_NUM_GPUS_PER_NODE` is 8 from `accelerators: H100:8`, pointing at its use.
    let tp = arg(&out.launches[0], "--tensor-parallel-size");
    assert_eq!(
        (tp.text.as_str(), s.text(tp.loc)),
        ("8", "$SKYPILOT_NUM_GPUS_PER_NODE")
    );
}

/// `../shared/manifests/` from the repository root; `KVLINT_SHARED` points elsewhere (worktrees).
fn manifest(name: &str) -> String {
    let shared = std::env::var("KVLINT_SHARED").unwrap_or_else(|_| "../shared".into());
    format!("{shared}/manifests/{name}")
}

/// The files in `../shared/manifests/`, one snapshot each.
const MANIFESTS: &[&str] = &[
    "admissionreview-v1-create-deployment-sglang.json",
    "dynamo-dgd-sglang-disagg.yaml",
    "dynamo-dgd-trtllm-configmap.yaml",
    "kserve-llminferenceservice-vllm-pd.yaml",
    "llmd-disaggregatedset-sglang-pd.yaml",
    "ome-clusterservingruntime-sglang-pd.yaml",
    "production-stack-values-vllm-pd.yaml",
    "sglang-deployment.yaml",
    "sglang-lws-pd-decode.yaml",
    "sglang-lws-pd-prefill.yaml",
];

#[test]
#[ignore = "reads ../shared"]
fn shared_manifests() {
    for name in MANIFESTS {
        let (s, out) = load(&manifest(name));
        insta::assert_snapshot!(name.replace('.', "_"), summary(&s, &out));
    }
}

#[test]
#[ignore = "reads ../shared"]
fn shared_manifests_check_without_panics() {
    use kvlint::pipeline::{Options, Outcome};
    let opts = Options {
        gpu: Some(kvlint::gpu::parse_spec("h200").unwrap()),
        ..Options::default()
    };
    for name in MANIFESTS {
        let path = manifest(name);
        let mut outcome = Outcome::default();
        let file = outcome
            .sources
            .add(path.clone(), std::fs::read_to_string(&path).unwrap());
        outcome.check_file(file, &opts, None);
        // Every launch is checked and reported; TRT-LLM (Dynamo's trtllm worker) is not an engine here yet.
        assert_eq!(
            outcome.launches.len(),
            load(&path).1.launches.len(),
            "{name}"
        );
        kvlint::report::render_all(&outcome);
    }
}

/// A real production-stack values file (../shared/platforms: the chart's kv-aware routing test
/// values), read by `platforms/production-stack.toml`: one vLLM launch of `facebook/opt-125m` with
/// the `vllmConfig` the chart renders (maxModelLen 1024, gpuMemoryUtilization 0.8), one GPU per
/// pod. LMCache is on without a `kvRole`: no prefill or decode half.
#[test]
#[ignore = "reads ../shared"]
fn production_stack_values_of_the_charts_own_tests() {
    let shared = std::env::var("KVLINT_SHARED").unwrap_or_else(|_| "../shared".into());
    let (_, out) = load(&format!(
        "{shared}/platforms/production-stack-values-kvaware.yaml"
    ));
    assert_eq!(out.launches.len(), 1, "{:?}", out.findings);
    let l = &out.launches[0];
    assert_eq!(l.engine.name(), "vllm");
    assert_eq!(model(l).as_deref(), Some("facebook/opt-125m"));
    assert_eq!(flag(&l.args, &["--max-model-len"]).as_deref(), Some("1024"));
    assert_eq!(
        flag(&l.args, &["--gpu-memory-utilization"]).as_deref(),
        Some("0.8")
    );
    assert_eq!(l.placement.gpus_per_pod, Some(1));
    assert_eq!(l.role_hint, None);
    assert_eq!(l.object.as_ref().map(|o| o.name.as_str()), Some("opt125m"));
}

/// A container whose command runs a script that a ConfigMap of the input mounts is read as that
/// script, at its place in the manifest, and placed as the container is; a command path no
/// ConfigMap provides stays unread.
#[test]
fn a_script_a_configmap_mounts_is_the_containers_launch() {
    let path = "fixtures/extract/k8s/configmap-entrypoint.yaml";
    let (sources, out) = load(path);
    assert_eq!(out.launches.len(), 1, "{:#?}", out.findings);
    let l = &out.launches[0];
    assert_eq!(l.engine.name(), "trtllm");
    assert_eq!(l.object.as_ref().unwrap().kind, "Deployment");
    assert_eq!(l.placement.gpus_per_pod, Some(2));
    assert!(l.placement.gpu.as_ref().unwrap().0.contains("l4"));
    let src = sources.get(l.command.file);
    assert!(src.text[l.command.start..l.command.end].contains("launch_triton_server.py"));
    // Two ranks: TP and PP are the engine's split, values kvlint does not see.
    let tp = l.args.iter().position(|a| a.text == "--tp_size").unwrap();
    assert!(!l.args[tp + 1].unresolved.is_empty());
    let text = std::fs::read_to_string(path).unwrap();
    let other = text.replace(
        "configMap:\n          name: triton-entrypoint",
        "configMap:\n          name: another",
    );
    let mut sources = Sources::default();
    let id = sources.add(path, other);
    assert!(extract(id, &sources).launches.is_empty());
}

#[test]
fn images_named_for_an_engine_run_its_server_for_engine_options() {
    let (s, out) = load("fixtures/extract/k8s/engine-named-images.yaml");
    let got: Vec<_> = out
        .launches
        .iter()
        .map(|l| {
            let o = l.object.as_ref().unwrap();
            (l.engine.name(), o.name.as_str(), s.text(l.command))
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                "vllm",
                "vllm-runtime",
                "quay.io/opendatahub/vllm:fast-nightly-2024-05-01"
            ),
            (
                "trtllm",
                "trtllm",
                "nvcr.io/nvidia/tensorrt-llm/release:1.0.0"
            ),
            // A command in `args` runs as written, not under `vllm serve`.
            ("vllm", "rocm-command", "\"vllm\", \"serve\""),
        ]
    );
    let runtime = &out.launches[0];
    assert_eq!(runtime.args[0].text, "--model=/mnt/models/");
    assert_eq!(runtime.args[2].text, "--tensor-parallel-size=2");
    // The tag of an image that is not the engine's own names no engine release.
    assert_eq!(runtime.engine_version, None);
    assert_eq!(arg(&out.launches[1], "--tp_size").text, "4");
    assert_eq!(model(&out.launches[2]).as_deref(), Some("Qwen/Qwen3-8B"));
    // Routers, simulators, mocks and the runtimes that wrap an engine are no launch.
    assert!(out
        .launches
        .iter()
        .all(|l| l.object.as_ref().unwrap().name != "tools"));
}

#[test]
fn a_compose_image_named_for_an_engine_behind_a_registry_variable() {
    let (s, out) = load("fixtures/extract/k8s/compose-engine-image.yaml");
    let got: Vec<_> = out
        .launches
        .iter()
        .map(|l| (l.engine.name(), s.text(l.command)))
        .collect();
    assert_eq!(
        got,
        [
            ("vllm", "${REGISTRY:-opea}/vllm-rocm:${TAG:-latest}"),
            ("sglang", "lmsysorg/sglang:v0.5.4-rocm630"),
        ]
    );
    assert_eq!(arg(&out.launches[0], "--tensor-parallel-size").text, "4");
    assert_eq!(arg(&out.launches[1], "--tp").text, "2");
}

/// A container that gives only `args` to an image that names no engine (`${VLLM_IMAGE}`, a
/// site's own build) runs them with the image's entrypoint: where they are options and some of
/// them only one engine takes, that engine's server is read, and INP004 at the image says the
/// engine was told by its flags and the image is not known (deny: never a silent pass). Flags
/// several engines take, flags of two engines, a leading script and a tool's image tell nothing.
#[test]
fn an_unknown_image_runs_the_engine_its_flags_alone_name() {
    let (s, out) = load("fixtures/extract/k8s/flags-unknown-image.yaml");
    let got: Vec<_> = out
        .launches
        .iter()
        .map(|l| {
            let o = l.object.as_ref().unwrap();
            (l.engine.name(), o.name.as_str(), s.text(l.command))
        })
        .collect();
    assert_eq!(
        got,
        [
            ("vllm", "envsubst", "${VLLM_IMAGE}"),
            ("sglang", "own-image", "registry.example.com/ml/serving:2.3"),
            ("trtllm", "trtllm-flags", "${TRTLLM_IMAGE}"),
        ]
    );
    let told: Vec<_> = out
        .findings
        .iter()
        .filter(|f| f.rule == "INP004" && f.get("flag").unwrap_or("").contains("by its flags"))
        .map(|f| (s.text(f.primary.unwrap()), f.get("vars").unwrap_or("")))
        .collect();
    assert_eq!(
        told,
        [
            ("${VLLM_IMAGE}", "the image `${VLLM_IMAGE}`"),
            (
                "registry.example.com/ml/serving:2.3",
                "the entrypoint of the image `registry.example.com/ml/serving:2.3`"
            ),
            ("${TRTLLM_IMAGE}", "the image `${TRTLLM_IMAGE}`"),
        ]
    );
    let vllm = &out.launches[0];
    assert!(s.text(vllm.command).starts_with("${"));
    // The flags that told: vLLM's alone, never `--model` or `--tensor-parallel-size`.
    let flags = out.findings.iter().find_map(|f| f.get("flag")).unwrap();
    assert!(
        flags.contains("--max-model-len, --gpu-memory-utilization"),
        "{flags}"
    );
    assert!(!flags.contains("--tensor-parallel-size"), "{flags}");
    // An image that is a placeholder makes the manifest a template: its `${NAME}` are unknown.
    assert_eq!(arg(vllm, "--model").unresolved, ["VLLM_MODEL"]);
    assert_eq!(
        arg(vllm, "--tensor-parallel-size").unresolved,
        ["VLLM_GPU_COUNT"]
    );
    assert!(arg(&out.launches[1], "--tp").unresolved.is_empty());
    // `--max_seq_len` abbreviates an option of older vLLM releases: only `--tp_size` told.
    let trt = out
        .findings
        .iter()
        .filter_map(|f| f.get("flag"))
        .nth(2)
        .unwrap();
    assert!(trt.contains("TensorRT-LLM: --tp_size;"), "{trt}");
    // What tells nothing is still said (INP006), once, at the first container of its object.
    let unread: Vec<_> = out.findings.iter().filter(|f| f.rule == "INP006").collect();
    assert_eq!(unread.len(), 1, "{unread:?}");
    let line = s.position(unread[0].primary.unwrap()).line;
    assert_eq!(line, 68);

    let (s, out) = load("fixtures/extract/k8s/compose-flags-unknown-image.yaml");
    let got: Vec<_> = out
        .launches
        .iter()
        .map(|l| (l.engine.name(), s.text(l.command)))
        .collect();
    assert_eq!(got, [("vllm", "${LLM_IMAGE}")]);
    assert!(out
        .findings
        .iter()
        .any(|f| f.rule == "INP004" && f.get("vars") == Some("the image `${LLM_IMAGE}`")));
}

/// A compose default is what runs when the shell that runs compose sets nothing: the JSON launch
/// lists it (model, TP, context, as a reader of the file lists them) and the pool is planned with
/// it, but the caller decides (INP004 at each, deny): the verdict stays refused. A default that is
/// empty (`${EXTRA_ARGS:-}`: no word, or any words) or itself unknown is none.
#[test]
fn a_compose_default_is_listed_and_planned_but_the_caller_still_decides() {
    let path = "fixtures/extract/compose-defaults/compose.yaml";
    let run = common::kvlint(&["check", "--gpu", "h100-80gb", "--format", "json", path]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json report");
    let launches: Vec<(u64, &str, u64, Option<u64>, &str)> = doc["launches"]
        .as_array()
        .expect("launches")
        .iter()
        .map(|l| {
            (
                l["line"].as_u64().unwrap(),
                l["model"].as_str().unwrap(),
                l["tp"].as_u64().unwrap_or(0),
                l["context_length"].as_u64(),
                l["verdict"].as_str().unwrap(),
            )
        })
        .collect();
    let qwen = "Qwen/Qwen3-8B";
    assert_eq!(
        launches,
        [
            (5, qwen, 2, Some(32768), "refused"),
            // `environment` reaches the engine through the container's shell (`$$MAXLEN`).
            (17, qwen, 1, Some(16384), "refused"),
            (28, qwen, 1, Some(8192), "refused"),
            (32, qwen, 1, None, "refused"),
            // A default beside an unknown with none, in a script a shell reads again: none.
            (39, qwen, 1, None, "refused"),
        ]
    );
    let inp004: Vec<(u64, String)> = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            assert_eq!(f["rule"], "INP004", "{f}");
            (
                f["line"].as_u64().unwrap(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let lines: Vec<u64> = inp004.iter().map(|(l, _)| *l).collect();
    assert_eq!(lines, [6, 6, 6, 17, 17, 29, 29, 33, 33, 39], "{inp004:?}");
    assert!(inp004[1]
        .1
        .contains("CTX (\"32768\" unless set by the shell that runs compose)"));
    // A whole word of a variable may be any flag, with a default or an empty one.
    assert!(inp004[5].1.starts_with("what `$EXTRA_ARGS` adds"));
    assert!(inp004[6].1.starts_with("what `$MORE` adds"));
    assert!(inp004[7].1.starts_with("--max-model-len is set from CTX,"));
    let human = common::kvlint(&["check", "--gpu", "h100-80gb", path]);
    assert!(human
        .stdout
        .contains("planned with 32768, what runs when the caller sets nothing"));
    assert!(human.stdout.contains("no plan (see findings): refused"));

    // The rule's fixture: one context default, planned with, refused.
    let run = common::kvlint(&[
        "check",
        "--format",
        "json",
        "fixtures/INP004/fire-compose-default",
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json report");
    let launch = &doc["launches"][0];
    assert_eq!(
        (
            &launch["model"],
            &launch["context_length"],
            &launch["verdict"]
        ),
        (
            &serde_json::json!("Qwen/Qwen3-8B"),
            &serde_json::json!(32768),
            &serde_json::json!("refused")
        )
    );
}
