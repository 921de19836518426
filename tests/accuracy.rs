//! Accuracy against real engine startup logs: `../shared/validation/observed-public.jsonl` (the
//! set the math was tuned on) and our own public records in `fixtures/validation/*.jsonl` (same
//! format). Runs `kvlint capacity` on every record and compares the predicted pool with the
//! logged one.
//! Run with `cargo test --test accuracy -- --ignored --nocapture` (CI does).

mod common;

use common::kvlint;
use serde_json::Value;

const SHARED: &str = "../shared";

struct Row {
    id: String,
    engine: String,
    predicted: f64,
    low: f64,
    high: f64,
    observed: f64,
}

impl Row {
    fn error(&self) -> f64 {
        (self.predicted - self.observed).abs() / self.observed
    }
    fn inside(&self) -> bool {
        self.low <= self.observed && self.observed <= self.high
    }
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Runs one record; `Err` says why it is out of range.
fn run(rec: &Value) -> Result<Row, String> {
    let engine = rec["engine"].as_str().unwrap_or("");
    if engine != "sglang" && engine != "vllm" {
        return Err(format!("engine {engine} not modelled"));
    }
    let version = rec["engine_version"]
        .as_str()
        .ok_or("engine version not stated")?;
    let v = kvlint::version::Version::parse(version).ok_or("unparsable version")?;
    let (oldest, latest) = match engine {
        "sglang" => ((0, 4, 6), (0, 5, 23)),
        _ => ((0, 11, 0), (0, 33, 0)),
    };
    let key = (v.major, v.minor, v.patch);
    if key < oldest || key > latest {
        return Err(format!("{engine} {version} outside the modelled range"));
    }
    let gpu = rec["gpu"].as_str().unwrap_or("");
    let mut args: Vec<String> = vec![
        "capacity".into(),
        "--format".into(),
        "json".into(),
        "--gpu".into(),
        gpu.into(),
    ];
    args.extend(["--engine-version".into(), version.into()]);
    if let Some(mc) = rec["model_config"].as_str() {
        args.extend(["--model-config".into(), format!("{SHARED}/reference/{mc}")]);
    }
    args.push("--".into());
    args.extend(
        rec["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string()),
    );
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = kvlint(&refs);
    // `capacity` exits 1 when the launch is refused (a record may advertise more than fits); the
    // plan is printed either way.
    if !matches!(out.code, 0 | 1) {
        return Err(format!("kvlint exited {}: {}", out.code, out.stderr.trim()));
    }
    let plan: Value = serde_json::from_str(&out.stdout).map_err(|e| e.to_string())?;
    let num = |k: &str| plan[k].as_f64().unwrap_or(f64::NAN);
    Ok(Row {
        id: rec["id"].as_str().unwrap_or("").into(),
        engine: engine.into(),
        predicted: num("pool_tokens"),
        low: num("pool_tokens_low"),
        high: num("pool_tokens_high"),
        observed: rec["observed"]["pool_tokens"].as_f64().unwrap_or(f64::NAN),
    })
}

#[test]
#[ignore = "reads ../shared"]
fn capacity_against_observed_startup_logs() {
    let root = env!("CARGO_MANIFEST_DIR");
    let mut text =
        std::fs::read_to_string(format!("{root}/{SHARED}/validation/observed-public.jsonl"))
            .expect("../shared/validation/observed-public.jsonl");
    let mut own: Vec<_> = std::fs::read_dir(format!("{root}/fixtures/validation"))
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    own.sort();
    for path in own
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
    {
        text.push('\n');
        text.push_str(&std::fs::read_to_string(path).expect("readable record file"));
    }
    let mut rows = Vec::new();
    println!(
        "{:<58} {:>10} {:>10} {:>7}  band",
        "record", "predicted", "observed", "error"
    );
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let rec: Value = serde_json::from_str(line).expect("valid JSONL");
        match run(&rec) {
            Ok(r) => {
                println!(
                    "{:<58} {:>10.0} {:>10.0} {:>6.1}%  [{:.0} – {:.0}]{}",
                    r.id,
                    r.predicted,
                    r.observed,
                    r.error() * 100.0,
                    r.low,
                    r.high,
                    if r.inside() { "" } else { "  OUTSIDE" }
                );
                rows.push(r);
            }
            Err(why) => println!(
                "{:<58} out of range: {why}",
                rec["id"].as_str().unwrap_or("")
            ),
        }
    }
    for engine in ["sglang", "vllm"] {
        let mine: Vec<&Row> = rows.iter().filter(|r| r.engine == engine).collect();
        let mut errs: Vec<f64> = mine.iter().map(|r| r.error()).collect();
        errs.sort_by(f64::total_cmp);
        let inside = mine.iter().filter(|r| r.inside()).count();
        let (median, p90) = (percentile(&errs, 0.5), percentile(&errs, 0.9));
        println!(
            "{engine}: {} records, median error {:.2}%, p90 {:.2}%, {inside}/{} observed inside the band",
            mine.len(), median * 100.0, p90 * 100.0, mine.len()
        );
        assert!(!mine.is_empty(), "{engine}: no record in range");
        // The verdict rests on the band: at least 90 % of observed pools must fall inside it.
        assert!(
            inside as f64 >= 0.9 * mine.len() as f64,
            "{engine}: {inside}/{} inside the band",
            mine.len()
        );
        // Regression guards at the targets, which both engines meet (see README "Accuracy").
        let (max_median, max_p90) = (0.03, 0.08);
        assert!(
            median <= max_median,
            "{engine}: median error {:.2}%",
            median * 100.0
        );
        assert!(p90 <= max_p90, "{engine}: p90 error {:.2}%", p90 * 100.0);
    }
}
