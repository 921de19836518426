//! No input panics: mutated launches, scripts and YAML go through the whole check pipeline.

use kvlint::gpu;
use kvlint::pipeline::{Options, Outcome};
use kvlint::report;

const SEEDS: &[&str] = &[
    "python3 -m sglang.launch_server --model-path zai-org/GLM-5.3 --tp-size 8 --context-length 1048576 --mem-fraction-static 0.88 --disaggregation-mode prefill\n",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 32k --tensor-parallel-size=2 --no-enable-prefix-caching\n",
    "model-path: Qwen/Qwen3-8B\ncontext-length: 32768\nmem-fraction-static: 0.85\n",
    "export CTX=4096\nbash -c \"vllm serve Qwen/Qwen3-8B --max-model-len $CTX\"\n",
];

const NOISE: &[&str] = &[
    "-",
    "--",
    "=",
    "'",
    "\"",
    "\\\n",
    "$",
    "${",
    "}",
    "$(",
    ")",
    "0",
    "-1",
    "1e99",
    "auto",
    "--tp",
    "--max-model-len",
    "--context-length",
    "99999999999999999999",
    ":",
    "\n",
    " ",
    "[",
    "{",
    "#",
    "--kv-cache-dtype",
    "fp8",
    "é",
    "\t",
];

/// A small deterministic generator (no extra dependency, reproducible failures).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn mutate(rng: &mut Lcg, seed: &str) -> String {
    let mut s: Vec<char> = seed.chars().collect();
    for _ in 0..1 + rng.next(6) {
        let at = rng.next(s.len() + 1);
        match rng.next(3) {
            0 => s
                .splice(at..at, NOISE[rng.next(NOISE.len())].chars())
                .for_each(drop),
            1 if at < s.len() => s.truncate(at),
            _ => {
                let end = (at + rng.next(8)).min(s.len());
                s.drain(at.min(end)..end);
            }
        }
    }
    s.into_iter().collect()
}

#[test]
fn mutated_inputs_never_panic_the_pipeline() {
    let opts = Options {
        gpu: Some(gpu::parse_spec("h200x8").unwrap()),
        ..Options::default()
    };
    let mut rng = Lcg(0x6b766c696e74);
    for i in 0..1500 {
        let seed = SEEDS[i % SEEDS.len()];
        let text = mutate(&mut rng, seed);
        let name = if seed.starts_with("model-path") {
            "in.yaml"
        } else {
            "in.sh"
        };
        let result = std::panic::catch_unwind(|| {
            let mut outcome = Outcome::default();
            let file = outcome.sources.add(name, text.clone());
            outcome.check_file(file, &opts, None);
            report::render_all(&outcome);
        });
        assert!(result.is_ok(), "panic on input {text:?}");
    }
}
