//! KServe InferenceService with its ServingRuntime (`platforms/kserve-runtime-ref.toml`): one
//! launch, the runtime's `kserve-container` with the InferenceService's `model` merged over it as
//! KServe's predictor reconciler does, each value at its place in either document; without the
//! runtime, INP006 as before. Expected values are what the fixtures say, read as KServe reads them.

mod common;

use common::kvlint;
use kvlint::extract::{extract, Extracted};
use kvlint::launch::{Arg, Launch};
use kvlint::source::Sources;

const DIR: &str = "fixtures/platforms/kserve-runtime-ref";

fn load(name: &str, text: &str) -> (Sources, Extracted) {
    let mut sources = Sources::default();
    let id = sources.add(name, text);
    let out = extract(id, &sources);
    (sources, out)
}

fn read(name: &str) -> String {
    let path = format!("{DIR}/{name}");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn fixture(name: &str) -> (Sources, Extracted) {
    load(&format!("{DIR}/{name}"), &read(name))
}

fn texts(l: &Launch) -> Vec<&str> {
    l.args.iter().map(|a| a.text.as_str()).collect()
}

fn arg<'l>(l: &'l Launch, text: &str) -> &'l Arg {
    let found = l.args.iter().find(|a| a.text == text);
    found.unwrap_or_else(|| panic!("no {text} in {:?}", texts(l)))
}

/// The one launch of the InferenceService (the runtime is not read again on its own).
fn isvc(out: &Extracted) -> &Launch {
    let of = |l: &&Launch| {
        l.object
            .as_ref()
            .is_some_and(|o| o.kind == "InferenceService")
    };
    let mut found = out.launches.iter().filter(of);
    let l = found
        .next()
        .unwrap_or_else(|| panic!("{:#?}", out.findings));
    assert!(found.next().is_none(), "one InferenceService launch");
    l
}

fn check_json(args: &[&str]) -> (i32, serde_json::Value) {
    let run = kvlint(args);
    let doc = serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr));
    (run.code, doc)
}

#[test]
fn the_runtime_and_its_inferenceservice_are_one_launch_with_the_args_appended() {
    let (s, out) = fixture("fire-with-runtime.yaml");
    assert_eq!(out.launches.len(), 1, "the runtime is not read alone");
    let l = isvc(&out);
    // MergeRuntimeContainers: the runtime's args, then the InferenceService's; `{{.Name}}` is the
    // InferenceService's name; /mnt/models holds the model `storageUri` names.
    assert_eq!(
        texts(l),
        [
            "--port=8080",
            "--model=meta-llama/Llama-3.1-8B-Instruct",
            "--served-model-name=llama-8b",
            "--max-model-len=131072",
            "--gpu-memory-utilization=0.9",
        ]
    );
    assert_eq!(
        s.text(l.command),
        r#""python", "-m", "vllm.entrypoints.openai.api_server""#
    );
    // Each value where it is written: the model at `storageUri`, the rest in either document.
    let model = arg(l, "--model=meta-llama/Llama-3.1-8B-Instruct");
    assert_eq!(s.text(model.loc), "hf://meta-llama/Llama-3.1-8B-Instruct");
    assert_eq!(
        s.text(arg(l, "--served-model-name=llama-8b").loc),
        "--served-model-name={{.Name}}"
    );
    assert_eq!(
        s.text(arg(l, "--max-model-len=131072").loc),
        "--max-model-len=131072"
    );
    assert!(l.args.iter().all(|a| a.unresolved.is_empty()));
    // The GPU from the predictor's node selector, the count from the merged resources.
    let (gpu, at) = l.placement.gpu.as_ref().expect("a GPU");
    assert_eq!((gpu.as_str(), s.text(*at)), ("NVIDIA-L4", "NVIDIA-L4"));
    assert_eq!(l.placement.gpus_per_pod, Some(1));
    assert_eq!(
        l.placement.image.as_ref().unwrap().0,
        "vllm/vllm-openai:v0.11.0"
    );
}

/// The verdict's findings point at the InferenceService's lines that set what is refused.
#[test]
fn a_context_the_runtime_cannot_hold_is_refused_at_the_inferenceservice_arg() {
    let path = format!("{DIR}/fire-with-runtime.yaml");
    let (code, doc) = check_json(&[
        "check",
        "--format",
        "json",
        "--engine-version",
        "vllm=0.11.0",
        &path,
    ]);
    assert_eq!(code, 1);
    assert_eq!(common::rules(&doc), ["KV001"]);
    let line = read("fire-with-runtime.yaml")
        .lines()
        .position(|l| l.contains("--max-model-len=131072"))
        .unwrap()
        + 1;
    assert_eq!(doc["findings"][0]["line"], line);
    assert_eq!(doc["launches"][0]["object"]["kind"], "InferenceService");
}

/// Unnamed, the runtime is the one of highest priority that lists the format with `autoSelect`
/// (`GetSupportingRuntimes`), found in a `kubectl` List; `runtimeVersion` is its image's tag,
/// `env` merges by name, the resources' GPU count is the InferenceService's.
#[test]
fn autoselect_takes_the_runtime_of_highest_priority() {
    let (s, out) = fixture("fire-autoselect-cluster-runtime-list.yaml");
    let l = isvc(&out);
    assert_eq!(
        texts(l),
        [
            "--port=8080",
            "--model=Qwen/Qwen2.5-32B-Instruct",
            "--served-model-name=qwen-32b",
            "--tensor-parallel-size=2",
            "--max-model-len=65536",
        ]
    );
    // `hf://owner/model:revision`: the revision is not part of the model's name.
    let (image, at) = l.placement.image.as_ref().unwrap();
    assert_eq!(
        (image.as_str(), s.text(*at)),
        ("vllm/vllm-openai:v0.11.0", "v0.11.0")
    );
    assert_eq!(l.placement.gpus_per_pod, Some(2));
    let env: Vec<(&str, &str)> = l
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.text.as_str()))
        .collect();
    assert!(env.contains(&("VLLM_LOGGING_LEVEL", "DEBUG")), "{env:?}");
    // The runtime of lower priority is not this InferenceService's.
    assert!(!texts(l).contains(&"4096"));
}

/// A model in S3 (or a PVC, an OCI image) is whatever the bucket holds: the runtime's
/// `/mnt/models` stays, a model kvlint does not know (INP002 there), never a guess.
#[test]
fn a_model_kvlint_cannot_read_is_unknown_at_the_runtime_model_flag() {
    let path = format!("{DIR}/fire-s3-model-helm-template.yaml");
    let (code, doc) = check_json(&["check", "--format", "json", &path]);
    assert_eq!(code, 1);
    let f = doc["findings"].as_array().unwrap();
    let inp002: Vec<_> = f.iter().filter(|f| f["rule"] == "INP002").collect();
    assert_eq!(inp002.len(), 1, "{f:#?}");
    let text = read("fire-s3-model-helm-template.yaml");
    let line = text
        .lines()
        .position(|l| l.trim() == "- /mnt/models")
        .unwrap()
        + 1;
    assert_eq!(inp002[0]["line"], line);
    // The InferenceService's `--max-model-len` comes after the runtime's: the engine takes it.
    assert_eq!(doc["launches"][0]["context_length"], 16384);
}

/// The NIM runtime's container runs its image, configured by env: the InferenceService's env
/// merges over it by name, so its NIM_MAX_MODEL_LEN is the one read.
#[test]
fn a_nim_runtime_reads_the_merged_env() {
    let (_, out) = fixture("with-nim-runtime.yaml");
    assert_eq!(out.launches.len(), 1, "{:#?}", out.findings);
    let l = &out.launches[0];
    assert_eq!(l.object.as_ref().unwrap().name, "llama-8b");
    let len = l
        .args
        .iter()
        .position(|a| a.text == "--max-model-len")
        .map(|i| l.args[i + 1].text.as_str());
    assert_eq!(len, Some("16384"), "{:?}", texts(l));
}

/// Without its runtime, the InferenceService is INP006 at `model.runtime` and no launch, as
/// before; a runtime in another file of the run is named in the help.
#[test]
fn without_its_runtime_it_is_refused_and_a_runtime_elsewhere_in_the_run_is_named() {
    let (s, out) = fixture("fire-vllm-format.yaml");
    assert!(out.launches.is_empty());
    let said: Vec<(&str, &str)> = out
        .findings
        .iter()
        .map(|f| (f.rule, s.text(f.primary.unwrap())))
        .collect();
    assert_eq!(said, [("INP006", "vllm-cuda-runtime")]);
    let text = read("fire-with-runtime.yaml");
    let (runtime, service) = text.split_once("\n---\n").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (r, i) = (
        dir.path().join("runtime.yaml"),
        dir.path().join("isvc.yaml"),
    );
    std::fs::write(&r, runtime).unwrap();
    std::fs::write(&i, service).unwrap();
    let (r, i) = (r.to_str().unwrap(), i.to_str().unwrap());
    let (code, doc) = check_json(&["check", "--format", "json", r, i]);
    assert_eq!(code, 1);
    let helps: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "INP006" && f["file"].as_str() == Some(i))
        .map(|f| f["help"].as_str().unwrap())
        .collect();
    let want = format!(
        "the ServingRuntime `vllm-cuda-runtime` is in {r}, another file of this run; kvlint reads \
         it with the resource that names it only from one file or stream: `cat {r} {i} | kvlint \
         check -`"
    );
    assert_eq!(helps, [want.as_str()]);
}

/// What KServe refuses to render is no launch of the InferenceService: a named runtime that does
/// not list its format or is disabled, two autoSelect runtimes kvlint cannot order, a runtime
/// without `kserve-container`. Each is INP006 naming why.
#[test]
fn a_runtime_kserve_would_not_use_gives_no_launch() {
    let text = read("fire-with-runtime.yaml");
    let cases = [
        (
            text.replace("    - name: vLLM\n", "    - name: pytorch\n"),
            "does not support `vLLM`",
        ),
        (
            text.replace("  multiModel: false\n", "  disabled: true\n"),
            "is disabled",
        ),
        (
            text.replace("name: kserve-container", "name: main"),
            "no container named `kserve-container`",
        ),
        (
            {
                let (runtime, service) = text.split_once("\n---\n").unwrap();
                let other = runtime.replace("name: vllm-cuda-runtime", "name: vllm-other");
                let service = service.replace("      runtime: vllm-cuda-runtime\n", "");
                format!("{runtime}\n---\n{other}\n---\n{service}")
            },
            "at the same priority",
        ),
    ];
    for (input, why) in cases {
        let (_, out) = load("isvc.yaml", &input);
        let of_isvc = out.launches.iter().filter(|l| {
            l.object
                .as_ref()
                .is_some_and(|o| o.kind == "InferenceService")
        });
        assert_eq!(of_isvc.count(), 0, "{why}");
        let reasons: Vec<&str> = out
            .findings
            .iter()
            .filter(|f| f.rule == "INP006")
            .filter_map(|f| f.get("reason"))
            .collect();
        assert!(
            reasons.iter().any(|r| r.contains(why)),
            "{why}: {reasons:#?}"
        );
    }
}
