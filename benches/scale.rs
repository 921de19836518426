//! `cargo bench --bench scale [-- 1000 10000 50000]`: runs the built `kvlint check` on one
//! Helm-rendered file of N objects (half of them Deployments with a launch) in every format,
//! and prints seconds, peak RSS (via `/usr/bin/time` when present), MB/s and the growth
//! exponent between sizes (1.0 is linear).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

const FORMATS: [&str; 4] = ["human", "json", "sarif", "github"];

/// `helm template` output of `objects` objects: a Deployment running SGLang or vLLM, then its
/// Service.
fn rendered(objects: usize) -> String {
    let mut s = String::new();
    for i in 0..objects / 2 {
        let (image, command, args) = if i % 2 == 0 {
            (
                "lmsysorg/sglang:v0.5.22-cu129",
                r#"["python3", "-m", "sglang.launch_server"]"#,
                format!(
                    r#"["--model-path", "Qwen/Qwen3-8B", "--tp", "{}", "--context-length", "{}"]"#,
                    1 << (i % 3),
                    8192 << (i % 4)
                ),
            )
        } else {
            (
                "vllm/vllm-openai:v0.11.0",
                r#"["vllm", "serve"]"#,
                format!(
                    r#"["Qwen/Qwen3-8B", "--tensor-parallel-size", "{}", "--max-model-len", "{}"]"#,
                    1 << (i % 3),
                    8192 << (i % 4)
                ),
            )
        };
        s.push_str(&format!(
            "---\n# Source: chart/templates/deployment.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: engine-{i}\n  namespace: serving\nspec:\n  replicas: 2\n  template:\n    spec:\n      nodeSelector:\n        nvidia.com/gpu.product: NVIDIA-H200\n      containers:\n        - name: engine\n          image: {image}\n          command: {command}\n          args: {args}\n          resources:\n            limits:\n              nvidia.com/gpu: \"{}\"\n---\n# Source: chart/templates/service.yaml\napiVersion: v1\nkind: Service\nmetadata:\n  name: engine-{i}\nspec:\n  ports:\n    - port: 30000\n",
            1 << (i % 3)
        ));
    }
    s
}

/// Seconds and peak RSS in MB of one run.
fn run(file: &Path, format: &str) -> (f64, Option<f64>) {
    let kvlint = env!("CARGO_BIN_EXE_kvlint");
    let timed = Path::new("/usr/bin/time").exists();
    let mut cmd = if timed {
        let mut c = Command::new("/usr/bin/time");
        c.args(["-f", "%M", kvlint]);
        c
    } else {
        Command::new(kvlint)
    };
    cmd.args(["check", "--format", format])
        .arg(file)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let t = Instant::now();
    let out = cmd.output().expect("run kvlint");
    let secs = t.elapsed().as_secs_f64();
    let rss = String::from_utf8_lossy(&out.stderr)
        .lines()
        .last()
        .and_then(|l| l.trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0);
    (secs, rss)
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 10_000]
    } else {
        sizes
    };
    let dir = std::env::temp_dir().join(format!("kvlint-scale-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut previous: Vec<Option<(usize, f64)>> = vec![None; FORMATS.len()];
    for &n in &sizes {
        let file = dir.join(format!("rendered-{n}.yaml"));
        let text = rendered(n);
        std::fs::write(&file, &text).expect("write render");
        let mb = text.len() as f64 / 1e6;
        for (k, format) in FORMATS.iter().enumerate() {
            let (secs, rss) = run(&file, format);
            let growth = previous[k]
                .map(|(m, t)| {
                    format!(
                        ", exponent {:.2}",
                        (secs / t).ln() / (n as f64 / m as f64).ln()
                    )
                })
                .unwrap_or_default();
            let rss = rss.map_or_else(String::new, |r| format!(", peak RSS {r:.0} MB"));
            println!(
                "{n:>6} objects ({mb:.1} MB) {format:<6}: {secs:.2} s, {:.1} MB/s{rss}{growth}",
                mb / secs
            );
            previous[k] = Some((n, secs));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
