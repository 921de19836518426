//! Files kvlint is pointed at besides `check`'s inputs (issue 29, class 17): `--config`,
//! `--model-config`, an engine's `--config` file named by a launch, and `verify --launch`. Each
//! gets `check`'s regular-file check: a FIFO (which blocks its reader until a writer comes), a
//! device (`/dev/zero` never ends) or a link to either is refused with the file named, never read.

mod common;

use common::kvlint;
use std::path::{Path, PathBuf};

/// A FIFO, a link to `/dev/zero`, and `/dev/zero` itself, in `dir`.
fn hostile(dir: &Path, stem: &str, ext: &str) -> Vec<(PathBuf, &'static str)> {
    let fifo = dir.join(format!("{stem}-fifo.{ext}"));
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let link = dir.join(format!("{stem}-link.{ext}"));
    std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
    vec![
        (fifo, "a FIFO"),
        (link, "a device"),
        (PathBuf::from("/dev/zero"), "a device"),
    ]
}

fn refused(args: &[&str], path: &Path, what: &str) {
    let run = kvlint(args);
    assert_eq!(run.code, 2, "{args:?}: {}{}", run.stdout, run.stderr);
    let said = format!("{} is {what}, not a regular file", path.display());
    assert!(
        run.stderr.contains(&said) || run.stderr.contains(&format!("{what}, not a regular file")),
        "{args:?}: {}",
        run.stderr
    );
}

#[test]
fn config_and_model_config_must_be_regular_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let incident = "fixtures/incident/prefill.sh";
    for (path, what) in hostile(dir.path(), "kvlint", "toml") {
        let p = path.to_str().unwrap();
        refused(&["check", "--config", p, incident], &path, what);
    }
    for (path, what) in hostile(dir.path(), "config", "json") {
        let p = path.to_str().unwrap();
        refused(
            &[
                "capacity",
                "--gpu",
                "h200x8",
                "--model-config",
                p,
                "--",
                "python3",
                "-m",
                "sglang.launch_server",
                "--model-path",
                "Qwen/Qwen3-8B",
            ],
            &path,
            what,
        );
    }
}

/// An engine `--config` file beside the script that names it: refused with a finding naming the
/// file, as an unreadable one is; the run ends.
#[test]
fn an_engine_config_file_that_is_a_fifo_or_device_is_not_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    // `/dev/zero` itself has no .yaml name, which the engines refuse first.
    for (path, what) in hostile(dir.path(), "engine", "yaml").into_iter().take(2) {
        let script = dir.path().join("serve.sh");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\nvllm serve Qwen/Qwen3-8B --config {}\n",
                path.display()
            ),
        )
        .expect("script");
        let run = kvlint(&[
            "check",
            "--gpu",
            "h200",
            "--format",
            "json",
            script.to_str().unwrap(),
        ]);
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect(&run.stderr);
        let messages: Vec<&str> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["message"].as_str())
            .collect();
        assert!(
            messages
                .iter()
                .any(|m| m.contains(&format!("{what}, not a regular file"))),
            "{what}: {messages:?}"
        );
        assert_ne!(run.code, 0, "{}", run.stdout);
    }
}

#[test]
fn a_verify_launch_file_must_be_a_regular_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = "fixtures/verify/sglang-0.5.20-incident-prefill.log";
    for (path, what) in hostile(dir.path(), "launch", "sh") {
        let p = path.to_str().unwrap();
        refused(
            &["verify", "--log", log, "--gpu", "h200x8", "--launch", p],
            &path,
            what,
        );
    }
}
