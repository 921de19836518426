//! `cargo bench --bench check`: times `check` on the incident example and on a script of 1,000
//! generated launches and on a Helm-rendered file of 1,000 objects, through the same library pipeline the CLI runs (no process start-up).

use kvlint::gpu;
use kvlint::pipeline::{Options, Outcome};
use kvlint::report;
use std::time::{Duration, Instant};

fn check(name: &str, text: &str, opts: &Options) -> usize {
    let mut outcome = Outcome::default();
    let file = outcome.sources.add(name, text);
    outcome.check_file(file, opts, None);
    report::render_all(&outcome).len() + outcome.launches.len()
}

/// 1,000 launches over both engines, several catalog models, TP sizes and contexts.
fn generated() -> String {
    let models = [
        "Qwen/Qwen3-8B",
        "meta-llama/Llama-3.1-8B-Instruct",
        "Qwen/Qwen3-32B",
        "zai-org/GLM-5.3",
    ];
    let mut s = String::new();
    for i in 0..1000 {
        let model = models[i % models.len()];
        let tp = [1, 2, 4, 8][i / 4 % 4];
        let ctx = 8192 << (i % 5);
        if i % 2 == 0 {
            s.push_str(&format!(
                "python3 -m sglang.launch_server --model-path {model} --tp-size {tp} --context-length {ctx} --mem-fraction-static 0.{}\n",
                80 + i % 10
            ));
        } else {
            s.push_str(&format!(
                "vllm serve {model} --tensor-parallel-size {tp} --max-model-len {ctx}\n"
            ));
        }
    }
    s
}

/// What `helm template` prints for 1,000 objects: Deployments running either engine, each
/// followed by its Service, so half the documents hold a launch.
fn helm_rendered() -> String {
    let mut s = String::new();
    for i in 0..500 {
        let (image, command) = if i % 2 == 0 {
            (
                "lmsysorg/sglang:v0.5.22-cu129",
                r#"["python3", "-m", "sglang.launch_server"]"#,
            )
        } else {
            ("vllm/vllm-openai:v0.11.0", r#"["vllm", "serve"]"#)
        };
        let args = if i % 2 == 0 {
            format!(
                r#"["--model-path", "Qwen/Qwen3-8B", "--tp", "{}", "--context-length", "{}"]"#,
                1 << (i % 3),
                8192 << (i % 4)
            )
        } else {
            format!(
                r#"["Qwen/Qwen3-8B", "--tensor-parallel-size", "{}", "--max-model-len", "{}"]"#,
                1 << (i % 3),
                8192 << (i % 4)
            )
        };
        s.push_str(&format!(
            "---\n# Source: chart/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: engine-{i}\n  namespace: serving\nspec:\n  replicas: 2\n  template:\n    spec:\n      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-H200\n      containers:\n        - name: engine\n          image: {image}\n          command: {command}\n          args: {args}\n          env:\n            - name: HF_TOKEN\n              valueFrom:\n                secretKeyRef: {{name: hf, key: token}}\n          resources:\n            limits:\n              nvidia.com/gpu: \"{}\"\n---\n# Source: chart/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: engine-{i}\nspec:\n  ports:\n    - port: 30000\n",
            1 << (i % 3)
        ));
    }
    s
}

fn time(label: &str, iters: u32, mut f: impl FnMut() -> usize) {
    let mut samples: Vec<Duration> = (0..iters)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .collect();
    samples.sort();
    let median = samples[samples.len() / 2];
    println!(
        "{label}: median {median:?} over {iters} runs (min {:?}, max {:?})",
        samples[0],
        samples[samples.len() - 1]
    );
}

fn main() {
    let opts = Options {
        gpu: Some(gpu::parse_spec("h200x8").expect("catalog GPU")),
        engine_version: kvlint::version::EngineVersions::parse("0.5.20").ok(),
        ..Options::default()
    };
    let incident = include_str!("../fixtures/incident/prefill.sh");
    time("check incident example", 200, || {
        check("prefill.sh", incident, &opts)
    });
    let script = generated();
    let opts = Options {
        engine_version: None,
        ..opts
    };
    time("check 1,000 generated launches", 10, || {
        check("generated.sh", &script, &opts)
    });
    let rendered = helm_rendered();
    let opts = Options { gpu: None, ..opts };
    time("check a Helm-rendered file of 1,000 objects", 10, || {
        check("rendered.yaml", &rendered, &opts)
    });
}
