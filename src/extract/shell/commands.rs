//! Finding launches: which command words start an engine, a nested shell or a container.
//! Everything here works on the expanded argv texts of one simple command.

use crate::launch::Engine;

/// An engine launch starting at word `j`: the engine and the index of its first argument.
///
/// Dynamo's workers (`python3 -m dynamo.sglang|dynamo.vllm|dynamo.trtllm`) count as launches of
/// the engine they wrap. Their command words stay visible in the launch's `command` span (its text
/// is `python3 -m dynamo.sglang`), so the engine reader can tell a wrapper's own flags from the
/// engine's. Routers (`sglang_router`, `dynamo.frontend`, `vllm-router`) are no launch.
pub fn match_launch(texts: &[&str], j: usize) -> Option<(Engine, usize)> {
    let cmd = basename(texts[j]);
    let next = texts.get(j + 1).copied();
    match (cmd, next) {
        ("vllm", Some("serve")) => return Some((Engine::Vllm, j + 2)),
        ("sglang", Some("serve")) => return Some((Engine::Sglang, j + 2)),
        ("trtllm-serve", _) => return trtllm_serve(next, j + 1),
        _ => {}
    }
    let (module, after) = match (cmd, next) {
        ("uv", Some("run")) => uv_module(texts, j + 2)?,
        _ if is_python(cmd) => python_module(texts, j + 1)?,
        _ => return None,
    };
    let engine = match module {
        // Dynamo's workers take the engine's own flags (ai-dynamo/dynamo components/src/dynamo/{sglang,vllm}/args.py).
        "sglang.launch_server" | "dynamo.sglang" => Engine::Sglang,
        // vllm/entrypoints/api_server.py (the demo server) parses AsyncEngineArgs like the
        // OpenAI server does (`AsyncEngineArgs.add_cli_args(parser)` in its `__main__`).
        "vllm.entrypoints.openai.api_server" | "vllm.entrypoints.api_server" | "dynamo.vllm" => {
            Engine::Vllm
        }
        // Dynamo's TRT-LLM worker has its own flags (components/src/dynamo/trtllm/utils/trtllm_utils.py).
        "dynamo.trtllm" => Engine::Trtllm,
        "tensorrt_llm.commands.serve" => return trtllm_serve(texts.get(after).copied(), after),
        // The `vllm` console script (vllm/entrypoints/cli/main.py, run as a module by its
        // `__main__` guard): only its `serve` subcommand starts a server.
        "vllm.entrypoints.cli.main" => {
            return (texts.get(after).copied() == Some("serve"))
                .then_some((Engine::Vllm, after + 1))
        }
        _ => return None,
    };
    Some((engine, after))
}

/// `trtllm-serve` is a click group whose default command is `serve` (tensorrt_llm/commands/serve.py
/// `main`): `trtllm-serve serve MODEL` and `trtllm-serve MODEL` both serve; the other commands
/// (`disaggregated` routers, MPI workers) are no engine launch.
fn trtllm_serve(first: Option<&str>, at: usize) -> Option<(Engine, usize)> {
    match first {
        Some("serve") => Some((Engine::Trtllm, at + 1)),
        Some(
            "disaggregated" | "disaggregated_mpi_worker" | "mm_embedding_serve" | "--help" | "-h",
        ) => None,
        _ => Some((Engine::Trtllm, at)),
    }
}

/// `python3`, `python3.12`, `python`.
fn is_python(cmd: &str) -> bool {
    cmd.strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The `-m MODULE` after interpreter options (`-u`, `-O`, `-W arg`, `-X opt`), and the index after it.
pub fn python_module<'a>(texts: &[&'a str], mut k: usize) -> Option<(&'a str, usize)> {
    loop {
        let t = *texts.get(k)?;
        match t {
            "-m" => return texts.get(k + 1).map(|m| (*m, k + 2)),
            "-W" | "-X" => k += 2,
            "-c" | "-" | "--" => return None,
            _ if t.starts_with("-m") => return Some((&t[2..], k + 1)),
            _ if t.starts_with('-') && !t.starts_with("--") => k += 1,
            _ => return None,
        }
    }
}

/// `uv run [OPTIONS] -m MODULE` (`--module`): uv runs the module with the project's Python
/// (docs.astral.sh/uv/reference/cli/#uv-run). Only switches may come before it here; an option
/// with a value (`--with vllm`) leaves the command unread rather than guessed.
fn uv_module<'a>(texts: &[&'a str], mut k: usize) -> Option<(&'a str, usize)> {
    loop {
        match *texts.get(k)? {
            "-m" | "--module" => return texts.get(k + 1).map(|m| (*m, k + 2)),
            t if t.starts_with("--module=") => return Some((&t["--module=".len()..], k + 1)),
            t if SWITCHES_OF_UV_RUN.contains(&t) => k += 1,
            _ => return None,
        }
    }
}

/// `uv run` switches that take no value (uv 0.9 `uv run --help`).
const SWITCHES_OF_UV_RUN: &[&str] = &[
    "--no-sync",
    "--frozen",
    "--locked",
    "--isolated",
    "--active",
    "--no-project",
    "--no-dev",
    "--all-extras",
    "--all-packages",
    "--offline",
    "--quiet",
    "-q",
    "--verbose",
    "-v",
];

/// A shell at word `j` and what it runs.
#[derive(Debug, PartialEq, Eq)]
pub enum Shell {
    /// `sh -c SCRIPT`: the index of SCRIPT.
    Script(usize),
    /// `bash`, `bash -s ...`: the script comes on standard input (a heredoc).
    Stdin,
}

/// `sh -c SCRIPT` or a shell reading its standard input, at `j`.
pub fn shell_at(texts: &[&str], j: usize) -> Option<Shell> {
    if !matches!(
        basename(texts[j]),
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "ash"
    ) {
        return None;
    }
    let mut k = j + 1;
    while let Some(opt) = texts
        .get(k)
        .filter(|t| t.len() > 1 && (t.starts_with('-') || t.starts_with('+')))
    {
        if opt.starts_with("--") {
            k += 1;
        } else if matches!(&opt[1..], "o" | "O") {
            k += 2;
        } else if opt.starts_with('-') && opt.contains('c') {
            // `bash -c -- SCRIPT`: `--` ends the options; the script is the word after it.
            let script = k + 1 + usize::from(texts.get(k + 1).is_some_and(|t| *t == "--"));
            return (script < texts.len()).then_some(Shell::Script(script));
        } else if opt.starts_with('-') && opt.contains('s') {
            return Some(Shell::Stdin);
        } else {
            k += 1;
        }
    }
    (k >= texts.len()).then_some(Shell::Stdin)
}

/// The word naming a script file that the command at `j` runs (`bash start.sh`, `./run.sh`).
pub fn script_file(texts: &[&str], j: usize) -> Option<usize> {
    let is_shell = matches!(basename(texts[j]), "sh" | "bash" | "dash" | "zsh" | "ksh");
    match texts.get(j + 1) {
        Some(t) if is_shell && !t.starts_with('-') && !t.is_empty() => Some(j + 1),
        _ => texts[j].ends_with(".sh").then_some(j),
    }
}

/// `docker run` / `podman run` at `j`: what it says about the container.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct DockerRun {
    /// Index of the image word.
    pub image: usize,
    /// Index of `--entrypoint`'s value.
    pub entrypoint: Option<usize>,
    /// Indexes of `-e`/`--env` values (`KEY=value`).
    pub env: Vec<usize>,
    /// Index of `--gpus`'s value.
    pub gpus: Option<usize>,
}

/// `docker run` options that take no value (docker cli/command/container/opts.go); every other
/// option takes one.
const DOCKER_RUN_SWITCHES: &[&str] = &[
    "--rm",
    "--detach",
    "--interactive",
    "--tty",
    "--privileged",
    "--init",
    "--read-only",
    "--publish-all",
    "--no-healthcheck",
    "--oom-kill-disable",
    "--sig-proxy",
    "--disable-content-trust",
    "--quiet",
    "--help",
];

pub fn docker_run(texts: &[&str], j: usize) -> Option<DockerRun> {
    if !matches!(basename(texts[j]), "docker" | "podman" | "nerdctl") {
        return None;
    }
    let mut k = j + 1;
    if texts.get(k).copied() == Some("container") {
        k += 1;
    }
    if texts.get(k).copied() != Some("run") {
        return None;
    }
    k += 1;
    let mut out = DockerRun::default();
    while let Some(&t) = texts.get(k) {
        if t == "--" {
            k += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        let (name, inline) = match t.split_once('=') {
            Some((n, _)) if t.starts_with("--") => (n, true),
            _ => (t, false),
        };
        let takes_value = if name.starts_with("--") {
            !DOCKER_RUN_SWITCHES.contains(&name)
        } else {
            // `-it`, `-dit`: a cluster of switches; `-e X`, `-p8000:8000`: a value.
            !name[1..]
                .chars()
                .all(|c| matches!(c, 'd' | 'i' | 't' | 'P' | 'q'))
        };
        let value = if inline || (!name.starts_with("--") && name.len() > 2 && takes_value) {
            Some(k)
        } else if takes_value {
            k += 1;
            Some(k)
        } else {
            None
        };
        match (name, value) {
            ("--entrypoint", Some(v)) => out.entrypoint = Some(v),
            ("--gpus", Some(v)) => out.gpus = Some(v),
            ("-e" | "--env", Some(v)) => out.env.push(v),
            _ => {}
        }
        k += 1;
    }
    (k < texts.len()).then_some(DockerRun { image: k, ..out })
}

/// GPUs a `docker run --gpus` value gives the container: `2`, `"device=0,1"`, `device=0`;
/// `all` is every GPU of the host, not known here.
pub fn docker_gpus(value: &str) -> Option<u32> {
    let value = value.trim_matches(|c| c == '"' || c == '\'');
    if let Ok(n) = value.parse() {
        return Some(n);
    }
    let devices = value.strip_prefix("device=")?;
    let devices = devices.trim_matches(|c| c == '"' || c == '\'');
    let n = devices
        .split(',')
        .take_while(|d| !d.contains('='))
        .filter(|d| !d.is_empty())
        .count();
    u32::try_from(n).ok().filter(|&n| n > 0)
}

/// The engine an image's entrypoint starts when `docker run` names no command, given the first
/// word after the image (`None`: none): see [`crate::extract::images`]. `vllm/vllm-openai` images
/// run `vllm serve` (vllm docker/Dockerfile, target `vllm-openai`: `ENTRYPOINT ["vllm", "serve"]`);
/// an image named for an engine (`quay.io/opendatahub/vllm`) runs it where the words are engine
/// options alone.
pub fn image_entrypoint(image: &str, first: Option<&str>) -> Option<Engine> {
    crate::extract::images::entrypoint(image, first)
}

pub fn basename(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// Words that may precede a command without being it (`then`, `do`, `{`, `!`).
pub fn is_reserved(word: &str) -> bool {
    matches!(word, "then" | "do" | "{" | "}" | "!" | "time")
}

/// Commands whose arguments mention engines without launching them (`echo vllm serve`).
pub const IGNORED_COMMANDS: &[&str] = &[
    "echo", "printf", "pip", "pip3", "grep", "egrep", "pgrep", "pkill", "kill", "killall", "cat",
    "which", "type", "logger", "test", "[", "[[",
];

#[cfg(test)]
mod tests {
    use super::*;

    fn argv<'a>(words: &[&'a str]) -> Vec<&'a str> {
        words.to_vec()
    }

    #[test]
    fn the_vllm_console_scripts_module_serves_only_with_serve() {
        let cases = [
            (
                &[
                    "python3",
                    "-m",
                    "vllm.entrypoints.cli.main",
                    "serve",
                    "Qwen/Qwen3-8B",
                ][..],
                Some((Engine::Vllm, 4)),
            ),
            (
                &["python", "-u", "-m", "vllm.entrypoints.cli.main", "serve"][..],
                Some((Engine::Vllm, 5)),
            ),
            (
                &[
                    "python3",
                    "-m",
                    "vllm.entrypoints.cli.main",
                    "bench",
                    "serve",
                ][..],
                None,
            ),
            (&["python3", "-m", "vllm.entrypoints.cli.main"][..], None),
            // sglang/cli/main.py has no `__main__` guard: as a module it runs nothing.
            (&["python3", "-m", "sglang.cli.main", "serve"][..], None),
        ];
        for (words, want) in cases {
            assert_eq!(match_launch(&argv(words), 0), want, "{words:?}");
        }
    }

    #[test]
    fn uv_run_of_a_module_is_the_modules_launch() {
        let cases = [
            (
                &["uv", "run", "-m", "sglang.launch_server", "--tp", "2"][..],
                Some((Engine::Sglang, 4)),
            ),
            (
                &[
                    "uv",
                    "run",
                    "--frozen",
                    "--module",
                    "vllm.entrypoints.openai.api_server",
                ][..],
                Some((Engine::Vllm, 5)),
            ),
            (
                &["uv", "run", "--module=sglang.launch_server"][..],
                Some((Engine::Sglang, 3)),
            ),
            (
                &["uv", "run", "--with", "vllm", "-m", "sglang.launch_server"][..],
                None,
            ),
            (
                &["uv", "run", "-m", "sglang_router.launch_router"][..],
                None,
            ),
        ];
        for (words, want) in cases {
            assert_eq!(match_launch(&argv(words), 0), want, "{words:?}");
        }
    }

    #[test]
    fn python_interpreter_options_before_dash_m() {
        let cases = [
            (
                &["python3", "-m", "sglang.launch_server", "--tp", "2"][..],
                Some((Engine::Sglang, 3)),
            ),
            (
                &[
                    "python3.12",
                    "-u",
                    "-O",
                    "-X",
                    "dev",
                    "-m",
                    "sglang.launch_server",
                ][..],
                Some((Engine::Sglang, 7)),
            ),
            (
                &[
                    "python",
                    "-Wignore",
                    "-m",
                    "vllm.entrypoints.openai.api_server",
                ][..],
                Some((Engine::Vllm, 4)),
            ),
            (
                &["sglang", "serve", "--model-path", "x"][..],
                Some((Engine::Sglang, 2)),
            ),
            (
                &["python", "-m", "vllm.entrypoints.api_server"][..],
                Some((Engine::Vllm, 3)),
            ),
            (
                &["python3", "-m", "dynamo.sglang", "--model-path", "m"][..],
                Some((Engine::Sglang, 3)),
            ),
            (
                &["python3", "-m", "dynamo.vllm", "--model", "m"][..],
                Some((Engine::Vllm, 3)),
            ),
            (
                &["python3", "-m", "dynamo.frontend", "--http-port", "8000"][..],
                None,
            ),
            (&["python3", "-m", "sglang_router.launch_router"][..], None),
            (&["python3", "-m", "sglang_router.launch_server"][..], None),
            (
                &["python3", "serve.py", "-m", "sglang.launch_server"][..],
                None,
            ),
            (&["pythonista", "-m", "sglang.launch_server"][..], None),
            (&["vllm", "bench"][..], None),
        ];
        for (words, want) in cases {
            assert_eq!(match_launch(&argv(words), 0), want, "{words:?}");
        }
    }

    #[test]
    fn trtllm_serve_with_and_without_its_serve_command() {
        let cases = [
            (
                &["trtllm-serve", "serve", "m", "--tp_size", "2"][..],
                Some((Engine::Trtllm, 2)),
            ),
            (
                &["/usr/local/bin/trtllm-serve", "m"][..],
                Some((Engine::Trtllm, 1)),
            ),
            (
                &["trtllm-serve", "--port", "8000", "m"][..],
                Some((Engine::Trtllm, 1)),
            ),
            (
                &["python3", "-m", "tensorrt_llm.commands.serve", "serve", "m"][..],
                Some((Engine::Trtllm, 4)),
            ),
            (
                &["python3", "-m", "tensorrt_llm.commands.serve", "m"][..],
                Some((Engine::Trtllm, 3)),
            ),
            (
                &["python3", "-m", "dynamo.trtllm", "--model-path", "m"][..],
                Some((Engine::Trtllm, 3)),
            ),
            (&["trtllm-serve", "disaggregated", "-c", "d.yaml"][..], None),
        ];
        for (words, want) in cases {
            assert_eq!(match_launch(&argv(words), 0), want, "{words:?}");
        }
    }

    #[test]
    fn shells_take_a_dash_c_script_or_their_standard_input() {
        let at = |w: &[&str]| shell_at(&argv(w), 0);
        assert_eq!(
            at(&["bash", "-o", "pipefail", "-ec", "s"]),
            Some(Shell::Script(4))
        );
        assert_eq!(
            at(&["/bin/sh", "--login", "-c", "s"]),
            Some(Shell::Script(3))
        );
        assert_eq!(at(&["bash", "run.sh"]), None);
        assert_eq!(at(&["bash", "-c"]), None);
        assert_eq!(at(&["bash"]), Some(Shell::Stdin));
        assert_eq!(at(&["bash", "-s", "--", "x"]), Some(Shell::Stdin));
        assert_eq!(at(&["bash", "-e"]), Some(Shell::Stdin));
    }

    #[test]
    fn docker_run_options_image_and_command() {
        let words = argv(&[
            "docker",
            "run",
            "--rm",
            "-it",
            "--gpus",
            "all",
            "-e",
            "A=1",
            "--env=B=2",
            "-p8000:8000",
            "--shm-size",
            "32g",
            "--ipc=host",
            "-v",
            "/a:/b",
            "img:1",
            "python3",
            "-m",
            "x",
        ]);
        let run = docker_run(&words, 0).expect("a docker run");
        assert_eq!(words[run.image], "img:1");
        assert_eq!(run.gpus.map(|g| words[g]), Some("all"));
        assert_eq!(
            run.env.iter().map(|&e| words[e]).collect::<Vec<_>>(),
            ["A=1", "--env=B=2"]
        );
        assert_eq!(docker_run(&argv(&["docker", "ps"]), 0), None);
        assert_eq!(docker_run(&argv(&["docker", "run", "--rm"]), 0), None);
        let words = argv(&["podman", "container", "run", "--entrypoint", "vllm", "i"]);
        let run = docker_run(&words, 0).expect("a podman run");
        assert_eq!((run.image, run.entrypoint), (5, Some(4)));
    }

    #[test]
    fn docker_gpus_values() {
        assert_eq!(docker_gpus("2"), Some(2));
        assert_eq!(docker_gpus("\"device=0,1\""), Some(2));
        assert_eq!(docker_gpus("device=3"), Some(1));
        assert_eq!(
            docker_gpus("\"device=0,1,2,3\",capabilities=compute"),
            Some(4)
        );
        assert_eq!(docker_gpus("all"), None);
    }
}
