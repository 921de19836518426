//! `kvlint plan` (issue 28): the incident, agreement with `capacity` on every listed layout's own
//! launch line, one model per architecture class on two GPU types, and unknown inputs.

mod common;

use common::kvlint;
use serde_json::Value;

const INCIDENT: &[&str] = &[
    "plan",
    "--model",
    "zai-org/GLM-5.3",
    "--gpu",
    "h200",
    "--engine",
    "sglang",
    "--engine-version",
    "0.5.23",
    "--role",
    "prefill",
    "--context",
    "1048576",
];

fn json_of(args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.extend(["--format", "json"]);
    let run = kvlint(&args);
    assert!(run.code <= 1, "{}", run.transcript(&args));
    serde_json::from_str(&run.stdout).unwrap()
}

fn layouts(plan: &Value) -> &Vec<Value> {
    plan["layouts"].as_array().unwrap()
}

#[test]
fn incident_fits_only_beyond_one_node() {
    let mut args = INCIDENT.to_vec();
    args.extend(["--max-gpus", "32"]);
    let plan = json_of(&args);
    let rows = layouts(&plan);
    let fits: Vec<&Value> = rows.iter().filter(|l| l["verdict"] == "fits").collect();
    assert!(!fits.is_empty(), "no layout of up to 32 H200 fits");
    for l in &fits {
        assert!(l["gpus"].as_u64().unwrap() > 8, "{l}");
        assert!(l["pool_tokens_low"].as_u64().unwrap() >= 1_048_576, "{l}");
    }
    // Fewest GPUs first, then the largest margin.
    let keys: Vec<(u64, f64)> = rows
        .iter()
        .map(|l| (l["gpus"].as_u64().unwrap(), -l["margin"].as_f64().unwrap()))
        .collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "{keys:?}");

    // With the default --max-gpus it says so, names the smallest count that fits, and fails.
    let run = kvlint(INCIDENT);
    assert_eq!(run.code, 1, "{}", run.transcript(INCIDENT));
    let smallest = fits.iter().map(|l| l["gpus"].as_u64().unwrap()).min();
    assert!(
        run.stdout.contains(&format!(
            "no layout of up to 8 H200 GPUs holds 1,048,576 tokens; the smallest GPU count that does is {}",
            smallest.unwrap()
        )),
        "{}",
        run.stdout
    );
}

/// Every layout's argv, given to `capacity` on its own GPU count and release, gives the same pool
/// band and the same verdict.
#[test]
fn every_layout_agrees_with_capacity() {
    let mut incident = INCIDENT.to_vec();
    incident.extend(["--max-gpus", "16"]);
    let others: [&[&str]; 3] = [
        &[
            "plan",
            "--model",
            "Qwen/Qwen3-8B",
            "--gpu",
            "l40s",
            "--context",
            "32768",
            "--max-gpus",
            "2",
        ],
        &[
            "plan",
            "--model",
            "deepseek-ai/DeepSeek-V2-Lite",
            "--gpu",
            "a100-80gb",
            "--engine",
            "sglang",
            "--role",
            "decode",
            "--max-gpus",
            "4",
            "--memory-fraction",
            "0.9",
        ],
        &[
            "plan",
            "--model",
            "openai/gpt-oss-20b",
            "--gpu",
            "h100",
            "--engine",
            "vllm",
            "--role",
            "prefill",
            "--context",
            "131072",
            "--max-gpus",
            "2",
        ],
    ];
    let mut checked = 0;
    for args in std::iter::once(incident.as_slice()).chain(others) {
        let plan = json_of(args);
        for l in layouts(&plan) {
            let gpu = format!("{}x{}", l["gpu"].as_str().unwrap(), l["gpus"]);
            let version = format!(
                "{}={}",
                l["engine"].as_str().unwrap(),
                l["engine_version"].as_str().unwrap()
            );
            let mut cap = vec![
                "capacity",
                "--gpu",
                &gpu,
                "--engine-version",
                &version,
                "--format",
                "json",
                "--",
            ];
            let argv: Vec<&str> = l["argv"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap())
                .collect();
            cap.extend(&argv);
            let run = kvlint(&cap);
            let c: Value = serde_json::from_str(&run.stdout)
                .unwrap_or_else(|_| panic!("{}", run.transcript(&cap)));
            for key in [
                "pool_tokens",
                "pool_tokens_low",
                "pool_tokens_high",
                "tp",
                "kv_cache_dtype",
                "page_size",
            ] {
                assert_eq!(c[key], l[key], "{key} of {}", run.transcript(&cap));
            }
            let rules: Vec<&str> = c["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["rule"].as_str().unwrap())
                .collect();
            let verdict = if rules
                .iter()
                .any(|r| ["KV001", "KV002", "KV005"].contains(r))
            {
                "does_not_fit"
            } else if rules.contains(&"KV004") {
                "tight"
            } else {
                "fits"
            };
            assert_eq!(l["verdict"], verdict, "{}", run.transcript(&cap));
            checked += 1;
        }
    }
    assert!(checked >= 40, "only {checked} layouts checked");
}

/// One model per architecture class `model/` knows, each on two GPU types.
#[test]
fn architecture_classes_on_two_gpus() {
    // (class, model, two GPU types, release, context, --max-gpus)
    let cases: [(&str, &str, &str, &str, &str, &str, &str); 5] = [
        (
            "standard GQA",
            "meta-llama/Llama-3.1-8B-Instruct",
            "h100",
            "l40s",
            "vllm=0.19.0",
            "131072",
            "4",
        ),
        (
            "MLA",
            "deepseek-ai/DeepSeek-V2-Lite",
            "h100",
            "a100-80gb",
            "sglang=0.5.23",
            "163840",
            "2",
        ),
        (
            "DSA",
            "deepseek-ai/DeepSeek-V3.2",
            "h200",
            "b200",
            "sglang=0.5.23",
            "163840",
            "8",
        ),
        (
            "sliding window",
            "openai/gpt-oss-120b",
            "h100",
            "h200",
            "vllm=0.19.0",
            "131072",
            "4",
        ),
        (
            "hybrid linear",
            "Qwen/Qwen3-Next-80B-A3B-Thinking",
            "h100",
            "h200",
            "sglang=0.5.23",
            "262144",
            "4",
        ),
    ];
    for (class, model, g1, g2, version, context, max_gpus) in cases {
        let engine = version.split('=').next().unwrap();
        let args = [
            "plan",
            "--model",
            model,
            "--gpu",
            g1,
            "--gpu",
            g2,
            "--engine",
            engine,
            "--engine-version",
            version,
            "--context",
            context,
            "--max-gpus",
            max_gpus,
        ];
        let run = kvlint(&args);
        assert!(run.code <= 1, "{class}: {}", run.transcript(&args));
        let said = run.stdout.matches("smallest layout on").count()
            + run.stdout.matches("no layout of up to").count();
        assert_eq!(
            said, 2,
            "{class}: one conclusion per GPU type\n{}",
            run.stdout
        );
        insta::assert_snapshot!(
            format!("arch_{}", class.replace(' ', "_")),
            run.transcript(&args)
        );
    }
}

#[test]
fn unknown_model_and_gpu_exit_2_as_capacity_does() {
    let plan = kvlint(&[
        "plan",
        "--model",
        "nobody/no-such-model",
        "--gpu",
        "h200",
        "--offline",
    ]);
    let cap = kvlint(&[
        "capacity",
        "--gpu",
        "h200",
        "--offline",
        "--",
        "vllm",
        "serve",
        "nobody/no-such-model",
    ]);
    assert_eq!((plan.code, cap.code), (2, 2));
    assert!(
        plan.stderr.contains("nobody/no-such-model is unknown"),
        "{}",
        plan.stderr
    );
    assert_eq!(plan.stdout, "");
    let gpu = kvlint(&["plan", "--model", "Qwen/Qwen3-8B", "--gpu", "h9000"]);
    assert_eq!(gpu.code, 2);
    assert!(gpu.stderr.contains("unknown GPU `h9000`"), "{}", gpu.stderr);
}

#[test]
fn launch_file_shows_what_fits_around_it() {
    let dir = std::env::temp_dir().join(format!("kvlint-plan-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("prefill.sh");
    std::fs::write(
        &file,
        "python3 -m sglang.launch_server --model-path zai-org/GLM-5.3 --tp-size 8 \\\n  --disaggregation-mode prefill --context-length 1048576\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let args = [
        "plan",
        "--launch",
        f,
        "--gpu",
        "h200",
        "--engine-version",
        "0.5.23",
        "--max-gpus",
        "16",
        "--format",
        "json",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 1, "{}", run.transcript(&args));
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let l = &v["launches"][0];
    assert_eq!(l["verdict"], "does_not_fit");
    assert_eq!(l["max_context"], 0);
    assert!(
        l["change"]
            .as_str()
            .unwrap()
            .contains("no single change holds it"),
        "{l}"
    );
    let fits = l["plan"]["layouts"].as_array().unwrap();
    assert!(!fits.is_empty());
    assert!(
        fits.iter()
            .all(|x| x["verdict"] == "fits" && x["gpus"] == 16),
        "{fits:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Only the TP sizes the engines accept: phi-4's 40 heads and 10 KV heads split over 1 or 2 GPUs
/// (TP 4 and 8 divide neither the KV heads nor are multiples of them: PAR001), and PP over more.
#[test]
fn layouts_respect_the_heads_and_the_gpu() {
    let plan = json_of(&[
        "plan",
        "--model",
        "microsoft/phi-4",
        "--gpu",
        "a100-80gb",
        "--gpu",
        "h100",
        "--engine",
        "vllm",
        "--engine-version",
        "0.19.0",
        "--context",
        "16384",
    ]);
    let rows = layouts(&plan);
    let tps: std::collections::BTreeSet<u64> =
        rows.iter().map(|l| l["tp"].as_u64().unwrap()).collect();
    assert_eq!(tps.into_iter().collect::<Vec<_>>(), [1, 2]);
    assert!(
        rows.iter().any(|l| l["pp"] == 4),
        "PP still spreads it over 4 GPUs"
    );
    // FP8 KV caches only where the GPU computes in FP8 (compute capability 8.9 and up).
    let fp8 = |gpu: &str| {
        rows.iter()
            .any(|l| l["gpu"] == gpu && l["kv_cache_dtype"] == "fp8")
    };
    assert!(fp8("H100-80GB") && !fp8("A100-80GB"));
    // Given fractions are tried beside the default, and argv carries them.
    let given = json_of(&[
        "plan",
        "--model",
        "microsoft/phi-4",
        "--gpu",
        "h100",
        "--engine",
        "vllm",
        "--engine-version",
        "0.19.0",
        "--max-gpus",
        "1",
        "--memory-fraction",
        "0.8",
    ]);
    let fractions: Vec<f64> = layouts(&given)
        .iter()
        .map(|l| l["memory_fraction"].as_f64().unwrap())
        .collect();
    assert!(
        fractions.contains(&0.8) && fractions.contains(&0.9),
        "{fractions:?}"
    );
}

/// `--format markdown`: the same table for a PR comment, the launch lines folded away.
#[test]
fn markdown_table() {
    let args = [
        "plan",
        "--model",
        "Qwen/Qwen3-8B",
        "--gpu",
        "l40s",
        "--engine",
        "sglang",
        "--engine-version",
        "0.5.23",
        "--context",
        "32768",
        "--max-gpus",
        "2",
        "--format",
        "markdown",
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 0, "{}", run.transcript(&args));
    insta::assert_snapshot!(run.transcript(&args));
}
