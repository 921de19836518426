//! Commands that may change a file the script wrote before a launch reads it: `sed -i`, `cp`, `mv`
//! or `ln -sf` over it, `yq -i`, a Python one-liner, a loop or group whose output goes to it,
//! `exec 3>> F`, and a `cd` that makes a relative path name another file. The file's text is then
//! not certain, which is said (CFG006 on the launch that reads it), never guessed.
//!
//! A command is taken to leave a file alone only when it is known to read its arguments (`cat`,
//! `grep`, `echo` without a redirection...) or is the launch itself; any other command that names
//! the file, a path that may alias it (the same name in another directory, a glob, a variable
//! kvlint does not know) makes its text unknown.

use super::commands::{self, Shell};
use super::expand::Field;
use super::lex::Word;
use super::walk::Walker;

/// Commands that read their arguments and write none of them.
const READERS: &[&str] = &[
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "ls",
    "echo",
    "printf",
    "test",
    "[",
    "[[",
    "wc",
    "stat",
    "file",
    "md5sum",
    "sha256sum",
    "sha1sum",
    "diff",
    "cmp",
    "less",
    "more",
    "jq",
    "readlink",
    "realpath",
    "dirname",
    "basename",
    "true",
    ":",
    "sleep",
    "source",
    ".",
    "export",
    "exec",
    "set",
    "wait",
    "kill",
    "env",
    "nvidia-smi",
    "tee",
    "chmod",
    "chown",
    "touch",
    "mkdir",
];

/// Commands that change the working directory (relative paths name other files after them).
const CD: &[&str] = &["cd", "pushd", "popd"];

impl Walker {
    /// A command's arguments that may name a written file, unless it only reads them.
    pub(super) fn rewrites(&mut self, fields: &[Field]) {
        let texts: Vec<&str> = fields.iter().map(Field::as_str).collect();
        let Some(first) = texts.first().map(|t| commands::basename(t)) else {
            return;
        };
        if CD.contains(&first) {
            self.cwd_changes += 1;
            return;
        }
        let launches = (0..texts.len()).any(|j| {
            commands::match_launch(&texts, j).is_some()
                || commands::shell_at(&texts, j).is_some_and(|s| matches!(s, Shell::Script(_)))
                || commands::docker_run(&texts, j).is_some()
        });
        if READERS.contains(&first) || launches {
            return;
        }
        let command = texts.join(" ");
        let last = fields.len() - 1;
        for (i, f) in fields.iter().enumerate().skip(1) {
            let arg = f.as_str();
            let value = arg.split_once('=').map_or(arg, |(_, v)| v);
            let unknown = !f.names.is_empty();
            // Copied, moved or applied elsewhere, the text the script wrote is still what it
            // wrote: it stays readable as the script's own ([`Walker::written_inputs`]), unless a
            // copy lands on that very path.
            let norm = |p: &str| p.trim_start_matches("./").to_string();
            let passed_on = |path: &str| match first {
                "cp" | "mv" | "scp" | "rsync" | "install" => {
                    i != last || (!unknown && norm(value) != norm(path))
                }
                "kubectl" | "oc" | "helm" => true,
                _ => false,
            };
            self.unsettle(
                |path| unknown || may_name(value, path),
                || format!("changed after it is written, by `{command}`"),
                passed_on,
            );
        }
    }

    /// `exec 3>> F`, `cmd 2> F`: written through a descriptor whose text kvlint does not follow.
    pub(super) fn clobber(&mut self, targets: &[Word]) {
        for t in targets {
            self.unknown_output(t, "written through another file descriptor (`N> FILE`)");
        }
    }

    /// `done >> F`, `} > F`, `fi > F`: the output of a loop, group or branch.
    pub(super) fn compound_output(&mut self, outputs: &[(Word, bool)]) {
        for (t, _) in outputs {
            self.unknown_output(t, "written by the output of a loop, group or branch");
        }
    }

    fn unknown_output(&mut self, target: &Word, why: &str) {
        let path = self.scope.expand(target, false);
        let Some(f) = path.first() else { return };
        let (value, unknown) = (f.text(), !f.names.is_empty());
        if value.starts_with("/dev/") {
            return;
        }
        let never = |_: &str| false;
        self.unsettle(
            |path| unknown || may_name(&value, path),
            || why.to_string(),
            never,
        );
    }

    /// Every written file `hit` says may be changed now has unknown text; unless `passed_on` it
    /// (the command only copies or applies it), its heredoc text is no longer the file's either.
    fn unsettle(
        &mut self,
        hit: impl Fn(&str) -> bool,
        why: impl Fn() -> String,
        passed_on: impl Fn(&str) -> bool,
    ) {
        for w in self.files.iter_mut().filter(|w| hit(&w.path)) {
            if w.content.is_ok() {
                w.content = Err(format!("{} is {}", w.path, why()));
            }
            if !passed_on(&w.path) {
                w.raw = None;
            }
        }
    }
}

/// Whether an argument may name `path`: the same path, the same name in any directory (a
/// relative path after a `cd`, a symlink), the directory holding it, or a glob.
fn may_name(arg: &str, path: &str) -> bool {
    let norm = |p: &str| p.trim_start_matches("./").trim_end_matches('/').to_string();
    let (arg, path) = (norm(arg), norm(path));
    if arg.is_empty() || arg.starts_with('-') && !arg.contains('/') {
        return false;
    }
    let name = path.rsplit('/').next().unwrap_or(&path);
    let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
    // Contained, not equal: `sed -i s/a/b/ F`, `yq -i '.x = 1' F`, `python -c "open('F', 'w')"`.
    arg.contains(name)
        || (!dir.is_empty() && arg == dir)
        || (arg.contains(['*', '?', '[']) && glob_may_match(&arg, &path))
}

/// A glob may match when its text before the first wildcard starts the path (or the name, for a
/// glob without a directory) and its text after the last one ends it.
fn glob_may_match(glob: &str, path: &str) -> bool {
    let head = &glob[..glob.find(['*', '?', '[']).unwrap_or(glob.len())];
    let tail = &glob[glob.rfind(['*', '?', ']']).map_or(glob.len(), |i| i + 1)..];
    let name = path.rsplit('/').next().unwrap_or(path);
    let starts = match head.contains('/') {
        true => path.starts_with(head),
        false => name.starts_with(head),
    };
    starts && path.ends_with(tail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_may_alias_a_written_file() {
        for arg in [
            "/cfg/c.yaml",
            "./c.yaml",
            "c.yaml",
            "/tmp/c.yaml",
            "/cfg",
            "/cfg/",
            "/cfg/*.yaml",
            "*",
            "import yaml; open('/cfg/c.yaml', 'w')",
        ] {
            assert!(may_name(arg, "/cfg/c.yaml"), "{arg}");
        }
        for arg in [
            "-i",
            "s/a/b/",
            "/cfg/other.yaml",
            "/opt/*.json",
            "*.json",
            "b.yaml",
        ] {
            assert!(!may_name(arg, "/cfg/c.yaml"), "{arg}");
        }
    }
}
