//! `cargo bench --bench plan`: plans 1,000 layouts (six models of every architecture class, five
//! GPU types, the three engines, TP × PP up to 64 GPUs, default and FP8 KV caches, two memory
//! fractions) through the same pipeline `kvlint plan` runs, each from its own launch line.

use kvlint::capacity::Role;
use kvlint::engine;
use kvlint::gpu;
use kvlint::launch::Engine;
use kvlint::pipeline::Options;
use kvlint::plan::{layouts, Layout, Planner, Request};
use std::time::{Duration, Instant};

const MODELS: [&str; 6] = [
    "meta-llama/Llama-3.1-8B-Instruct",
    "Qwen/Qwen3-32B",
    "zai-org/GLM-5.3",
    "deepseek-ai/DeepSeek-V2-Lite",
    "openai/gpt-oss-120b",
    "Qwen/Qwen3-Next-80B-A3B-Thinking",
];
const GPUS: [&str; 5] = ["h100", "h200", "b200", "a100-80gb", "l40s"];
const ENGINES: [Engine; 3] = [Engine::Sglang, Engine::Vllm, Engine::Trtllm];

/// The first 1,000 layouts of every model × GPU × engine.
fn thousand(opts: &Options) -> Vec<Layout> {
    let mut planner = Planner::new(opts.clone());
    let mut out = Vec::new();
    for model in MODELS {
        for g in GPUS {
            let spec = gpu::parse_spec(g).expect("catalog GPU").spec;
            for e in ENGINES {
                let version = engine::supported(e).1;
                let req = Request {
                    model: model.into(),
                    gpus: vec![spec.clone()],
                    engines: vec![(e, version.clone())],
                    context: Some(131_072),
                    role: Role::Prefill,
                    max_gpus: 64,
                    kv_cache_dtypes: Vec::new(),
                    memory_fractions: vec![0.85],
                };
                let m = planner
                    .model(model, e, &version, &spec)
                    .expect("catalog model");
                out.extend(layouts(&req, e, &version, &spec, &m, 1..=64));
            }
        }
    }
    out.truncate(1000);
    out
}

/// CPU time this thread has used, from `/proc/thread-self/stat` (utime + stime, in the kernel's
/// USER_HZ ticks of 10 ms): on a machine other processes load, the wall time measures them too.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let after_name = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn main() {
    let opts = Options::default();
    let all = thousand(&opts);
    assert_eq!(all.len(), 1000, "fewer than 1,000 layouts");
    const RUNS: u32 = 20;
    let cpu_before = cpu_time();
    let mut samples: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            let mut planner = Planner::new(opts.clone());
            std::hint::black_box(planner.evaluate_all(&all).len());
            t.elapsed()
        })
        .collect();
    let cpu = cpu_time().zip(cpu_before).map(|(a, b)| (a - b) / RUNS);
    samples.sort();
    println!(
        "plan 1,000 layouts: median {:?} wall over {RUNS} runs (min {:?}, max {:?}); CPU time {} per run",
        samples[samples.len() / 2],
        samples[0],
        samples[samples.len() - 1],
        cpu.map_or("unknown".into(), |c| format!("{c:?}")),
    );
}
