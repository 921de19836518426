//! Serving platforms read as data (NIM, Triton, DJL Serving, Baseten Truss, llm-d modelservice,
//! `trtllm-serve disaggregated`) on real files of other projects (`../shared/platforms`): the
//! launches a careful reader of each file lists, and a value the platform leaves as a template
//! placeholder said where it stands (INP004), never guessed.

mod common;

use common::{kvlint, root};
use serde_json::Value;
use std::path::Path;

fn check(path: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["check", "--format", "json"];
    args.extend(extra);
    let p = path.to_string_lossy().into_owned();
    args.push(&p);
    let run = kvlint(&args);
    assert!(
        run.code == 0 || run.code == 1,
        "{p}: exit {}\n{}",
        run.code,
        run.stderr
    );
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{p}: {e}"))
}

/// `engine= role= tp= context= model= gpu=` of each launch, `-` for null.
fn listed(doc: &Value) -> Vec<String> {
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
                text(&l["gpu"]),
            )
        })
        .collect()
}

/// The text a finding points at, from its line and columns (1-based, one line).
fn pointed(path: &Path, f: &Value) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let line = f["line"].as_u64().unwrap() as usize;
    let (start, end) = (
        f["column"].as_u64().unwrap() as usize,
        f["end_column"].as_u64().unwrap() as usize,
    );
    let l = text.lines().nth(line - 1).unwrap();
    l.chars().skip(start - 1).take(end - start).collect()
}

fn of_rule<'d>(doc: &'d Value, rule: &str) -> Vec<&'d Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

fn shared(name: &str) -> std::path::PathBuf {
    root().join("../shared/platforms").join(name)
}

#[test]
#[ignore = "reads ../shared"]
fn launches_of_serving_platform_files() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "triton-vllm-llama2/model.json",
            &["--gpu", "h100"],
            // No max_model_len: the context is the model's own (Llama-2: 4096).
            &["engine=vllm role=unified tp=1 context=4096 model=meta-llama/Llama-2-7b-hf gpu=H100-80GB"],
        ),
        (
            "triton-vllm-eagle/model.json",
            &["--gpu", "h100"],
            &["engine=vllm role=unified tp=1 context=- model=/hf-models/Meta-Llama-3-8B-Instruct gpu=H100-80GB"],
        ),
        (
            "trtllm-disagg-glm5-nvfp4.yaml",
            &["--gpu", "b200"],
            &[
                "engine=trtllm role=prefill tp=4 context=8232 model=GLM-5-NVFP4 gpu=B200",
                "engine=trtllm role=decode tp=4 context=10240 model=GLM-5-NVFP4 gpu=B200",
            ],
        ),
        (
            "trtllm-disagg-dsv3-lite-mtp.yaml",
            &["--gpu", "h100"],
            &[
                "engine=trtllm role=prefill tp=2 context=- model=DeepSeek-V3-Lite/fp8 gpu=H100-80GB",
                "engine=trtllm role=decode tp=2 context=- model=DeepSeek-V3-Lite/fp8 gpu=H100-80GB",
            ],
        ),
        (
            "llmd-ms-values-pd-vllm.yaml",
            &["--gpu", "h100"],
            &[
                "engine=vllm role=prefill tp=1 context=32000 model=openai/gpt-oss-120b gpu=H100-80GB",
                "engine=vllm role=decode tp=4 context=32000 model=openai/gpt-oss-120b gpu=H100-80GB",
            ],
        ),
        (
            "llmd-ms-values-pd-sglang.yaml",
            &["--gpu", "h100"],
            &[
                "engine=sglang role=prefill tp=1 context=32000 model=Qwen/Qwen3-14B gpu=H100-80GB",
                "engine=sglang role=decode tp=4 context=32000 model=Qwen/Qwen3-14B gpu=H100-80GB",
            ],
        ),
        (
            "truss-config-vllm-glm5.yaml",
            &[],
            // The weights are mounted at /models/GLM-5-FP8; B200:8 names the GPU and its count.
            &["engine=vllm role=unified tp=8 context=- model=/models/GLM-5-FP8 gpu=B200"],
        ),
        (
            "truss-config-trtllm-qwen3-235b.yaml",
            &[],
            &["engine=trtllm role=unified tp=8 context=262144 model=Qwen/Qwen3-235B-A22B-Instruct-2507-FP8 gpu=H100-80GB"],
        ),
        (
            "nvidia-rag-values-nim-llm-vllm.yaml",
            &["--gpu", "h100"],
            // The model is the NIM image's; kvlint resolves it only through kvlint.toml [models].
            &["engine=vllm role=unified tp=2 context=131072 model=nvcr.io/nim/nvidia/nemotron-3-super-120b-a12b gpu=H100-80GB"],
        ),
    ];
    for (file, extra, want) in cases {
        let doc = check(&shared(file), extra);
        assert_eq!(listed(&doc), *want, "{file}");
    }
}

/// Triton's repository templates leave `${engine_dir}` for tools/fill_template.py: the engine
/// directory (the model) is a value kvlint cannot see, said at the placeholder. Its parallel
/// layout is the prebuilt engine's, so no TP is listed.
#[test]
#[ignore = "reads ../shared"]
fn triton_placeholders_are_unresolved_values_at_their_place() {
    for file in [
        "triton-trtllm-llava/config.pbtxt",
        "triton-trtllm-gpt-python/config.pbtxt",
    ] {
        let path = shared(file);
        let doc = check(&path, &["--gpu", "h100"]);
        assert_eq!(
            listed(&doc),
            ["engine=trtllm role=unified tp=- context=- model=- gpu=H100-80GB"],
            "{file}"
        );
        let unresolved = of_rule(&doc, "INP004");
        assert_eq!(unresolved.len(), 1, "{file}: {unresolved:#?}");
        assert!(unresolved[0]["message"]
            .as_str()
            .unwrap()
            .contains("engine_dir"));
        assert_eq!(pointed(&path, unresolved[0]), "${engine_dir}", "{file}");
    }
}

/// A DJL job that fills `$ENGINE` later names no engine yet: INP004 at `$ENGINE`, no launch.
#[test]
fn djl_engine_left_to_a_variable_is_unresolved() {
    let path = root().join("fixtures/platforms/djl-serving-properties/pass-unfilled.properties");
    let doc = check(&path, &[]);
    assert!(doc["launches"].as_array().unwrap().is_empty());
    let unresolved = of_rule(&doc, "INP004");
    assert_eq!(unresolved.len(), 1, "{doc:#}");
    assert_eq!(pointed(&path, unresolved[0]), "$ENGINE");
}

/// A Triton config that is not protobuf text format is INP001 at the place, exit 1, no panic.
#[test]
fn broken_pbtxt_is_invalid_input_at_its_place() {
    let dir = std::env::temp_dir().join(format!("kvlint-pbtxt-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.pbtxt");
    std::fs::write(
        &path,
        "name: \"m\"\nparameters {\n  key: \"gpt_model_path\"\n  value { string_value: \"x }\n}\n",
    )
    .unwrap();
    let doc = check(&path, &[]);
    let invalid = of_rule(&doc, "INP001");
    assert_eq!(invalid.len(), 1, "{doc:#}");
    assert_eq!(invalid[0]["line"], 4);
    assert!(invalid[0]["message"]
        .as_str()
        .unwrap()
        .contains("closing quote"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A JobSet keeps its pods two templates down (`replicatedJobs[].template.spec.template`); an
/// engine in a native sidecar (an init container with `restartPolicy: Always`) runs beside the
/// job's container and is that pod's launch, with the pod's GPU.
#[test]
fn jobset_engine_in_a_native_sidecar_is_a_launch() {
    let dir = std::env::temp_dir().join(format!("kvlint-jobset-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("jobset.yaml");
    std::fs::write(
        &path,
        r#"apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata:
  name: bench
spec:
  replicatedJobs:
    - name: workers
      replicas: 1
      template:
        spec:
          template:
            spec:
              initContainers:
                - name: engine
                  image: vllm/vllm-openai:v0.11.0
                  restartPolicy: Always
                  command: ["vllm", "serve", "Qwen/Qwen3-8B", "--max-model-len", "32768"]
                  resources:
                    limits:
                      nvidia.com/gpu: 1
              containers:
                - name: client
                  image: python:3.12
                  command: ["python", "bench.py"]
              nodeSelector:
                cloud.google.com/gke-accelerator: nvidia-l4
"#,
    )
    .unwrap();
    let doc = check(&path, &[]);
    assert_eq!(
        listed(&doc),
        ["engine=vllm role=unified tp=1 context=32768 model=Qwen/Qwen3-8B gpu=L4"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Platforms whose engine settings are env vars and CRD fields, not an argv (NIM Operator,
/// KServe's Hugging Face server, Runpod's SGLang worker), on their real files: the launch a
/// careful reader lists from the fields the platform's own code reads.
#[test]
#[ignore = "reads ../shared"]
fn launches_of_env_and_crd_platform_files() {
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            // The NIMCache's selectors (engine "tensorrt", tensorParallelism "1") pick the
            // profile the NIMService named by `storage.nimCache.name` runs; one GPU; no context.
            "nim-operator-nimcache-nimservice-kserve.yaml",
            &["--gpu", "h100"],
            &["engine=trtllm role=unified tp=1 context=- model=nvcr.io/nim/meta/llama-3.2-1b-instruct gpu=H100-80GB"],
        ),
        (
            // No --backend: `auto`, vLLM on a GPU; --model_id is the model, --model_name only
            // the served name; --enforce-eager passes through to vLLM. No max length: the
            // context is the model's own (Qwen2.5-1.5B: 32768).
            "kserve-isvc-huggingface-vllm-prokube.yaml",
            &["--gpu", "h100"],
            &["engine=vllm role=unified tp=1 context=32768 model=Qwen/Qwen2.5-1.5B-Instruct gpu=H100-80GB"],
        ),
        (
            // engine.py maps MODEL_NAME to --model-path and CONTEXT_LENGTH to --context-length;
            // no TENSOR_PARALLEL_SIZE; `count: all` GPUs is no number.
            "runpod-worker-sglang-compose.yml",
            &["--gpu", "h100"],
            &["engine=sglang role=unified tp=1 context=2048 model=meta-llama/Llama-3.2-1B-Instruct gpu=H100-80GB"],
        ),
    ];
    for (file, extra, want) in cases {
        let doc = check(&shared(file), extra);
        assert_eq!(listed(&doc), *want, "{file}");
        assert!(of_rule(&doc, "CFG001").is_empty(), "{file}: {doc:#}");
    }
}

/// The Runpod worker's env reaches SGLang as engine.py passes it: MEM_FRACTION_STATIC 0.5 is the
/// static fraction, and MAX_TOTAL_TOKENS 2048 caps the pool at 2,048 tokens (SGLang takes the
/// smaller of the profiled pool and `--max-total-tokens`), which a 1B model on an H100 exceeds.
#[test]
#[ignore = "reads ../shared"]
fn runpod_sglang_env_reaches_the_engine() {
    let doc = check(
        &shared("runpod-worker-sglang-compose.yml"),
        &["--gpu", "h100"],
    );
    let l = &doc["launches"][0];
    assert_eq!(l["memory_fraction"], 0.5, "{l:#}");
    assert_eq!(l["pool_tokens"], 2048, "{l:#}");
}

/// The worker's own Python, read as Python: the argv it builds is SGLang's, and every flag it
/// appends from env is a value kvlint cannot see here (INP004 at the `extend`), never a guess.
#[test]
#[ignore = "reads ../shared"]
fn runpod_sglang_engine_py_leaves_its_env_flags_unresolved() {
    let path = shared("runpod-worker-sglang-engine.py");
    let doc = check(&path, &["--gpu", "h100"]);
    assert_eq!(
        listed(&doc),
        ["engine=sglang role=unified tp=1 context=- model=- gpu=H100-80GB"]
    );
    let unresolved = of_rule(&doc, "INP004");
    assert_eq!(unresolved.len(), 1, "{doc:#}");
    assert_eq!(
        pointed(&path, unresolved[0]),
        "command.extend([option, value])"
    );
}

/// DJL LMI configured by env in a LeaderWorkerSet: no OPTION_ROLLING_BATCH, so the engine is the
/// container release's default, which kvlint does not assume. That is INP006 at the leader (a
/// deny), never "no engine launch found"; the worker, which runs the partition setup, says nothing.
#[test]
#[ignore = "reads ../shared"]
fn djl_lmi_env_without_an_engine_is_not_silent() {
    let path = shared("djl-lmi-lws-env.yaml");
    let run = kvlint(&["check", "--format", "json", path.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(doc["launches"].as_array().unwrap().is_empty());
    let unread = of_rule(&doc, "INP006");
    assert_eq!(unread.len(), 1, "{doc:#}");
    assert!(unread[0]["message"]
        .as_str()
        .unwrap()
        .contains("OPTION_ROLLING_BATCH"));
    assert_eq!(pointed(&path, unread[0]), "name: lmi-leader");
}

/// DJL's nightly benchmark job file: `[serving_properties]` is read as serving.properties, and
/// `$ENGINE` takes the one value `[vars]` gives it (vllm). `tensor_parallel_degree=max` is every
/// GPU of a host the file does not name: TP is not known here.
#[test]
#[ignore = "reads ../shared"]
fn djl_job_file_is_read_with_its_vars() {
    let doc = check(
        &shared("djl-lmi-nightly-serving-properties.txt"),
        &["--gpu", "a10g"],
    );
    assert_eq!(
        listed(&doc),
        ["engine=vllm role=unified tp=- context=8192 model=NousResearch/Hermes-2-Pro-Mistral-7B gpu=A10G"]
    );
}

/// A Triton vLLM `config.pbtxt` checked alone reads the `1/model.json` beside it, as Triton does:
/// its launch is listed and checked, and no INP006 is left. With no model folder beside it,
/// INP006 still says where the launch would be.
#[test]
fn a_config_pbtxt_checked_alone_reads_the_model_json_beside_it() {
    let repo = root().join("fixtures/platforms/triton-vllm-pbtxt/pass-repository/vllm_model");
    let doc = check(&repo.join("config.pbtxt"), &[]);
    assert_eq!(doc["files_checked"], 2, "{doc:#}");
    let launches = doc["launches"].as_array().unwrap();
    assert_eq!(launches.len(), 1, "{doc:#}");
    assert!(launches[0]["file"]
        .as_str()
        .unwrap()
        .ends_with("1/model.json"));
    assert!(of_rule(&doc, "INP006").is_empty(), "{doc:#}");
    let alone = root().join("fixtures/platforms/triton-vllm-pbtxt/fire-config.pbtxt");
    let doc = check(&alone, &[]);
    assert_eq!(doc["files_checked"], 1, "{doc:#}");
    assert_eq!(of_rule(&doc, "INP006").len(), 1, "{doc:#}");
}
