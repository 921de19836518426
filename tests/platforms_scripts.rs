//! Scripts as platforms: Slurm batch scripts, GitHub Actions workflows, Apptainer definition
//! files, and the parts of a build that are not yet objects (Kustomize patches, unrendered Helm
//! templates). Each launch is listed as a careful reader of the file would list it; what the
//! file leaves to run time is INP004 where it stands, and what is not a launch is said.

mod common;
use common::{kvlint, root};
use kvlint::extract::{extract, Extracted};
use kvlint::launch::Launch;
use kvlint::source::Sources;
use serde_json::Value;

fn read(path: &str) -> (Sources, Extracted) {
    let text = std::fs::read_to_string(root().join(path)).expect("file");
    let mut sources = Sources::default();
    let id = sources.add(path, text);
    let out = extract(id, &sources);
    (sources, out)
}

/// `kvlint check --format json` of a file: exit code and report.
fn check(path: &str, extra: &[&str]) -> (i32, Value) {
    let mut args = vec!["check", "--format", "json"];
    args.extend(extra);
    args.push(path);
    let run = kvlint(&args);
    let doc =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{path}: {e}\n{}", run.stderr));
    (run.code, doc)
}

/// Each launch as `engine role tp=.. dp=.. ctx=.. model=.. gpu=..xN`.
fn listed(doc: &Value) -> Vec<String> {
    let v = |l: &Value, k: &str| match &l[k] {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    doc["launches"]
        .as_array()
        .expect("launches")
        .iter()
        .map(|l| {
            format!(
                "{} {} tp={} dp={} ctx={} model={} gpu={}x{}",
                v(l, "engine"),
                v(l, "role"),
                v(l, "tp"),
                v(l, "dp"),
                v(l, "context_length"),
                v(l, "model"),
                v(l, "gpu"),
                v(l, "gpu_count"),
            )
        })
        .collect()
}

/// Each finding as `RULE line`.
fn findings(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| format!("{} {}", f["rule"].as_str().unwrap_or(""), f["line"]))
        .collect()
}

fn rules_of(out: &Extracted) -> Vec<&str> {
    out.findings.iter().map(|f| f.rule).collect()
}

fn env<'l>(l: &'l Launch, name: &str) -> Option<&'l str> {
    l.env
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, a)| a.text.as_str())
}

#[test]
fn slurm_directives_give_the_gpus_and_the_slurm_variables() {
    let path = "fixtures/platforms/slurm/fire-sglang-pyxis.sbatch";
    let (s, out) = read(path);
    let [l] = &out.launches[..] else {
        panic!("{:#?}", out.launches)
    };
    // `--tp "$SLURM_GPUS_ON_NODE"` is the 4 of `--gres=gpu:h100:4`, written there.
    let tp = l.args.iter().position(|a| a.text == "--tp").expect("--tp");
    assert_eq!(l.args[tp + 1].text, "4");
    let (gpu, at) = l.placement.gpu.clone().expect("GPU type");
    assert_eq!((gpu.as_str(), s.text(at)), ("h100", "gpu:h100:4"));
    assert_eq!(
        (l.placement.gpus_per_pod, l.placement.pods),
        (Some(4), Some(1))
    );
    // The pyxis container image names the release.
    assert_eq!(
        l.engine_version.as_ref().map(|v| v.0.as_str()),
        Some("0.5.2")
    );
    assert_eq!(s.text(l.command), "python3 -m sglang.launch_server");
}

#[test]
fn slurm_variables_no_directive_fixes_are_inp004_where_they_stand() {
    let path = "fixtures/platforms/slurm/fire-vllm-ray-job.sbatch";
    let (s, out) = read(path);
    let [l] = &out.launches[..] else {
        panic!("{:#?}", out.launches)
    };
    // `ray job submit -- vllm serve ...` is the launch; `srun pkill -f "vllm serve"` is none.
    assert_eq!(s.text(l.command), "vllm serve");
    let pp = l
        .args
        .iter()
        .position(|a| a.text == "--pipeline-parallel-size")
        .expect("pp");
    assert_eq!(l.args[pp + 1].text, "2");
    let (code, doc) = check(path, &["--gpu", "a100-80gb"]);
    assert_eq!(code, 1);
    let inp004: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "INP004")
        .collect();
    assert_eq!(inp004.len(), 1, "{doc:#}");
    let msg = inp004[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("--tensor-parallel-size is set from SLURM_GPUS_ON_NODE (set by Slurm"),
        "{msg}"
    );
}

#[test]
fn srun_bash_c_and_apptainer_exec_are_read_inside() {
    let (_, doc) = check("fixtures/platforms/slurm/fire-srun-bash-c.sbatch", &[]);
    assert_eq!(
        listed(&doc),
        ["vllm unified tp=2 dp=1 ctx=32768 model=mistralai/Mistral-7B-Instruct-v0.3 gpu=A100-40GBx2"]
    );
    let (s, out) = read("fixtures/platforms/slurm/fire-apptainer-exec.sbatch");
    // `singularity run vllm-custom.sif` runs a runscript that is not in the file: no launch.
    let [l] = &out.launches[..] else {
        panic!("{:#?}", out.launches)
    };
    assert_eq!(env(l, "HF_HOME"), Some("/scratch/hf"));
    let (image, at) = l.placement.image.clone().expect("image");
    assert_eq!(image, "lmsysorg/sglang:v0.4.9.post2-cu126");
    assert_eq!(s.text(at), "docker://lmsysorg/sglang:v0.4.9.post2-cu126");
}

#[test]
fn a_job_step_that_only_stops_engines_is_no_launch() {
    let (_, out) = read("fixtures/platforms/slurm/pass-stop-servers.sbatch");
    assert!(out.launches.is_empty(), "{:#?}", out.launches);
}

#[test]
fn workflow_steps_read_once_per_matrix_value_with_env_and_container() {
    let path = "fixtures/platforms/github-actions/fire-e2e-matrix.yml";
    let (s, out) = read(path);
    assert_eq!(out.launches.len(), 3, "{:#?}", out.launches);
    let tps: Vec<&str> = out.launches[..2]
        .iter()
        .map(|l| {
            l.args
                .iter()
                .skip_while(|a| a.text != "--tensor-parallel-size")
                .nth(1)
                .map_or("", |a| a.text.as_str())
        })
        .collect();
    assert_eq!(tps, ["1", "2"]);
    // The matrix value points at the expression it replaced.
    let tp = out.launches[1]
        .args
        .iter()
        .skip_while(|a| a.text != "--tensor-parallel-size")
        .nth(1)
        .unwrap();
    assert_eq!(s.text(tp.loc), "${{ matrix.tp }}");
    // `$MODEL` is the workflow env; HF_TOKEN from a secret is unknown, and no flag needs it.
    assert_eq!(out.launches[0].args[0].text, "Qwen/Qwen3-8B");
    let object = out.launches[0].object.clone().expect("object");
    assert_eq!(
        (object.kind.as_str(), object.name.as_str()),
        ("GitHub Actions workflow", "serve")
    );
    // `${{ inputs.context }}` in the docker step is the runner's: INP004 at the expression.
    let (code, doc) = check(path, &["--gpu", "h100"]);
    assert_eq!(code, 1);
    let inp004: Vec<&Value> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "INP004")
        .collect();
    assert_eq!(inp004.len(), 1, "{doc:#}");
    assert_eq!(inp004[0]["line"], 44);
    let msg = inp004[0]["message"].as_str().unwrap();
    assert!(
        msg.starts_with("--context-length is set from `${{ inputs.context }}`"),
        "{msg}"
    );
    // The pwsh step is not read; the in-process benchmark is said to be no server.
    let bench = out
        .findings
        .iter()
        .find(|f| f.rule == "INP007")
        .expect("INP007");
    assert!(bench.get("what").unwrap().contains("bench_one_batch"));
}

#[test]
fn kustomize_parts_say_what_they_are_and_how_to_build_them() {
    let (_, out) = read("fixtures/platforms/kustomize/overlay/kustomization.yaml");
    assert_eq!(rules_of(&out), ["INP007"]);
    let help = out.findings[0].get("help").unwrap();
    assert!(
        help.contains("kustomize build fixtures/platforms/kustomize/overlay | kvlint check -"),
        "{help}"
    );
    // A patch that sets the engine's context is an engine's settings kvlint did not check.
    let (s, out) = read("fixtures/platforms/kustomize/overlay/patch-args.yaml");
    assert!(out.launches.is_empty());
    assert_eq!(rules_of(&out), ["INP006"]);
    assert_eq!(s.text(out.findings[0].primary.unwrap()), "--max-model-len");
    let (code, _) = check("fixtures/platforms/kustomize/overlay/patch-args.yaml", &[]);
    assert_eq!(code, 1);
    // A patch that carries an engine command is still read.
    let (_, out) = read("fixtures/platforms/kustomize/overlay/patch-command.yaml");
    assert_eq!(out.launches.len(), 1);
    // A JSON 6902 patch is a list of operations: the option one of them adds is said, with the
    // command that builds the object it patches.
    let (s, out) = read("fixtures/platforms/kustomize/overlay/patch-json6902.yaml");
    assert!(out.launches.is_empty());
    assert_eq!(rules_of(&out), ["INP006"]);
    assert_eq!(s.text(out.findings[0].primary.unwrap()), "--max-model-len");
    let help = out.findings[0].get("help").unwrap();
    assert!(
        help.contains("kustomize build fixtures/platforms/kustomize/overlay"),
        "{help}"
    );
}

/// JobSet keeps each Job's pod template two levels down (`replicatedJobs[].template.spec.template`):
/// the engine there is read, in a native sidecar (an init container that runs for the pod's life)
/// as in a container, with the role the replicated job's name gives it.
#[test]
fn jobset_pod_templates_and_native_sidecars() {
    let (code, doc) = check("fixtures/platforms/jobset/engine-sidecar.yaml", &[]);
    assert_eq!(
        listed(&doc),
        ["vllm unified tp=2 dp=1 ctx=32768 model=Qwen/Qwen3-32B gpu=H100-80GBx2"]
    );
    assert_eq!(doc["launches"][0]["object"]["container"], "engine");
    assert_eq!(code, 0, "{doc:#}");
    let (_, doc) = check(
        "fixtures/platforms/jobset/prefill-decode.yaml",
        &["--gpu", "h100"],
    );
    assert_eq!(
        listed(&doc),
        [
            "sglang prefill tp=4 dp=1 ctx=16384 model=deepseek-ai/DeepSeek-V2-Lite gpu=H100-80GBx4",
            "sglang decode tp=4 dp=1 ctx=16384 model=deepseek-ai/DeepSeek-V2-Lite gpu=H100-80GBx4",
        ]
    );
    let (_, out) = read("fixtures/platforms/jobset/training.yaml");
    assert!(
        out.launches.is_empty() && out.findings.is_empty(),
        "{:?}",
        out.findings
    );
}

/// A kustomize base Job whose autotuner container runs a script from a ConfigMap that is not in
/// the file, with vLLM's sizing options in its env from ConfigMap keys: never "no launch" and
/// exit 0. The launch it cannot read is INP006 at the command; each sizing value set from the
/// ConfigMap is INP004 where it is referenced.
#[test]
#[ignore = "reads ../shared"]
fn a_job_with_engine_settings_from_config_maps() {
    let path = shared("gke-job-vllm-autotuning.yaml");
    let (code, doc) = check(&path, &[]);
    assert_eq!(code, 1);
    assert!(listed(&doc).is_empty());
    assert_eq!(findings(&doc), ["INP004 86", "INP004 103", "INP006 126"]);
    let messages: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert!(messages[0].contains(
        "GPU_MEMORY_UTILIZATION (env) is set from ConfigMap runtime, key GPU_MEMORY_UTILIZATION"
    ));
    assert!(messages[1].contains("MAX_MODEL_LEN (env) is set from ConfigMap runtime"));
    // The busybox container beside it only fetches weights: nothing is said of it.
    let (s, out) = read(&path);
    let inp006 = out.findings.iter().find(|f| f.rule == "INP006").unwrap();
    assert!(s
        .text(inp006.primary.unwrap())
        .contains("/mnt/config/auto_tune.sh"));
}

/// aibrix's batch Job runs a mock of vLLM beside its worker: said to be a mock (INP007, shown
/// when raised), never an engine kvlint failed to read.
#[test]
#[ignore = "reads ../shared"]
fn a_mock_engine_is_said_to_be_one() {
    let (_, out) = read(&shared("aibrix-job-engine-sidecar.yaml"));
    assert!(out.launches.is_empty());
    assert_eq!(rules_of(&out), ["INP007"]);
    let what = out.findings[0].get("what").unwrap();
    assert_eq!(what, "a mock engine (image `aibrix/vllm-mock:nightly`)");
    let (code, doc) = check(
        &shared("aibrix-job-engine-sidecar.yaml"),
        &["--extend-select", "INP007"],
    );
    assert_eq!(findings(&doc), ["INP007 101"], "{doc:#}");
    assert_eq!(code, 0);
}

#[test]
fn a_parsing_helm_template_is_a_template() {
    let (s, out) = read("fixtures/platforms/helm-template/deployment.yaml");
    assert!(out.launches.is_empty());
    assert_eq!(rules_of(&out), ["INP006"]);
    let f = &out.findings[0];
    assert_eq!(s.text(f.primary.unwrap()), "sglang.launch_server");
    assert!(f.get("help").unwrap().contains("helm template"));
}

fn shared(name: &str) -> String {
    format!("../shared/platforms/{name}")
}

#[test]
#[ignore = "reads ../shared"]
fn slurm_scripts_of_other_projects() {
    // Kempner: TP = SLURM_NNODES * SLURM_GPUS_ON_NODE = 2 * 4 from the directives, on H200s.
    let path = shared("kempner-slurm-vllm-dsr1.sh");
    let (_, doc) = check(&path, &[]);
    assert_eq!(
        listed(&doc),
        ["vllm unified tp=8 dp=1 ctx=- model=/n/holylfs06/LABS/kempner_shared/Everyone/testbed/models/DeepSeek-R1-0528 gpu=H200x8"]
    );
    assert!(
        !findings(&doc).iter().any(|f| f.starts_with("INP004")),
        "{doc:#}"
    );
    // TensorRT-LLM wide EP: the servers start in start_worker.sh, not in this file.
    let path = shared("trtllm-wide-ep-disaggr.slurm");
    let (code, doc) = check(&path, &[]);
    assert_eq!((code, listed(&doc).len()), (1, 0), "{doc:#}");
    assert_eq!(findings(&doc), ["INP006 110"]);
    let msg = doc["findings"][0]["message"].as_str().unwrap();
    assert!(
        msg.contains("TensorRT-LLM") && msg.contains("start_worker.sh"),
        "{msg}"
    );
}

#[test]
#[ignore = "reads ../shared"]
fn github_actions_of_other_projects() {
    let path = shared("production-stack-gha-router-e2e.yml");
    let (s, out) = read(&path);
    let pinned: Vec<Option<&str>> = out
        .launches
        .iter()
        .map(|l| env(l, "CUDA_VISIBLE_DEVICES"))
        .collect();
    assert_eq!(pinned, [Some("0"), Some("1")]);
    assert!(out
        .launches
        .iter()
        .all(|l| s.text(l.command) == "vllm serve"));
    let (_, doc) = check(&path, &[]);
    assert_eq!(
        listed(&doc),
        [
            "vllm unified tp=1 dp=1 ctx=- model=facebook/opt-125m gpu=-x-",
            "vllm unified tp=1 dp=1 ctx=- model=facebook/opt-125m gpu=-x-"
        ]
    );
    let fractions: Vec<&Value> = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| &l["memory_fraction"])
        .collect();
    assert_eq!(fractions, [0.7, 0.7]);
    // SGLang's 2024 workflow runs bench_latency, an in-process benchmark, and no server.
    let (_, out) = read(&shared("sglang-gha-e2e-multi-gpu.yml"));
    assert!(out.launches.is_empty());
    assert_eq!(rules_of(&out), ["INP007"]);
    assert!(out.findings[0]
        .get("what")
        .unwrap()
        .contains("bench_latency"));
}

#[test]
#[ignore = "reads ../shared"]
fn official_scripts_and_compose_files_of_other_projects() {
    // vLLM elastic EP: DATA_PARALLEL_SIZE is 4 unless the script's `--dp` sets it; the model too.
    let (_, out) = read(&shared("vllm-elastic-ep-serve-deepseek-v2.sh"));
    let [l] = &out.launches[..] else {
        panic!("{:#?}", out.launches)
    };
    let dp = l
        .args
        .iter()
        .skip_while(|a| a.text != "--data-parallel-size")
        .nth(1)
        .unwrap();
    assert_eq!(dp.unresolved.len(), 1, "{dp:?}");
    assert!(l.args.iter().any(|a| a.text == "--enable-expert-parallel"));
    // SGLang CI PD: each loop's body once, prefill then decode, one GPU each.
    let (_, doc) = check(&shared("sglang-ci-pd-launch.sh"), &[]);
    assert_eq!(
        listed(&doc),
        [
            "sglang prefill tp=1 dp=1 ctx=- model=/raid/models/meta-llama/Llama-3.1-8B-Instruct gpu=-x-",
            "sglang decode tp=1 dp=1 ctx=- model=/raid/models/meta-llama/Llama-3.1-8B-Instruct gpu=-x-"
        ]
    );
    // TPU recipe: the flags sit in an env value that no command reads here: not silent.
    let (code, doc) = check(&shared("tpu-recipes-compose-vllm-gemma4.yml"), &[]);
    assert_eq!((code, findings(&doc)), (1, vec!["INP006 23".to_string()]));
    // club-3090: the entrypoint script's `exec vllm serve "$@"` takes the command list. Its
    // `SPEC_ARGS` holds a drafter on two paths (depth 0 from `SPEC=off`, the default 4) and is
    // empty on the third: one launch per path, the last with no drafter.
    let (_, out) = read(&shared("club3090-compose-vllm-gemma4-26b.yml"));
    assert_eq!(out.launches.len(), 3, "{:#?}", out.launches);
    for l in &out.launches {
        assert!(l.args.iter().any(|a| a.text == "--max-model-len"));
    }
    let drafted = |l: &Launch| l.args.iter().any(|a| a.text == "--speculative-config");
    let with: Vec<bool> = out.launches.iter().map(drafted).collect();
    assert_eq!(with, [true, true, false]);
}

/// A chart template that writes no engine command still names the engine it runs: by its shape
/// with the directives blanked (a KServe Hugging Face InferenceService runs vLLM), else by an
/// engine's sizing flag; INP006 either way, with the command that renders it.
#[test]
fn a_helm_template_names_its_engine_by_its_shape_or_its_flags() {
    let (_, out) = read("fixtures/extract/helm-template/templates/inferenceservice.yaml");
    assert!(out.launches.is_empty());
    assert_eq!(rules_of(&out), ["INP006"]);
    assert_eq!(out.findings[0].get("engine"), Some("vLLM"));
    assert!(out.findings[0]
        .get("help")
        .unwrap()
        .contains("helm template"));
    let (s, out) = read("fixtures/extract/helm-template/templates/deployment.yaml");
    assert_eq!(rules_of(&out), ["INP006"]);
    assert_eq!(s.text(out.findings[0].primary.unwrap()), "--max-model-len");
}

/// `docker run` of an image a platform knows, with no engine command (the image's own server): read
/// as that platform reads the container in a pod. A NIM without a profile runs the engine NIM
/// picks at startup: planned on each it may pick, each launch with INP004 at the image, never a
/// silent pick.
#[test]
fn a_docker_run_of_a_platform_image_is_read_by_that_platform() {
    let (s, out) = read("fixtures/platforms/nim-container/fire-docker-run-no-profile.sh");
    let engines: Vec<&str> = out.launches.iter().map(|l| l.engine.name()).collect();
    assert_eq!(engines, ["trtllm", "vllm", "sglang"]);
    assert_eq!(rules_of(&out), ["INP004"; 3]);
    for (l, f) in out.launches.iter().zip(&out.findings) {
        let at = s.text(f.primary.unwrap());
        assert_eq!(at, "nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8.4");
        assert_eq!(f.primary, Some(l.command));
        assert!(f.get("flag").unwrap().contains(l.engine.name()));
        assert!(f.get("vars").unwrap().contains("NIM picks at startup"));
    }
}

/// `key=value` words of a command that is no launch itself, mostly one engine's option names (an
/// application that hands its arguments to the engine's parser): read as that engine's settings,
/// recognized by their keys; other `key=value` words are nothing.
#[test]
fn key_value_words_that_are_an_engines_options_are_its_settings() {
    let (s, out) = read("fixtures/extract/shell/serve-run-keys.sh");
    assert_eq!(out.launches.len(), 1, "{:?}", out.launches);
    let l = &out.launches[0];
    assert_eq!(l.engine, kvlint::launch::Engine::Vllm);
    let args: Vec<&str> = l.args.iter().map(|a| a.text.as_str()).collect();
    assert_eq!(
        args,
        [
            "--model",
            "Qwen/Qwen3-8B",
            "--tensor-parallel-size",
            "2",
            "--max-model-len",
            "16384"
        ]
    );
    assert_eq!(s.text(l.args[3].loc), "2");
}
