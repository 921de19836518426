//! Replays the fuzz corpus (fuzz/corpus/<target>/*: seeds from our fixtures, and every input a
//! fuzzer found that once failed) through the fuzz targets' own harness, on stable, so CI guards
//! what the nightly-only fuzzers found.

#[path = "../fuzz/harness.rs"]
mod harness;

use std::path::PathBuf;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} is empty", dir.display());
    for file in files {
        let data = std::fs::read(&file).expect("read corpus file");
        let result = std::panic::catch_unwind(|| run(&data));
        assert!(result.is_ok(), "{} panicked", file.display());
    }
}

#[test]
fn shell_corpus() {
    replay("shell", harness::shell);
}

#[test]
fn shell_budget_corpus() {
    replay("shell_budget", |data| harness::shell_budget(data, None));
}

#[test]
fn k8s_yaml_corpus() {
    replay("k8s_yaml", harness::k8s_yaml);
}

#[test]
fn engine_argv_corpus() {
    replay("engine_argv", harness::engine_argv);
}

#[test]
fn admission_corpus() {
    replay("admission", harness::admission);
}

#[test]
fn verify_log_corpus() {
    replay("verify_log", harness::verify_log);
}
