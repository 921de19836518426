//! Issue 10's acceptance points that no other test file holds: the chart-template note with and
//! without `helm` on PATH, the summary line in SARIF and GitHub output, and a launch value left
//! unknown kept as `null` in JSON rather than replaced by the engine default.

mod common;
use common::{kvlint, kvlint_env};

const TEMPLATE: &str = "fixtures/extract/chart/templates/deployment.yaml";

/// The help of the INP006 finding on a chart template, with `PATH` set to `path`.
fn render_help(path: &str) -> String {
    let run = kvlint_env(
        &["check", "--format", "json", TEMPLATE],
        None,
        &[("PATH", path)],
    );
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
    let f = &doc["findings"][0];
    assert_eq!(f["rule"], "INP006", "{}", run.stdout);
    f["help"].as_str().unwrap().to_string()
}

#[test]
fn a_chart_template_offers_the_render_command_and_says_when_helm_is_missing() {
    let with = tempfile::tempdir().unwrap();
    let helm = with.path().join("helm");
    std::fs::write(&helm, "#!/bin/sh\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&helm, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let without = tempfile::tempdir().unwrap();
    let command = "`helm template fixtures/extract/chart | kvlint check -`";
    let offered = render_help(with.path().to_str().unwrap());
    assert!(offered.contains(command), "{offered}");
    assert!(!offered.contains("not on PATH"), "{offered}");
    let noted = render_help(without.path().to_str().unwrap());
    assert!(noted.contains(command), "{noted}");
    assert!(noted.contains("(helm is not on PATH here)"), "{noted}");
}

#[test]
fn sarif_and_github_carry_the_summary_line() {
    let args = |format| {
        [
            "check",
            "--format",
            format,
            "--gpu",
            "h200",
            "fixtures/pipeline/no-launch.yaml",
            "fixtures/GPU002/pass-flag-only.sh",
        ]
    };
    let sarif: serde_json::Value =
        serde_json::from_str(&kvlint(&args("sarif")).stdout).expect("sarif");
    assert_eq!(
        sarif["runs"][0]["properties"]["summary"],
        "checked 2 files, 1 launch"
    );
    let github = kvlint(&args("github")).stdout;
    assert!(
        github.contains("::notice title=kvlint::checked 2 files, 1 launch"),
        "{github}"
    );
    let human = kvlint(&args("human")).stdout;
    assert!(human.contains("checked 2 files, 1 launch:"), "{human}");
}

#[test]
fn an_unresolved_tp_is_null_in_json_not_the_engine_default() {
    let run = kvlint(&[
        "check",
        "--format",
        "json",
        "--gpu",
        "h200",
        "fixtures/pipeline/unresolved-tp.sh",
    ]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
    let l = &doc["launches"][0];
    assert_eq!(l["tp"], serde_json::Value::Null);
    // What the launch leaves to the engine is the engine's default; what it writes is kept.
    assert_eq!(l["pp"], 1);
    assert_eq!(l["context_length"], 32768);
    assert_eq!(l["model"], "Qwen/Qwen3-8B");
    assert_eq!(run.code, 1);
}

/// A container `command` (or `args`) written as one string is split as a shell would, each word
/// pointing at its own bytes.
#[test]
fn a_container_command_given_as_a_string_is_a_launch() {
    use kvlint::extract::extract;
    use kvlint::source::Sources;
    let path = "fixtures/extract/k8s/command-string.yaml";
    let text = std::fs::read_to_string(common::root().join(path)).unwrap();
    let mut sources = Sources::default();
    let file = sources.add(path, text);
    let out = extract(file, &sources);
    assert!(out.findings.is_empty(), "{:?}", out.findings);
    let [launch] = out.launches.as_slice() else {
        panic!("{:?}", out.launches)
    };
    let args: Vec<(&str, &str)> = launch
        .args
        .iter()
        .map(|a| (a.text.as_str(), sources.text(a.loc)))
        .collect();
    assert_eq!(
        args,
        [
            ("--model-path", "--model-path"),
            ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
            ("--context-length", "--context-length"),
            ("32768", "32768"),
            ("--served-model-name", "--served-model-name"),
            ("qwen 8b", "'qwen 8b'"),
        ]
    );
    assert_eq!(launch.placement.gpus_per_pod, Some(2));
}
