//! Hostile and broken inputs end in bounded time with a clear verdict: symlink loops, FIFOs,
//! endless stdin, findings past column 65,535, closed or full stdout, suppressions hidden in
//! quotes, escape sequences from the input. Each runs the real binary under a time limit.

mod common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const INCIDENT: &str = "fixtures/incident/prefill.sh";

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_kvlint"))
}

/// Runs kvlint with stdin and stdout as given, and fails the test if it runs past `limit`.
fn run_with(args: &[&str], stdin: Stdio, stdout: Stdio, limit: Duration) -> Out {
    let mut child = Command::new(binary())
        .args(args)
        .current_dir(common::root())
        .env("NO_COLOR", "1")
        .env_remove("KVLINT_GPU")
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn kvlint");
    let started = Instant::now();
    let mut out = child.stdout.take();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = out.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("kvlint {args:?} ran past {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut stderr);
    }
    Out {
        code: status.code().unwrap_or(-1),
        stdout: reader.join().unwrap_or_default(),
        stderr,
    }
}

fn run(args: &[&str]) -> Out {
    run_with(args, Stdio::null(), Stdio::piped(), Duration::from_secs(60))
}

fn incident() -> String {
    std::fs::read_to_string(common::root().join(INCIDENT)).expect("incident fixture")
}

fn kv001_count(json: &str) -> usize {
    let doc: serde_json::Value = serde_json::from_str(json).expect("JSON report");
    doc["findings"]
        .as_array()
        .map_or(0, |f| f.iter().filter(|f| f["rule"] == "KV001").count())
}

fn check_json(path: &Path, extra: &[&str]) -> Out {
    let p = path.to_str().expect("utf-8 path");
    let mut args = vec!["check", "--gpu", "h200x8", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(p);
    run(&args)
}

#[cfg(unix)]
#[test]
fn symlink_loops_end_and_each_real_directory_is_read_once() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().expect("tempdir");
    let b = dir.path().join("a/b");
    std::fs::create_dir_all(&b).expect("mkdir");
    std::fs::write(b.join("prefill.sh"), incident()).expect("write");
    symlink("..", b.join("up1")).expect("symlink");
    symlink("../..", b.join("up2")).expect("symlink");
    symlink(".", dir.path().join("self")).expect("symlink");
    symlink("a/b", dir.path().join("again")).expect("symlink");
    let out = check_json(dir.path(), &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(kv001_count(&out.stdout), 1, "{}", out.stdout);
}

#[cfg(unix)]
#[test]
fn fifos_are_skipped_in_directories_and_refused_when_named() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("prefill.sh"), incident()).expect("write");
    let fifo = dir.path().join("x.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let out = check_json(dir.path(), &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(kv001_count(&out.stdout), 1);
    assert!(
        out.stderr.contains("x.yaml: a FIFO, not a regular file"),
        "{}",
        out.stderr
    );
    let named = check_json(&fifo, &[]);
    assert_eq!(named.code, 2);
    assert!(
        named.stderr.contains("not a regular file"),
        "{}",
        named.stderr
    );
}

#[test]
fn gitignored_files_are_skipped_unless_asked() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join(".gitignore"), "generated/\n").expect("write");
    std::fs::create_dir(dir.path().join("generated")).expect("mkdir");
    std::fs::write(dir.path().join("generated/prefill.sh"), incident()).expect("write");
    let out = check_json(dir.path(), &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(kv001_count(&out.stdout), 0);
    let out = check_json(dir.path(), &["--no-ignore-vcs"]);
    assert_eq!(kv001_count(&out.stdout), 1);
}

#[cfg(unix)]
#[test]
fn endless_stdin_stops_at_the_size_cap() {
    let zero = std::fs::File::open("/dev/zero").expect("/dev/zero");
    let out = run_with(
        &["check", "--gpu", "h200x8", "--max-input-size", "1M", "-"],
        zero.into(),
        Stdio::piped(),
        Duration::from_secs(30),
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("<stdin> is larger than 1048576 bytes; --max-input-size raises the limit"),
        "{}",
        out.stderr
    );
}

/// A single-line JSON manifest and a long shell line put the finding past column 65,535,
/// where miette's layout used to panic.
#[test]
fn findings_past_column_65535_are_rendered() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pad = "x".repeat(70_000);
    let manifest = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "glm", "annotations": {"pad": pad}},
        "spec": {"template": {"spec": {"containers": [{"name": "sglang",
            "command": ["python3", "-m", "sglang.launch_server"],
            "args": ["--model-path", "zai-org/GLM-5.3", "--tp-size", "8",
                "--context-length", "1048576", "--mem-fraction-static", "0.88"]}]}}}
    });
    let json = dir.path().join("one-line.json");
    std::fs::write(&json, manifest.to_string()).expect("write");
    let script = dir.path().join("long.sh");
    std::fs::write(
        &script,
        format!(
            "python3 -m sglang.launch_server --model-path zai-org/GLM-5.3 --tp-size 8 --served-model-name {pad} --context-length 1048576\n"
        ),
    )
    .expect("write");
    for path in [&json, &script] {
        let out = run(&["check", "--gpu", "h200x8", path.to_str().expect("path")]);
        assert_eq!(out.code, 1, "{}", out.stderr);
        assert!(out.stdout.contains("KV001"), "{}", out.stderr);
        assert!(
            out.stdout.lines().all(|l| l.chars().count() < 1000),
            "a frame line is not cut"
        );
    }
}

/// Enough launches that the report outgrows a pipe's buffer.
fn many_launches(dir: &Path) -> PathBuf {
    let path = dir.join("many.sh");
    let line = "vllm serve Qwen/Qwen3-8B --max-model-len 4096 --bogus-flag 1\n";
    std::fs::write(&path, line.repeat(150)).expect("write");
    path
}

#[cfg(unix)]
#[test]
fn a_closed_stdout_ends_quietly_and_a_full_one_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let many = many_launches(dir.path());
    let path = many.to_str().expect("path");
    let mut child = Command::new(binary())
        .args(["check", "--gpu", "h200x8", path])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut first = [0u8; 1];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("one byte");
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");

    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let out = run_with(
        &["check", "--gpu", "h200x8", path],
        Stdio::null(),
        full.into(),
        Duration::from_secs(60),
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("cannot write"), "{}", out.stderr);
}

#[test]
fn a_suppression_inside_quotes_or_without_a_reason_suppresses_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let quoted = incident().replace(
        "  --context-length 1048576 \\",
        "  --context-length 1048576 --served-model-name \"x # kvlint: ignore[KV001] because\" \\",
    );
    let path = dir.path().join("quoted.sh");
    std::fs::write(&path, quoted).expect("write");
    let out = check_json(&path, &["--engine-version", "0.5.20"]);
    assert_eq!(kv001_count(&out.stdout), 1, "{}", out.stdout);
    // The same comment as a comment does suppress.
    let outside = incident().replace(
        "python3 -m sglang.launch_server",
        "# kvlint: ignore[KV001] because\npython3 -m sglang.launch_server",
    );
    std::fs::write(&path, outside).expect("write");
    let out = check_json(&path, &["--engine-version", "0.5.20"]);
    assert_eq!(kv001_count(&out.stdout), 0, "{}", out.stdout);

    for reason in ["\u{200b}", " \u{2060}\u{feff} ", "--"] {
        let text = incident().replace(
            "python3 -m sglang.launch_server",
            &format!("# kvlint: ignore[KV001] {reason}\npython3 -m sglang.launch_server"),
        );
        let path = dir.path().join("reason.sh");
        std::fs::write(&path, text).expect("write");
        let out = check_json(&path, &["--engine-version", "0.5.20"]);
        let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
        let rules: Vec<&str> = doc["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["rule"].as_str())
            .collect();
        assert!(rules.contains(&"KV001"), "{reason:?}: {rules:?}");
        assert!(rules.contains(&"SUP001"), "{reason:?}: {rules:?}");
    }
}

#[test]
fn escape_sequences_from_the_input_never_reach_the_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = incident().replace(
        "  --port 30000",
        "  --port 30000 \\\n  --served-model-name \"a\u{1b}[2J\u{1b}]0;owned\u{7}\u{9b}b\u{202e}\" \\\n  --bogus\u{1b}[31m 1",
    );
    let path = dir.path().join("escape.sh");
    std::fs::write(&path, text).expect("write");
    let out = run(&[
        "check",
        "--gpu",
        "h200x8",
        "--engine-version",
        "0.5.20",
        path.to_str().expect("path"),
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.contains("KV001"));
    assert!(out.stdout.contains("--bogus?[31m"), "{}", out.stdout);
    for c in ['\u{1b}', '\u{7}', '\u{9b}', '\u{202e}'] {
        assert!(!out.stdout.contains(c), "{c:?} reached stdout");
    }
}

/// A flag repeated 20,000 times is one CFG003 (from its first place to its last), found in
/// linear time: a lookup per repetition made this quadratic.
#[test]
fn a_flag_repeated_many_times_is_one_finding() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("repeated.sh");
    let flags = " --max-model-len 4096".repeat(20_000);
    std::fs::write(&path, format!("vllm serve Qwen/Qwen3-8B{flags}\n")).expect("write");
    let out = check_json(&path, &[]);
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    let cfg003: Vec<&serde_json::Value> = doc["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["rule"] == "CFG003")
        .collect();
    assert_eq!(cfg003.len(), 1, "{}", out.stdout);
    assert!(cfg003[0]["column"].as_u64() > Some(400_000));
}
