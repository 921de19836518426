//! The GitHub Action's install step (`scripts/kvlint-action.sh install`) against releases served
//! from a local file server (Python's `http.server`): the release binary of the `version:` input,
//! checked against its SHA-256; a tampered archive is refused; without a release, the fallback
//! builds from the action's ref. Archives are made by `scripts/release.sh package`, as the release
//! workflow makes them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A static file server on loopback, stopped when dropped.
struct FileServer {
    child: Child,
    url: String,
}

impl FileServer {
    fn serve(dir: &Path) -> FileServer {
        let mut child = Command::new("python3")
            .args([
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
                "--directory",
            ])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 runs http.server");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("server banner");
        // "Serving HTTP on 127.0.0.1 port 40123 (http://127.0.0.1:40123/) ..."
        let port = line
            .split_whitespace()
            .skip_while(|w| *w != "port")
            .nth(1)
            .unwrap_or_else(|| panic!("no port in {line:?}"))
            .to_string();
        FileServer {
            child,
            url: format!("http://127.0.0.1:{port}"),
        }
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Publishes the built kvlint as release `v{version}` for x86_64 Linux, the way release.yml does.
/// The test build's debug info is stripped first, as the release profile does, to keep the
/// archive small.
fn publish(releases: &Path, version: &str) -> PathBuf {
    let out = releases.join(format!("v{version}"));
    let binary = releases.join("kvlint");
    std::fs::copy(env!("CARGO_BIN_EXE_kvlint"), &binary).unwrap();
    let _ = Command::new("strip").arg(&binary).status();
    let status = Command::new("bash")
        .arg(root().join("scripts/release.sh"))
        .args(["package", "x86_64-unknown-linux-musl"])
        .arg(&binary)
        .arg(&out)
        .status()
        .expect("release.sh runs");
    assert!(status.success());
    out.join("kvlint-x86_64-unknown-linux-musl.tar.gz")
}

struct Install {
    /// The runner's temp dir, which holds what the fallback built.
    _runner_temp: tempfile::TempDir,
    code: i32,
    log: String,
    github_path: String,
    cargo_calls: String,
}

/// Runs the install step on an x86_64 Linux runner with no kvlint on PATH. `cargo` on PATH is
/// a recorder: building kvlint for real takes minutes, and the test is about which path is taken.
fn install(release_url: &str, version: &str) -> Install {
    let dir = tempfile::tempdir().unwrap();
    let (bin, github_path, calls) = (
        dir.path().join("bin"),
        dir.path().join("github_path"),
        dir.path().join("cargo_calls"),
    );
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(&github_path, "").unwrap();
    std::fs::write(&calls, "").unwrap();
    let recorder = format!(
        "#!/bin/sh\necho \"$@\" >>'{calls}'\nwhile [ $# -gt 0 ]; do [ \"$1\" = --root ] && root=$2; shift; done\n\
         mkdir -p \"$root/bin\" && cp '{kvlint}' \"$root/bin/kvlint\"\n",
        calls = calls.display(),
        kvlint = env!("CARGO_BIN_EXE_kvlint"),
    );
    let cargo = bin.join("cargo");
    std::fs::write(&cargo, recorder).unwrap();
    Command::new("chmod")
        .arg("+x")
        .arg(&cargo)
        .status()
        .unwrap();
    let out = Command::new("bash")
        .arg(root().join("scripts/kvlint-action.sh"))
        .arg("install")
        .env_clear()
        .env(
            "PATH",
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        )
        .env("HOME", dir.path())
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("RUNNER_TEMP", dir.path())
        .env("GITHUB_PATH", &github_path)
        .env("GITHUB_ACTION_PATH", root())
        .env("INPUT_VERSION", version)
        .env("KVLINT_RELEASE_URL", release_url)
        .output()
        .expect("bash runs the action script");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    let (github_path, cargo_calls) = (read(&github_path), read(&calls));
    Install {
        _runner_temp: dir,
        code: out.status.code().unwrap_or(-1),
        log: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        github_path,
        cargo_calls,
    }
}

fn kvlint_on(github_path: &str) -> String {
    let dir = github_path.lines().last().expect("a PATH entry");
    let out = Command::new(Path::new(dir).join("kvlint"))
        .arg("--version")
        .output()
        .expect("the installed kvlint runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_release_binary_is_downloaded_and_checked() {
    let releases = tempfile::tempdir().unwrap();
    publish(releases.path(), "0.1.0");
    let server = FileServer::serve(releases.path());
    let run = install(&server.url, "v0.1.0");
    assert_eq!(run.code, 0, "{}", run.log);
    assert!(
        run.log.contains(
            "kvlint 0.1.0: release binary for x86_64-unknown-linux-musl, SHA-256 checked"
        ),
        "{}",
        run.log
    );
    assert_eq!(run.cargo_calls, "", "no build when a release matches");
    assert!(kvlint_on(&run.github_path).starts_with("kvlint "));
}

#[test]
fn a_tampered_release_is_refused_and_not_replaced_by_a_build() {
    let releases = tempfile::tempdir().unwrap();
    let archive = publish(releases.path(), "0.1.0");
    let mut bytes = std::fs::read(&archive).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&archive, bytes).unwrap();
    let server = FileServer::serve(releases.path());
    let run = install(&server.url, "0.1.0");
    assert_ne!(run.code, 0, "{}", run.log);
    assert!(
        run.log.contains("does not match its published SHA-256"),
        "{}",
        run.log
    );
    assert_eq!(run.cargo_calls, "");
    assert_eq!(run.github_path, "");
}

#[test]
fn without_a_matching_release_kvlint_is_built_from_the_action_ref() {
    let releases = tempfile::tempdir().unwrap();
    publish(releases.path(), "0.1.0");
    let server = FileServer::serve(releases.path());
    let run = install(&server.url, "9.9.9");
    assert_eq!(run.code, 0, "{}", run.log);
    assert!(
        run.log
            .contains("no release binary of kvlint 9.9.9 for this runner"),
        "{}",
        run.log
    );
    let root_dir = root();
    let call = run.cargo_calls.trim();
    assert!(
        call.starts_with(&format!(
            "install --locked --profile dist --path {} --root ",
            root_dir.display()
        )),
        "{call}"
    );
    assert!(kvlint_on(&run.github_path).starts_with("kvlint "));
}

/// `cargo binstall kvlint` and the action look for the archive release.sh makes.
#[test]
fn binstall_metadata_names_the_release_archives() {
    let cargo: toml::Table = std::fs::read_to_string(root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let binstall = &cargo["package"]["metadata"]["binstall"];
    let url = binstall["pkg-url"].as_str().expect("pkg-url");
    assert_eq!(
        url,
        "{ repo }/releases/download/v{ version }/{ name }-{ target }.tar.gz"
    );
    assert_eq!(binstall["pkg-fmt"].as_str(), Some("tgz"));
    for gnu in ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"] {
        let musl = gnu.replace("gnu", "musl");
        let o = binstall["overrides"][gnu]["pkg-url"]
            .as_str()
            .expect("override");
        assert_eq!(o, url.replace("{ target }", &musl));
    }
    let yml = std::fs::read_to_string(root().join("action.yml")).unwrap();
    assert!(yml.contains("\n  version:\n") && yml.contains("${{ inputs.version }}"));
}
