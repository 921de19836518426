//! Shell scripts, one-line commands and Dockerfiles → engine launches.
//!
//! Our own small POSIX/bash reader, in three steps: `lex` (text → words, keeping for every
//! character the byte range it was read from), `expand` (words → argv fields with the script's
//! variables), `walk` (commands in order: assignments, branches, `sh -c`, `eval`, heredocs fed to
//! a shell, `docker run`), with `commands` saying which command words are a launch and
//! `dockerfile` reading Dockerfiles.
//!
//! Why not a bash grammar crate (weighed December 2026): brush-parser 0.4.0 parses every real
//! script in ../shared/manifests and our fixtures, and reports an unterminated quote with its
//! position, but its words are raw text with one span each (pieces carry offsets into that raw
//! text, not into the file after unescaping), and a `sh -c "..."` string, an `eval` argument or
//! an unquoted heredoc is text after unescaping, which it can only read as a new string whose
//! offsets no longer point into the file. The spans of argv tokens are what findings point at,
//! so the character mapping (`lex::Ch`) and the expansion over it stay ours either way; the
//! crate would replace only the lexer (about 500 lines) while adding peg, bon, cached and insta
//! as build dependencies (7m40s to build it alone on the shared CI cores). tree-sitter-bash
//! (a C build) and yash-syntax were not tried for lack of time.
//!
//! What the reader cannot see is said, never guessed: a variable the script does not set is
//! unresolved (`INP004` when the pool needs it); `${VAR:-default}` in a script someone runs is
//! unresolved too, since the caller may set `VAR` (inside a container whose env is written out,
//! the default is what runs); a variable set differently in two branches is read on each path
//! where every path's value is written (`branches`), and is unknown after them otherwise (which
//! branch runs is decided at run time, so no value is assumed, not even the worst);
//! `"$@"`, `"${ARR[@]}"` of an unknown array and an unset `$EXTRA_ARGS` expanded as whole words
//! may add any flag, and are `INP004` on the launch; a command substitution's output is unknown
//! unless it only pipes known text through text utilities (`textpipe`, `textutil`).

pub mod actions;
pub mod apptainer;
mod arith;
mod branches;
mod budget;
mod chars;
mod commands;
mod dockerfile;
mod expand;
mod files;
mod images;
mod keyed;
mod lex;
pub mod make;
mod rewrites;
mod slurm;
mod textpipe;
mod textutil;
mod walk;
mod wrappers;

pub use budget::{with_stop, Spent, Stop};
pub use chars::Chars;
pub use dockerfile::is_dockerfile;

use crate::extract::Extracted;
use crate::finding::Finding;
use crate::launch::{Launch, ObjectRef};
use crate::platform::Reader;
use crate::source::{FileId, Loc};
use budget::Budget;
use expand::Field;
use walk::Walker;

/// Launches in a shell script someone runs (its environment is not known), and what could not be
/// read or seen in it.
pub fn script(file: FileId, text: &str) -> Extracted {
    script_spent(file, text).0
}

/// The largest script read. The lexer holds about 60 bytes per input byte (`cargo bench --bench
/// shell`), so this bounds one read near 1 GB; launch scripts are kilobytes.
const SCRIPT_MAX: usize = 16 << 20;

/// [`script`], and what the read spent of its budget.
pub fn script_spent(file: FileId, text: &str) -> (Extracted, Spent) {
    read_script(file, text, false)
}

/// A Makefile's recipes, read as the shell script they run once Make has expanded its own
/// variables ([`make`]).
pub fn makefile(file: FileId, text: &str) -> Extracted {
    read_script(file, text, true).0
}

fn read_script(file: FileId, text: &str, makefile: bool) -> (Extracted, Spent) {
    let mut walker = Walker::new(file, true);
    if text.len() > SCRIPT_MAX {
        let head = text.char_indices().nth(1).map_or(text.len(), |(i, _)| i);
        let reason = format!(
            "a shell script of {} MiB is larger than the {} MiB kvlint reads as a script",
            text.len() >> 20,
            SCRIPT_MAX >> 20
        );
        walker
            .findings
            .push(Finding::new("INP001", Some(Loc::new(file, 0..head))).var("reason", reason));
        return (extracted(walker), Spent::default());
    }
    let budget = Budget::for_input(text.len());
    walker.scope.budget = budget.clone();
    walker.newlines = text.match_indices('\n').map(|(i, _)| i).collect();
    let job = slurm::Job::read(text);
    if job.is_batch {
        job.seed(&mut walker);
    }
    walker.script(match makefile {
        true => make::recipes(text),
        false => lex::chars_of(text, 0),
    });
    if job.is_batch {
        let mut launches = std::mem::take(&mut walker.launches);
        job.place(&walker, &mut launches);
        titled(reader_title(Reader::Slurm), &mut launches, job.name(), None);
        walker.launches = launches;
    }
    written(&mut walker, file, text);
    elsewhere(&mut walker, text);
    (extracted(walker), budget.spent())
}

/// A script that starts no engine itself but writes an engine's settings for a server started
/// elsewhere (`cat > /tmp/model.json <<EOF` before the image's entrypoint): each file it writes
/// and none of its launches names is read as an input of its own name's kind. What that gives is
/// kept where it is a launch, or an engine's settings kvlint could not read (INP006); anything
/// else (a file of another kind, text that is no input kvlint reads) is not the script's business.
fn written(walker: &mut Walker, file: FileId, text: &str) {
    if !walker.launches.is_empty() {
        return;
    }
    let inputs = walker.written_inputs(text);
    let paths: Vec<&str> = inputs.iter().map(|(p, _)| p.as_str()).collect();
    for (path, blanked) in &inputs {
        let out = super::written_file(file, path, blanked.clone());
        if out.launches.is_empty() {
            let not_read = out.findings.into_iter().filter(|f| f.rule == "INP006");
            walker.findings.extend(not_read);
        } else {
            walker.launches.extend(out.launches);
            walker.findings.extend(out.findings);
        }
    }
    // A written file whose launch is in another one it writes (a Triton config.pbtxt and its
    // 1/model.json) was read there.
    let by = super::by_platform::held_by;
    walker.findings.retain(|f| !by(f, &paths, true));
}

/// A script that starts no engine itself but names one and runs other script files: the launch
/// is in a file kvlint was not given (`srun ... bash start_worker.sh`), which is said, not passed.
fn elsewhere(walker: &mut Walker, text: &str) {
    let Some(&at) = walker.scripts_run.first() else {
        return;
    };
    if !walker.launches.is_empty() {
        return;
    }
    let Some(engine) = super::unread::named_in_code(text) else {
        return;
    };
    let path = text.get(at.range()).unwrap_or("the script");
    walker.findings.push(
        Finding::new("INP006", Some(at))
            .var("engine", engine)
            .var(
                "reason",
                format!("this script starts no engine itself; it runs {path}, which kvlint was not given"),
            )
            .var(
                "help",
                "check the scripts it runs too (`kvlint check` each of them, with the variables this script passes)",
            ),
    );
}

/// The launches of a YAML document read by the built-in reader its platform file `p` names; they
/// carry `p`'s title (two platforms may share a reader: a workflow and a composite action).
pub fn platform_reader(
    p: &crate::platform::Platform,
    file: FileId,
    src: &crate::source::SourceFile,
    doc: &crate::yaml::Node,
) -> Extracted {
    match p.reader {
        Some(Reader::GithubActions) => actions::read(file, src, doc, &p.title),
        // Scripts and Python, not YAML: read by file kind (`extract::kind`).
        Some(Reader::Slurm | Reader::Apptainer | Reader::Python) | None => Extracted::default(),
    }
}

/// The title of the one platform that names `reader`, for scripts read by their file kind.
fn reader_title(reader: Reader) -> Option<&'static str> {
    let p = crate::platform::registry().by_reader(reader)?;
    Some(p.title.as_str())
}

/// Gives launches the object their platform's file names (`kind` = its `title`), named `name`.
fn titled(title: Option<&str>, launches: &mut [Launch], name: &str, container: Option<&str>) {
    let Some(title) = title else {
        return;
    };
    for l in launches.iter_mut().filter(|l| l.object.is_none()) {
        l.object = Some(ObjectRef {
            kind: title.to_string(),
            namespace: None,
            name: name.to_string(),
            container: container.map(str::to_string),
        });
    }
}

/// Launches in a shell script or a one-line command, findings left out (a command line given to
/// kvlint itself).
pub fn script_launches(file: FileId, text: &str) -> Vec<Launch> {
    script(file, text).launches
}

/// Launches in a Dockerfile's image started without arguments.
pub fn dockerfile(file: FileId, text: &str) -> Extracted {
    extracted(dockerfile::walk(file, text))
}

fn extracted(mut walker: Walker) -> Extracted {
    walker.report_cut();
    Extracted {
        launches: walker.launches,
        findings: walker.findings,
    }
}

/// A word read from a structured input (a YAML scalar) before any shell sees it: each character
/// with the file bytes it came from, its whole span, and the variables left in it by character index.
#[derive(Debug, Clone)]
pub struct MappedWord {
    pub chars: Chars,
    pub loc: Loc,
    pub unresolved: Vec<(usize, String)>,
    /// Every variable left is a caller's default ([`Field::defaults`]): compose's
    /// `${CTX:-32768}` with `CTX` set by the shell that runs compose, if by anyone.
    pub defaulted: bool,
}

impl MappedWord {
    /// Where the caller's defaults stand: every name, when the word is defaulted.
    fn default_indices(&self) -> Vec<usize> {
        match self.defaulted {
            true => self.unresolved.iter().map(|(i, _)| *i).collect(),
            false => Vec::new(),
        }
    }

    /// [`MappedWord::field`] reusing this word's character list.
    fn into_field(self) -> Field {
        Field {
            defaults: self.default_indices(),
            chars: self.chars,
            loc: self.loc,
            names: self.unresolved,
            splat: None,
        }
    }

    fn field(&self) -> Field {
        Field {
            chars: self.chars.clone(),
            loc: self.loc,
            names: self.unresolved.clone(),
            splat: None,
            defaults: self.default_indices(),
        }
    }
}

/// What a pod sets in a container's env beyond the values written out: names whose value comes
/// from elsewhere (`valueFrom`: a Secret, a ConfigMap, a field), and whether any other name may
/// be set too (`envFrom`: a ConfigMap or Secret may define any name).
#[derive(Debug, Clone, Default)]
pub struct PodEnv {
    /// Each name, and where its value comes from (`secretKeyRef llm/ctx`).
    pub unknown: Vec<(String, String)>,
    pub any_name: bool,
}

/// Launches in an exec-form argv (a container's `command` + `args`) run with `env` exported;
/// `sh -c` scripts in it are walked as scripts. The container's env is all written out, so a
/// `${VAR:-default}` whose `VAR` is not in it takes the default.
pub fn exec_launches(
    file: FileId,
    argv: impl IntoIterator<Item = MappedWord>,
    env: &[(String, MappedWord)],
) -> Extracted {
    container_launches(file, argv, env, &PodEnv::default())
}

/// [`exec_launches`] in a pod that also sets `pod`'s names: each is set with a value kvlint does
/// not see (so `${CTX:-4096}` is not the default but unknown, `INP004` where the pool needs it),
/// and with `envFrom` any name the env does not list may be set as well.
pub fn container_launches(
    file: FileId,
    argv: impl IntoIterator<Item = MappedWord>,
    env: &[(String, MappedWord)],
    pod: &PodEnv,
) -> Extracted {
    let mut walker = Walker::new(file, pod.any_name);
    for (name, value) in env {
        walker.export(name, value.field());
    }
    for (name, from) in &pod.unknown {
        let why = format!("{name} (set by the pod from {from}, a value kvlint does not see)");
        walker.scope.set(name, expand::Value::Unknown(why), true);
    }
    // Moved, not copied: a padded argv of 120,000 words is held once.
    let mut fields: Vec<Field> = argv.into_iter().map(MappedWord::into_field).collect();
    fields.shrink_to_fit();
    let input = fields.iter().map(|f| f.as_str().len()).sum::<usize>()
        + env
            .iter()
            .map(|(_, v)| v.chars.as_str().len())
            .sum::<usize>();
    walker.scope.budget = Budget::for_input(input);
    walker.argv(fields);
    extracted(walker)
}

/// Whether `texts` start with a shell given a script to run (`sh -c SCRIPT`, `bash -lc SCRIPT`),
/// which [`exec_launches`] walks as a script.
pub fn runs_script(texts: &[&str]) -> bool {
    !texts.is_empty()
        && matches!(
            commands::shell_at(texts, 0),
            Some(commands::Shell::Script(_))
        )
}

/// A shell string's words after quote removal and expansion (an env var a launcher splices in with
/// `eval`, a compose `command` string), each still mapped to the bytes it was written at.
pub fn split_words(file: FileId, text: &MappedWord) -> Vec<MappedWord> {
    let mut walker = Walker::new(file, false);
    lex::words(&text.field().lexer_chars())
        .iter()
        .flat_map(|w| walker.scope.expand(w, true))
        .map(|f| MappedWord {
            defaulted: f.defaulted(),
            chars: f.chars,
            loc: f.loc,
            unresolved: f.names,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(launch: &Launch) -> Vec<&str> {
        launch.args.iter().map(|a| a.text.as_str()).collect()
    }

    #[test]
    fn redirections_and_their_targets_are_not_arguments() {
        let launches = script_launches(
            FileId(0),
            "vllm serve m 2>/dev/null >>log <in 3<>f &>all >&2 --x 1\n",
        );
        assert_eq!(texts(&launches[0]), ["m", "--x", "1"]);
    }

    #[test]
    fn assignment_default_in_a_container_sets_the_variable() {
        let text = ": ${CTX:=4096}\nA=${UNSET-}x\nvllm serve m --max-model-len $CTX --y $A\n";
        let mut walker = Walker::new(FileId(0), false);
        walker.script(lex::chars_of(text, 0));
        assert_eq!(
            texts(&walker.launches[0]),
            ["m", "--max-model-len", "4096", "--y", "x"]
        );
    }
}
