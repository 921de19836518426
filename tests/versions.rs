//! A launch whose engine release is unknown (issue 11): its band covers every release it could
//! run, its options say which those are, and a pinned release keeps the engine's own answer.
//! Every expected band is built from plans of single pinned releases, which do not use the
//! over-releases code. `--engine-version` is given per engine; a release that does not exist is
//! INP005 and an unstated one VER002.

mod common;

use common::{check_rules, kvlint_stdin};
use serde_json::Value;

const VLLM: &str = "vllm serve Qwen/Qwen3-8B --max-model-len 32768";
const SGLANG: &str =
    "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --context-length 32768";

fn capacity(version: Option<&str>, line: &str) -> Value {
    let mut args = vec!["capacity", "--gpu", "h100-80gb", "--format", "json"];
    if let Some(v) = version {
        args.extend(["--engine-version", v]);
    }
    args.push("--");
    args.extend(line.split(' '));
    let run = kvlint_stdin(&args, None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

fn check(args: &[&str], script: &str) -> Value {
    let mut all = vec!["check", "--format", "json", "--gpu", "h100-80gb"];
    all.extend(args);
    all.push("-");
    let run = kvlint_stdin(&all, Some(script));
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr))
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// `(rule, message)` of every finding.
fn findings(doc: &Value) -> Vec<(String, String)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_string();
            (s("rule"), s("message"))
        })
        .collect()
}

fn message<'a>(all: &'a [(String, String)], rule: &str) -> &'a str {
    all.iter()
        .find(|(r, _)| r == rule)
        .map(|(_, m)| m.as_str())
        .unwrap_or_else(|| panic!("no {rule} in {all:?}"))
}

/// The unknown-release band against plans pinned at every modelled release, one by one.
fn band_covers_every_release(engine: &str, releases: &[&str], line: &str) {
    let pinned: Vec<Value> = releases
        .iter()
        .map(|r| capacity(Some(&format!("{engine}={r}")), line))
        .collect();
    let min = |k: &str| pinned.iter().map(|p| n(p, k)).min().unwrap();
    let max = |k: &str| pinned.iter().map(|p| n(p, k)).max().unwrap();
    let newest = pinned.last().unwrap();
    // The pool differs between releases: otherwise this test would prove nothing.
    assert!(
        min("pool_tokens_low") < n(newest, "pool_tokens_low")
            || max("pool_tokens_high") > n(newest, "pool_tokens_high"),
        "{engine}: every release plans the same pool"
    );
    let wide = capacity(None, line);
    assert_eq!(wide["engine_version"], newest["engine_version"]);
    assert_eq!(n(&wide, "pool_tokens"), n(newest, "pool_tokens"));
    assert_eq!(
        n(&wide, "usable_tokens"),
        n(newest, "usable_tokens").min(min("usable_tokens_high"))
    );
    assert_eq!(n(&wide, "pool_tokens_low"), min("pool_tokens_low"));
    assert_eq!(n(&wide, "pool_tokens_high"), max("pool_tokens_high"));
    // The verdicts read the lowest of each end: refused when some release surely cannot hold
    // the context, warned about when some release may not.
    assert_eq!(n(&wide, "usable_tokens_low"), min("usable_tokens_low"));
    assert_eq!(n(&wide, "usable_tokens_high"), min("usable_tokens_high"));
    assert_eq!(n(&wide, "max_context_fit"), min("max_context_fit"));
    let note = wide["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["term"] == "pool_tokens_over_releases")
        .expect("the band says it covers releases");
    let says = format!(
        "{engine} {} to {}",
        releases[0],
        releases[releases.len() - 1]
    );
    assert!(note["source"].as_str().unwrap().contains(&says), "{note}");
}

#[test]
fn an_unknown_vllm_release_gets_the_band_of_every_release_and_a_pinned_one_its_own() {
    let releases: Vec<String> = (11..=33).map(|m| format!("0.{m}.0")).collect();
    let refs: Vec<&str> = releases.iter().map(String::as_str).collect();
    band_covers_every_release("vllm", &refs, VLLM);
    let pinned = capacity(Some("vllm=0.33.0"), VLLM);
    let wide = capacity(None, VLLM);
    assert!(n(&pinned, "pool_tokens_low") > n(&wide, "pool_tokens_low"));
    assert!(!pinned["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["term"] == "pool_tokens_over_releases"));
}

#[test]
fn an_unknown_sglang_release_gets_the_band_of_every_release() {
    let mut releases: Vec<String> = (6..=10).map(|p| format!("0.4.{p}")).collect();
    releases.extend((0..=23).map(|p| format!("0.5.{p}")));
    let refs: Vec<&str> = releases.iter().map(String::as_str).collect();
    band_covers_every_release("sglang", &refs, SGLANG);
}

#[test]
fn ver002_names_the_releases_the_band_covers_and_options_narrow_them() {
    let got = findings(&check(&[], &format!("{VLLM}\n")));
    let m = message(&got, "VER002");
    assert!(m.contains("covers releases 0.11.0–0.33.0"), "{m}");
    assert!(m.contains("point estimate is for 0.33.0"), "{m}");
    // --cudagraph-metrics exists from vLLM 0.13.0 on (vllm_flags.toml).
    let got = findings(&check(&[], &format!("{VLLM} --cudagraph-metrics\n")));
    let m = message(&got, "VER002");
    assert!(m.contains("covers releases 0.13.0–0.33.0"), "{m}");
    // A pinned release: no VER002.
    let got = findings(&check(
        &["--engine-version", "vllm=0.19.0"],
        &format!("{VLLM}\n"),
    ));
    assert!(!got.iter().any(|(r, _)| r == "VER002"), "{got:?}");
}

#[test]
fn a_pd_server_of_unknown_release_warns_about_ver001_unless_its_options_need_the_fix() {
    let pd = format!("{SGLANG} --disaggregation-mode prefill");
    let got = findings(&check(&[], &format!("{pd}\n")));
    let m = message(&got, "VER002");
    assert!(m.contains("VER001 cannot be ruled out"), "{m}");
    // --enable-watermark exists from SGLang 0.5.22 on, the release with VER001's fix.
    let got = findings(&check(&[], &format!("{pd} --enable-watermark\n")));
    let m = message(&got, "VER002");
    assert!(m.contains("covers releases 0.5.22–0.5.23"), "{m}");
    assert!(!m.contains("VER001"), "{m}");
}

#[test]
fn an_option_only_older_releases_accept_is_ver003_when_the_release_is_unknown() {
    // vLLM 0.10.0 has --num-scheduler-steps and 0.10.1.1 does not; --max-seq-len-to-capture is
    // in 0.10.0 to 0.10.2 (vllm/engine/arg_utils.py of each wheel, vllm_flags.toml).
    let line = format!("{VLLM} --max-seq-len-to-capture 8192 --num-scheduler-steps 1\n");
    let got = findings(&check(&[], &line));
    let rules: Vec<&str> = got.iter().map(|(r, _)| r.as_str()).collect();
    assert!(
        !rules.contains(&"CFG001") && !rules.contains(&"CFG002"),
        "{got:?}"
    );
    let ver003: Vec<&str> = got
        .iter()
        .filter(|(r, _)| r == "VER003")
        .map(|(_, m)| m.as_str())
        .collect();
    assert_eq!(ver003.len(), 2, "{got:?}");
    assert!(ver003.iter().any(|m| m.starts_with(
        "--max-seq-len-to-capture is accepted by vllm 0.10.0 to 0.10.2 (older than 0.11.0"
    ) && m.contains("removed in 0.11.0")));
    assert!(ver003.iter().any(|m| m
        .starts_with("--num-scheduler-steps is accepted by vllm 0.10.0 (older")
        && m.contains("removed in 0.10.1.1")));
    // No release kvlint models accepts them: the band still covers every modelled release.
    assert!(message(&got, "VER002").contains("covers releases 0.11.0–0.33.0"));
    // KAITO's file also gives --swap-space, which vLLM removed in 0.18.0: that one narrows the
    // band, the options of releases before 0.11.0 do not.
    let got = findings(&check(
        &[],
        &format!("{} --swap-space 4\n", line.trim_end()),
    ));
    let m = message(&got, "VER002");
    assert!(m.contains("covers releases 0.11.0–0.17.0"), "{m}");
    // Pinned: the engine's own answer (the option is gone from 0.11.0 on).
    let got = findings(&check(&["--engine-version", "vllm=0.33.0"], &line));
    let rules: Vec<&str> = got.iter().map(|(r, _)| r.as_str()).collect();
    assert!(
        rules.contains(&"CFG002") && !rules.contains(&"VER003"),
        "{got:?}"
    );
    // An option no release has stays CFG001, release known or not.
    let got = findings(&check(&[], &format!("{VLLM} --no-such-option 1\n")));
    assert!(got.iter().any(|(r, _)| r == "CFG001"), "{got:?}");
}

#[test]
fn an_option_removed_in_a_modelled_release_narrows_the_band_to_the_releases_before() {
    // SGLang removed --cuda-graph-max-bs in 0.5.20 (fixtures/CFG002).
    let line = format!("{SGLANG} --cuda-graph-max-bs 160\n");
    let got = findings(&check(&[], &line));
    let m = message(&got, "VER003");
    assert!(m.contains("removed in 0.5.20"), "{m}");
    let m = message(&got, "VER002");
    assert!(m.contains("covers releases 0.4.6–0.5.19"), "{m}");
    assert!(m.contains("point estimate is for 0.5.19"), "{m}");
}

#[test]
fn a_bare_release_applies_only_to_the_engine_that_has_it() {
    // 0.5.20 is an SGLang release and no vLLM one: the vLLM launch's release stays unknown.
    let script = format!("{VLLM}\n{SGLANG} --disaggregation-mode prefill\n");
    let doc = check(&["--engine-version", "0.5.20"], &script);
    let versions: Vec<&str> = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["engine_version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["0.33.0", "0.5.20"]);
    let got = findings(&doc);
    let rules: Vec<&str> = got.iter().map(|(r, _)| r.as_str()).collect();
    assert_eq!(rules, ["VER001", "VER002"], "{got:?}");
    assert!(message(&got, "VER002").starts_with(
        "the vllm release this launch runs is unknown (no image and no --engine-version for vllm)"
    ));
}

#[test]
fn kvlint_toml_gives_one_release_per_engine() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("kvlint.toml");
    std::fs::write(&cfg, "engine-version = \"sglang=0.5.20,vllm=0.19.0\"\n").unwrap();
    let script = format!("{VLLM}\n{SGLANG}\n");
    let doc = check(&["--config", cfg.to_str().unwrap()], &script);
    let versions: Vec<&str> = doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["engine_version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["0.19.0", "0.5.20"]);
    assert!(findings(&doc).is_empty(), "{:?}", findings(&doc));
}

#[test]
fn an_option_that_changed_its_dest_does_not_narrow_the_band() {
    // SGLang has --grpc-http-sidecar-port from 0.5.11 on; 0.5.16 made it an alias of
    // --smg-http-sidecar-port, with another dest (sglang_flags.toml).
    let got = findings(&check(
        &[],
        &format!("{SGLANG} --grpc-http-sidecar-port 9000\n"),
    ));
    let m = message(&got, "VER002");
    assert!(m.contains("covers releases 0.5.11–0.5.23"), "{m}");
}

/// `kvlint capacity --format json` for a launch, with `--engine-version V`: the version planned.
fn planned_version(version: &str, launch: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kvlint"))
        .args([
            "capacity",
            "--gpu",
            "h100",
            "--format",
            "json",
            "--engine-version",
            version,
            "--",
        ])
        .args(launch)
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let one = if json.is_array() { &json[0] } else { &json };
    Ok(one["engine_version"]
        .as_str()
        .unwrap_or_default()
        .to_string())
}

#[test]
fn engine_version_is_given_per_engine() {
    let vllm = ["vllm", "serve", "Qwen/Qwen3-8B"];
    let sglang = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "Qwen/Qwen3-8B",
    ];
    let both = "sglang=0.5.20,vllm=0.19.0";
    assert_eq!(planned_version(both, &vllm).unwrap(), "0.19.0");
    assert_eq!(planned_version(both, &sglang).unwrap(), "0.5.20");
    // A bare 0.5.20 is an SGLang release: a vLLM launch does not become "vllm 0.5.20".
    assert_eq!(planned_version("0.5.20", &sglang).unwrap(), "0.5.20");
    assert_ne!(planned_version("0.5.20", &vllm).unwrap(), "0.5.20");
    assert_eq!(planned_version("0.19.0", &vllm).unwrap(), "0.19.0");
    assert!(planned_version("tgi=1.0", &vllm)
        .unwrap_err()
        .contains("not an engine"));
    assert!(planned_version("vllm=x", &vllm).is_err());
}

#[test]
fn versions_that_do_not_exist_are_not_modelled_silently() {
    let trt = "trtllm-serve Qwen/Qwen3-8B --max_seq_len 8192\n";
    let got = check_rules(&["--gpu", "h100", "--engine-version", "trtllm=5.0.0"], trt);
    assert!(got.contains(&"INP005".to_string()), "{got:?}");
    let got = check_rules(&["--gpu", "h100", "--engine-version", "trtllm=1.0.0"], trt);
    assert!(!got.contains(&"INP005".to_string()), "{got:?}");
    let vllm = "vllm serve Qwen/Qwen3-8B --max-model-len 8192\n";
    let got = check_rules(&["--gpu", "h100", "--engine-version", "vllm=0.40"], vllm);
    assert!(got.contains(&"INP005".to_string()), "{got:?}");
}

#[test]
fn unknown_versions_say_so_and_pipeline_stages_need_layers() {
    let vllm = "vllm serve Qwen/Qwen3-8B --max-model-len 8192\n";
    let got = check_rules(&["--gpu", "h100"], vllm);
    assert_eq!(got, ["VER002"]);
    let got = check_rules(&["--gpu", "h100", "--engine-version", "vllm=0.19.0"], vllm);
    assert!(got.is_empty(), "{got:?}");
    // Qwen3-8B has 36 decoder layers.
    let pp = "vllm serve Qwen/Qwen3-8B --max-model-len 8192 -pp 40\n";
    let got = check_rules(&["--gpu", "h100x40", "--engine-version", "vllm=0.19.0"], pp);
    assert!(got.contains(&"CFG004".to_string()), "{got:?}");
}

/// `VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS` in the launch's environment decides whether the
/// profile subtracts the CUDA-graph estimate: the variable exists from 0.18 (default 0) and is on
/// by default from 0.20. Setting it on 0.18 shrinks the pool, clearing it on 0.22 grows it, and
/// 0.17, which has no such variable, ignores it. A value that is not known is INP004.
#[test]
fn the_cuda_graph_estimate_follows_the_launch_environment() {
    let pool = |v: &str, env: &str| n(&capacity(Some(v), &format!("{env}{VLLM}")), "pool_tokens");
    let on = "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 ";
    let off = "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 ";
    assert!(pool("0.18.0", on) < pool("0.18.0", ""));
    assert_eq!(pool("0.18.0", off), pool("0.18.0", ""));
    assert!(pool("0.22.0", off) > pool("0.22.0", ""));
    assert_eq!(pool("0.22.0", on), pool("0.22.0", ""));
    assert_eq!(pool("0.17.0", on), pool("0.17.0", ""));

    let script = format!("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=$PROFILE {VLLM}\n");
    let all = findings(&check(&["--engine-version", "0.22.0"], &script));
    assert!(message(&all, "INP004").contains("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS"));
}
