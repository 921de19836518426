//! Runs the real `kvlint` binary from the repository root, as a user would.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The repository root: where cargo built the tests, or the current directory when they run
/// from a copy of the checkout on another machine (the GPU runner runs them from the root).
pub fn root() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    if built.is_dir() {
        built
    } else {
        std::env::current_dir().unwrap_or(built)
    }
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// The whole run as one text: command, exit code, stdout and stderr.
    pub fn transcript(&self, args: &[&str]) -> String {
        format!(
            "$ kvlint {}\nexit: {}\n--- stdout\n{}--- stderr\n{}",
            args.join(" "),
            self.code,
            self.stdout,
            self.stderr
        )
    }
}

pub fn kvlint(args: &[&str]) -> Run {
    kvlint_stdin(args, None)
}

/// The binary cargo built, or `kvlint` on PATH where the tests run on another machine
/// (the GPU runner copies only the binaries: `.gpu/bin` is on its PATH).
fn binary() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_kvlint"));
    if built.exists() {
        built
    } else {
        PathBuf::from("kvlint")
    }
}

/// Sets the environment every test run of kvlint gets: no GPU default, no colour, and no
/// Hugging Face Hub or cache (tests never reach the network; this machine's cache would make
/// results depend on what it downloaded).
pub fn hermetic(cmd: &mut Command) -> &mut Command {
    for var in [
        "KVLINT_GPU",
        "HF_HUB_CACHE",
        "HUGGINGFACE_HUB_CACHE",
        "HF_TOKEN",
        "HF_ENDPOINT",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("NO_COLOR", "1")
        .env("HF_HUB_OFFLINE", "1")
        .env("HF_HOME", "target/no-hf-home")
}

pub fn kvlint_stdin(args: &[&str], stdin: Option<&str>) -> Run {
    kvlint_env(args, stdin, &[])
}

/// Runs kvlint with extra environment variables (an empty value removes the variable).
pub fn kvlint_env(args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Run {
    // Tests plan with the GPUs they name, not this machine's: CUDA shows the binary no GPU unless
    // the test asks for this node's (`--gpu auto`, `gpus`, `probe`).
    let wants_node = args.iter().any(|a| matches!(*a, "auto" | "gpus" | "probe"));
    let mut cmd = Command::new(binary());
    hermetic(&mut cmd)
        .args(args)
        .current_dir(root())
        .env_remove("COLUMNS")
        .env_remove("CLICOLOR_FORCE");
    if !wants_node {
        cmd.env("CUDA_VISIBLE_DEVICES", "");
    }
    for (k, v) in env {
        if v.is_empty() {
            cmd.env_remove(k);
        } else {
            cmd.env(k, v);
        }
    }
    let mut child = cmd
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kvlint runs");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        pipe.write_all(text.as_bytes()).expect("stdin written");
    }
    let out = child.wait_with_output().expect("kvlint finishes");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Extra `kvlint check` arguments a fixture asks for in a `# kvlint-test: ARGS` line.
pub fn directive(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("# kvlint-test:"))
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .collect()
}

/// Whether a `needs an NVIDIA GPU` test runs here. Without `KVLINT_GPU_TESTS=1` it is skipped and
/// says so (cargo would print a bare "ok"); with it, a machine without a usable GPU fails the test.
pub fn gpu_or_skip(test: &str) -> bool {
    if std::env::var("KVLINT_GPU_TESTS").map_or(true, |v| v != "1") {
        eprintln!(
            "skipped {test}: needs an NVIDIA GPU; run with KVLINT_GPU_TESTS=1 on a GPU machine \
             (../shared/gpu/README.md)"
        );
        return false;
    }
    if let Err(e) = kvlint::gpu::nvml::inventory() {
        panic!("{test}: KVLINT_GPU_TESTS=1 asks for an NVIDIA GPU, but there is none usable: {e}");
    }
    true
}

/// The rule ids of a JSON report's findings, in order.
pub fn rules(doc: &serde_json::Value) -> Vec<&str> {
    doc["findings"]
        .as_array()
        .expect("a JSON report has findings")
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect()
}

/// The rule ids `kvlint check --format json ARGS -` reports for a script read from stdin.
pub fn check_rules(args: &[&str], script: &str) -> Vec<String> {
    let mut all = vec!["check", "--format", "json"];
    all.extend(args);
    all.push("-");
    let run = kvlint_stdin(&all, Some(script));
    let doc: serde_json::Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr));
    rules(&doc).into_iter().map(String::from).collect()
}
