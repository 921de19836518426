//! Commands that run another command somewhere else with the same words: a Slurm job step
//! (`srun [OPTIONS] CMD`, with pyxis/enroot's `--container-image`), a Ray job (`ray job submit
//! [OPTIONS] -- CMD`) and an Apptainer/Singularity container (`apptainer exec|run [OPTIONS] IMAGE
//! [CMD]`). The command after them is read as if it stood alone, so `srun pkill -f trtllm-serve`
//! is a `pkill`, not a launch.

use super::commands::{self, basename};
use super::expand::{is_identifier, Field, Value};
use super::lex::{Heredoc, MAX_DEPTH};
use super::walk::Walker;
use crate::extract::k8s::placement;
use std::borrow::Cow;

/// A wrapper at some word, and what it says about the command it runs.
#[derive(Debug, PartialEq, Eq)]
pub struct Wrapped {
    /// Index of the command's first word.
    pub command: usize,
    /// Index of the container image word (`--container-image=IMG`'s word, Apptainer's IMAGE).
    pub image: Option<usize>,
    /// The image's text without its option name or transport (`docker://`).
    pub image_name: Option<String>,
    /// `apptainer run IMAGE ARGS`: the image's own runscript takes the words as arguments.
    pub runscript: bool,
    /// Indexes of `--env`/`--export` values (`A=1,B=2`).
    pub env: Vec<usize>,
}

impl Walker {
    /// Runs the wrapped command with the wrapper's env added, and gives the launches it starts
    /// the container image the wrapper names.
    pub(super) fn wrapped(
        &mut self,
        fields: Cow<'_, [Field]>,
        w: Wrapped,
        mut env: Vec<(String, Value)>,
        stdin: Option<&Heredoc>,
    ) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        for &k in &w.env {
            env.extend(assignments(&fields[k]));
        }
        let image = w.image.map(|i| fields[i].loc);
        let before = self.launches.len();
        let args = match fields {
            Cow::Owned(mut all) => {
                all.drain(..w.command.min(all.len()));
                Cow::Owned(all)
            }
            Cow::Borrowed(all) => Cow::Borrowed(&all[w.command.min(all.len())..]),
        };
        self.depth += 1;
        let first = args.first().map(Field::as_str);
        let entrypoint = w
            .image_name
            .as_deref()
            .and_then(|name| commands::image_entrypoint(name, first));
        match (w.runscript, entrypoint, image) {
            // `apptainer run docker://vllm/vllm-openai:TAG ARGS`: the image's entrypoint.
            (true, Some(engine), Some(at)) => {
                for (name, value) in env {
                    self.scope.set(&name, value, true);
                }
                self.entrypoint_launch(engine, at, &args)
            }
            // Another image's runscript is not in the file.
            (true, _, _) => {}
            (false, _, _) => self.run(args, env, stdin),
        }
        self.depth -= 1;
        let (Some(name), Some(at)) = (w.image_name, image) else {
            return;
        };
        for l in &mut self.launches[before..] {
            l.engine_version = placement::image_version(&name, l.engine.name()).map(|v| (v, at));
            l.placement.image = Some((name.clone(), at));
        }
    }
}

/// `A=1,B=2` (an `--env`/`--export` value): each assignment, its value mapped to where it is
/// written. `ALL` and `NONE` name no variable.
fn assignments(field: &Field) -> Vec<(String, Value)> {
    let text = field.text();
    let mut out = Vec::new();
    let mut at = 0;
    for item in text.split(',') {
        let skip = text[..at].chars().count();
        at += item.len() + 1;
        let Some((name, value)) = item.split_once('=') else {
            continue;
        };
        if !is_identifier(name) {
            continue;
        }
        let from = skip + name.chars().count() + 1;
        let mut v = field.tail(from);
        let n = value.chars().count();
        v.chars = v.chars.iter().take(n).collect();
        v.names.retain(|(i, _)| *i < n);
        out.push((name.to_string(), Value::Scalar(v)));
    }
    out
}

/// `srun` options that take no value (Slurm `srun(1)`); an option with an optional value takes
/// it only after `=`. Every other option takes one.
const SRUN_SWITCHES: &[&str] = &[
    "--overlap",
    "--exclusive",
    "--exact",
    "--label",
    "--unbuffered",
    "--pty",
    "--quiet",
    "--verbose",
    "--no-kill",
    "--kill-on-bad-exit",
    "--immediate",
    "--hold",
    "--overcommit",
    "--oversubscribe",
    "--disable-status",
    "--no-allocate",
    "--preserve-env",
    "--multi-prog",
    "--spread-job",
    "--test-only",
    "--whole",
    "--x11",
    "--propagate",
    "--container-remap-root",
    "--no-container-remap-root",
    "--container-mount-home",
    "--no-container-mount-home",
    "--container-entrypoint",
    "--no-container-entrypoint",
    "--container-writable",
    "--container-readonly",
    "--no-container-entrypoint-log",
];

/// Short `srun` switches: `-E -H -k -K -l -O -Q -s -u -v -V -X -Z -h -I`.
const SRUN_SHORT_SWITCHES: &str = "EHkKlOQsuvVXZhI";

/// Apptainer/Singularity `exec`/`run` options that take no value (apptainer `cmd/internal/cli`
/// action flags); every other option takes one.
const APPTAINER_SWITCHES: &[&str] = &[
    "--nv",
    "--nvccli",
    "--rocm",
    "--cleanenv",
    "--containall",
    "--contain",
    "--writable",
    "--writable-tmpfs",
    "--fakeroot",
    "--no-home",
    "--userns",
    "--uts",
    "--pid",
    "--ipc",
    "--net",
    "--compat",
    "--no-init",
    "--no-privs",
    "--keep-privs",
    "--allow-setuid",
    "--disable-cache",
    "--no-nv",
    "--sharens",
    "--unsquash",
    "--no-eval",
    "--no-umask",
    "--boot",
    "--debug",
    "--quiet",
    "--silent",
    "--verbose",
];

/// Short Apptainer switches: `-e -C -c -w -f -u -p -i -n -d -q -s -v`.
const APPTAINER_SHORT_SWITCHES: &str = "eCcwfupindqsv";

/// A wrapper at word `j`.
pub fn at(texts: &[&str], j: usize) -> Option<Wrapped> {
    match basename(texts[j]) {
        "srun" => srun(texts, j + 1),
        "ray" if texts.get(j + 1..j + 3) == Some(&["job", "submit"]) => {
            let dash = texts[j + 3..].iter().position(|t| *t == "--")?;
            (j + 4 + dash < texts.len()).then(|| Wrapped {
                command: j + 4 + dash,
                image: None,
                image_name: None,
                runscript: false,
                env: Vec::new(),
            })
        }
        "apptainer" | "singularity" => apptainer(texts, j + 1),
        _ => None,
    }
}

fn srun(texts: &[&str], mut k: usize) -> Option<Wrapped> {
    let mut image = None;
    let mut env = Vec::new();
    while let Some(&t) = texts.get(k) {
        if t == "--" {
            k += 1;
            break;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        let value = option_value(t, k, SRUN_SWITCHES, SRUN_SHORT_SWITCHES);
        let name = t.split_once('=').map_or(t, |(n, _)| n);
        match (name, value) {
            ("--container-image", Some(v)) => image = Some(v),
            ("--export", Some(v)) => env.push(v),
            _ => {}
        }
        k = value.map_or(k, |v| v.max(k)) + 1;
    }
    let image_name = image.map(|i| strip_option(texts[i], "--container-image").to_string());
    (k < texts.len()).then_some(Wrapped {
        command: k,
        image,
        image_name,
        runscript: false,
        env,
    })
}

fn apptainer(texts: &[&str], k: usize) -> Option<Wrapped> {
    let runscript = match texts.get(k).copied() {
        Some("exec") => false,
        Some("run") => true,
        _ => return None,
    };
    let mut k = k + 1;
    let mut env = Vec::new();
    while let Some(&t) = texts.get(k) {
        if !t.starts_with('-') {
            break;
        }
        let value = option_value(t, k, APPTAINER_SWITCHES, APPTAINER_SHORT_SWITCHES);
        if matches!(t.split_once('=').map_or(t, |(n, _)| n), "--env") {
            env.extend(value);
        }
        k = value.map_or(k, |v| v.max(k)) + 1;
    }
    let image = texts.get(k)?;
    let name = image
        .strip_prefix("docker://")
        .or_else(|| image.strip_prefix("oras://"))
        .unwrap_or(image);
    let command = k + 1;
    (runscript || command < texts.len()).then(|| Wrapped {
        command,
        image: Some(k),
        image_name: Some(name.to_string()),
        runscript,
        env,
    })
}

/// The index of option `t`'s value (its own word for `--x=v` and `-Nv`, the next word for `--x v`
/// and `-N v`), or `None` for a switch.
fn option_value(t: &str, k: usize, switches: &[&str], short: &str) -> Option<usize> {
    if t.starts_with("--") {
        if t.contains('=') {
            return Some(k);
        }
        return (!switches.contains(&t)).then_some(k + 1);
    }
    let flags = &t[1..];
    // `-lN1`: switches, then an option whose value is the rest of the word.
    match flags.char_indices().find(|(_, c)| !short.contains(*c)) {
        None => None,
        Some((i, _)) if i + 1 < flags.len() => Some(k),
        Some(_) => Some(k + 1),
    }
}

/// `--container-image=IMG` → `IMG`; a value given as its own word is the word.
fn strip_option<'a>(word: &'a str, name: &str) -> &'a str {
    word.strip_prefix(name)
        .and_then(|r| r.strip_prefix('='))
        .unwrap_or(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn srun_options_then_the_command() {
        let w: Vec<&str> =
            "srun -l --container-image=nvcr.io/nvidia/trtllm:1.0 --container-name=c \
                            --mpi=pmix --overlap -N 1 -n1 -w node1 pkill -f trtllm-serve"
                .split(' ')
                .collect();
        let got = at(&w, 0).expect("a job step");
        assert_eq!(w[got.command], "pkill");
        assert_eq!(got.image_name.as_deref(), Some("nvcr.io/nvidia/trtllm:1.0"));
        let w = ["srun", "--container-image", "img:1", "--", "vllm", "serve"];
        let got = at(&w, 0).expect("a job step");
        assert_eq!((got.command, got.image_name.as_deref()), (4, Some("img:1")));
        assert_eq!(at(&["srun", "-N", "2"], 0), None);
    }

    #[test]
    fn ray_job_submit_runs_what_follows_the_double_dash() {
        let w = [
            "ray",
            "job",
            "submit",
            "--address",
            "a",
            "--",
            "vllm",
            "serve",
            "m",
        ];
        assert_eq!(at(&w, 0).map(|x| x.command), Some(6));
        assert_eq!(at(&["ray", "job", "submit", "--", ""][..4], 0), None);
        assert_eq!(at(&["ray", "start", "--head"], 0), None);
    }

    #[test]
    fn apptainer_exec_and_run_name_their_image() {
        let w = [
            "apptainer",
            "exec",
            "--nv",
            "-B",
            "/a:/b",
            "--env",
            "X=1",
            "docker://vllm/vllm-openai:v0.9.0",
            "vllm",
            "serve",
            "m",
        ];
        let got = at(&w, 0).expect("a container");
        assert_eq!(w[got.command], "vllm");
        assert_eq!(got.image_name.as_deref(), Some("vllm/vllm-openai:v0.9.0"));
        assert_eq!(got.env, [6]);
        let w = ["singularity", "run", "--nv", "vllm.sif"];
        let got = at(&w, 0).expect("a runscript");
        assert!(got.runscript);
        assert_eq!(at(&["apptainer", "exec", "img.sif"], 0), None);
        assert_eq!(at(&["apptainer", "build", "a.sif", "a.def"], 0), None);
    }
}
