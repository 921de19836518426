//! Walking a script: simple commands in order, variables tracked through assignments and
//! branches, nested shells (`sh -c`, `eval`, `bash <<EOF`, `docker run`) entered, launches kept.

use super::branches;
use super::commands::{self, Shell};
use super::expand::{is_identifier, value_len, Field, Scope, Splat, Value, Var};
use super::files::Written;
use super::lex::{self, literal_text, Ch, Part, Sep, Tok, Word, MAX_DEPTH};
use super::wrappers;
use crate::extract::by_platform;
use crate::extract::k8s::placement;
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch};
use crate::source::{FileId, Loc};
use std::borrow::Cow;

/// Walks a script's commands, tracking variables, and collects launches and findings.
pub struct Walker {
    pub scope: Scope,
    pub launches: Vec<Launch>,
    pub findings: Vec<Finding>,
    pub(super) depth: usize,
    frames: Vec<Frame>,
    /// Files the script has written so far (`cat > F <<EOF`), which launches after it may read.
    pub(super) files: Vec<Written>,
    /// Byte offsets of the script's newlines, to keep a written file's lines where they are written.
    pub(super) newlines: std::rc::Rc<[usize]>,
    /// `cd`s run so far ([`super::files::Written::cwd`]).
    pub(super) cwd_changes: usize,
    /// Other script files the script runs (`bash start_worker.sh`), which kvlint does not read.
    pub(super) scripts_run: Vec<Loc>,
}

/// Script files run by a script that are kept to say where its launches may be.
const MAX_SCRIPTS_RUN: usize = 16;

/// A compound command whose body may or may not run: `if`, a loop, `case`, or what follows `&&`/`||`.
struct Frame {
    kind: FrameKind,
    /// The scope's journal when it began.
    mark: usize,
    /// What each branch already walked assigned: names and their values at its end.
    ends: Vec<Vec<(String, Option<Var>)>>,
    /// An `else`, or a `case` pattern `*`: some branch runs whatever the test says.
    has_else: bool,
    /// The branch walked so far ends in `exit`: its values never reach what follows.
    exits: bool,
    /// No command walked since the branch began (the text between a `case`'s last `;;` and
    /// `esac` is no branch).
    empty: bool,
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum FrameKind {
    If,
    Loop,
    Case,
    AndOr,
}

/// One simple command as lexed: its words and the heredocs fed to it.
#[derive(Default)]
struct Command {
    words: Vec<Word>,
    heredocs: Vec<usize>,
    /// `> F` / `>> F` (true: append) of the standard output.
    outputs: Vec<(Word, bool)>,
    /// Files written through other descriptors (`exec 3>> F`).
    clobbers: Vec<Word>,
}

impl Walker {
    pub fn new(file: FileId, open_env: bool) -> Self {
        Walker {
            scope: Scope::new(file, open_env),
            launches: Vec::new(),
            findings: Vec::new(),
            depth: 0,
            frames: Vec::new(),
            files: Vec::new(),
            newlines: std::rc::Rc::from([]),
            cwd_changes: 0,
            scripts_run: Vec::new(),
        }
    }

    /// A shell started by this one: it sees `env` (exported), nothing else.
    fn child(&self, env: Vec<(String, Value)>) -> Walker {
        let mut inner = Walker::new(self.scope.file, self.scope.open_env);
        inner.depth = self.depth + 1;
        inner.scope.budget = self.scope.budget.clone();
        inner.files = self.files.clone();
        inner.newlines = self.newlines.clone();
        inner.cwd_changes = self.cwd_changes;
        // The env was copied for it: a big exported value handed to many shells counts each time.
        let copied = env.iter().map(|(_, v)| value_len(v)).sum();
        if !self.scope.budget.copied(copied) {
            return inner;
        }
        for (name, value) in env {
            // Handed on unchanged, a variable keeps its value on each path.
            let alts = self
                .scope
                .var(&name)
                .filter(|v| v.value == value)
                .and_then(|v| v.alts.clone());
            inner.scope.set_alts(&name, value, true, alts);
        }
        inner
    }

    /// Inside an `if`, loop, `case` or `&&`/`||` list: what runs here may not run.
    pub(super) fn in_compound(&self) -> bool {
        !self.frames.is_empty()
    }

    fn adopt(&mut self, inner: Walker) {
        // The inner shell started from this one's files: what it wrote is on the same disk.
        self.files = inner.files;
        let room = MAX_SCRIPTS_RUN.saturating_sub(self.scripts_run.len());
        self.scripts_run
            .extend(inner.scripts_run.into_iter().take(room));
        self.launches.extend(inner.launches);
        self.findings.extend(inner.findings);
    }

    /// Lexes and walks a script given as mapped characters; what cannot be lexed is `INP001`.
    /// The characters are dropped once lexed: a one-line script of 24 MB is not held twice.
    pub fn script(&mut self, src: Vec<Ch>) {
        let lexed = lex::lex(&src);
        drop(src);
        for e in &lexed.errors {
            self.findings.push(
                Finding::new("INP001", Some(self.scope.loc(e.at)))
                    .var("reason", format!("{} in a shell script", e.what)),
            );
        }
        let mut cmd = Command::default();
        let open = self.frames.len();
        for tok in lexed.toks {
            match tok {
                Tok::Word(w) => cmd.words.push(w),
                Tok::Heredoc(i) => cmd.heredocs.push(i),
                Tok::Output { target, append } => cmd.outputs.push((target, append)),
                Tok::Clobber(target) => cmd.clobbers.push(target),
                Tok::Sep(sep) => {
                    self.command(std::mem::take(&mut cmd), &lexed.heredocs);
                    self.separator(sep, open);
                }
            }
        }
        self.command(cmd, &lexed.heredocs);
        // Unclosed `if`s and `&&` lists end with the script.
        while self.frames.len() > open {
            self.close();
        }
    }

    fn separator(&mut self, sep: Sep, open: usize) {
        let top = |w: &Walker| w.frames.get(open..)?.last().map(|f| f.kind);
        match sep {
            Sep::AndOr if top(self) != Some(FrameKind::AndOr) => self.open(FrameKind::AndOr),
            Sep::List | Sep::CaseEnd => {
                while top(self) == Some(FrameKind::AndOr) {
                    self.close();
                }
                if sep == Sep::CaseEnd && top(self) == Some(FrameKind::Case) {
                    self.branch(false);
                }
            }
            _ => {}
        }
    }

    fn open(&mut self, kind: FrameKind) {
        self.frames.push(Frame {
            kind,
            mark: self.scope.mark(),
            ends: Vec::new(),
            has_else: false,
            exits: false,
            empty: true,
        });
    }

    /// `elif`, `else`, `;;`: the next branch starts from the variables before the compound.
    fn branch(&mut self, is_else: bool) {
        if let Some(mut f) = self.frames.pop() {
            self.end_branch(&mut f);
            f.has_else |= is_else;
            self.frames.push(f);
        }
    }

    /// Undoes a branch's assignments, keeping them as one path's end unless the path stops
    /// there (`exit` in an `if` or `case` branch) or there was no branch.
    fn end_branch(&mut self, f: &mut Frame) {
        let end = self.scope.undo(f.mark);
        let stops = f.exits && matches!(f.kind, FrameKind::If | FrameKind::Case);
        let none = f.empty && f.kind == FrameKind::Case && !f.ends.is_empty();
        if !(stops || none) {
            f.ends.push(end);
        }
        f.exits = false;
        f.empty = true;
    }

    /// What a command tells the compound it is in: `exit` last in a branch ends that path, a
    /// `case` pattern `*` (unquoted) matches whatever is left.
    fn note_command(&mut self, words: &[Word]) {
        let Some(f) = self.frames.last_mut() else {
            return;
        };
        let first = words.first().and_then(literal_text);
        if let ([w], FrameKind::Case) = (words, f.kind) {
            let unquoted = |p: &Part| matches!(p, Part::Lit(chs) if chs.iter().all(|c| !c.quoted));
            if first.as_deref() == Some("*") && w.parts.iter().all(unquoted) {
                f.has_else = true;
            }
        }
        f.exits = first.as_deref() == Some("exit");
        f.empty &= words.is_empty();
    }

    /// `fi`, `done`, `esac`, the end of a `&&` list: a variable that ends with different values
    /// on different paths is unknown from here on, or known on each path ([`branches::merge`]).
    fn close(&mut self) {
        let Some(mut f) = self.frames.pop() else {
            return;
        };
        self.end_branch(&mut f);
        // Without an `else`, no branch may run at all: the values from before count too.
        let no_branch = !(matches!(f.kind, FrameKind::If | FrameKind::Case) && f.has_else);
        // A loop's paths are its body run again, not branches with a value each.
        let per_branch = f.kind != FrameKind::Loop;
        let id = self.scope.budget.next_compound();
        for (name, mut values) in branches::by_name(&self.scope, &f.ends) {
            if no_branch {
                values.push(self.scope.var(&name).cloned());
            }
            let exported = values.iter().flatten().any(|v| v.exported);
            if let Some((value, alts)) = branches::merge(&name, &values, id, per_branch) {
                self.scope.set_alts(&name, value, exported, alts);
            }
        }
    }

    /// Leading reserved words: compound commands open and close here.
    fn keywords<'w>(&mut self, mut words: &'w [Word]) -> Option<&'w [Word]> {
        while let Some((first, rest)) = words.split_first() {
            match literal_text(first).as_deref() {
                Some("if") => self.open(FrameKind::If),
                Some("while" | "until") => self.open(FrameKind::Loop),
                Some("for" | "select") => {
                    self.open(FrameKind::Loop);
                    return None;
                }
                Some("case") => {
                    self.open(FrameKind::Case);
                    return None;
                }
                Some("elif") => self.branch(false),
                Some("else") => self.branch(true),
                Some("fi" | "done" | "esac") => self.close(),
                Some(w) if commands::is_reserved(w) => {}
                _ => return Some(words),
            }
            words = rest;
        }
        Some(words)
    }

    /// One simple command: leading assignments, then the words. Nothing is walked once the read's
    /// budget is spent: a command whose words were cut short is not taken for what it says.
    fn command(&mut self, cmd: Command, heredocs: &[lex::Heredoc]) {
        let at = cmd.words.first().map_or((0, 0), |w| w.loc);
        if !self.scope.budget.step(at) {
            return self.report_cut();
        }
        self.substitutions(&cmd.words);
        let Some(words) = self.keywords(&cmd.words) else {
            return;
        };
        let skip = cmd.words.len() - words.len();
        self.note_command(words);
        // A file written on one path only would read as if every path wrote it: written once.
        let writes = !(cmd.outputs.is_empty() && cmd.clobbers.is_empty());
        if writes || self.scope.vars.iter().all(|v| v.alts.is_none()) {
            return self.simple(cmd, skip, heredocs);
        }
        let stdin = cmd.heredocs.last().and_then(|&i| heredocs.get(i));
        let body: Option<String> = stdin
            .filter(|h| !h.quoted)
            .map(|h| h.body.iter().map(|c| c.c).collect());
        let used = branches::used(&self.scope.vars, words, body.as_deref());
        let paths = (!used.is_empty()).then(|| branches::paths(&used));
        match paths.flatten() {
            Some(paths) => {
                let used: Vec<Var> = used.into_iter().cloned().collect();
                self.per_path(cmd, skip, heredocs, &used, &paths)
            }
            None => self.simple(cmd, skip, heredocs),
        }
    }

    /// A command using variables set differently on different paths, read once per path with
    /// that path's values; what it assigns keeps a value per path in turn.
    fn per_path(
        &mut self,
        cmd: Command,
        skip: usize,
        heredocs: &[lex::Heredoc],
        used: &[Var],
        paths: &[Vec<(u32, usize)>],
    ) {
        let (launches, findings) = (self.launches.len(), self.findings.len());
        let mut ends = Vec::with_capacity(paths.len());
        let at = cmd.words.first().map_or((0, 0), |w| w.loc);
        for path in paths {
            // Each read past the first is a step of its own: a hostile script stays bounded.
            if !ends.is_empty() && !self.scope.budget.step(at) {
                return self.report_cut();
            }
            let mark = self.scope.mark();
            for v in used {
                let value = branches::on_path(v, path).unwrap_or(&v.value).clone();
                self.scope.set(&v.name, value, v.exported);
            }
            let picked = self.scope.mark();
            let once = Command {
                words: cmd.words.clone(),
                heredocs: cmd.heredocs.clone(),
                ..Command::default()
            };
            self.simple(once, skip, heredocs);
            ends.push(self.scope.undo(picked));
            self.scope.undo(mark);
        }
        for (name, after) in branches::by_name(&self.scope, &ends) {
            let exported = after.iter().flatten().any(|v| v.exported);
            if let Some((value, alts)) = branches::assigned(&name, paths, &after) {
                self.scope.set_alts(&name, value, exported, alts);
            }
        }
        // Paths that agree on what the command uses make the same launch and findings.
        branches::dedup_from(&mut self.launches, launches);
        branches::dedup_from(&mut self.findings, findings);
    }

    /// [`Walker::command`] after its leading reserved words (`skip` of them), read once.
    fn simple(&mut self, cmd: Command, skip: usize, heredocs: &[lex::Heredoc]) {
        let words = &cmd.words[skip..];
        let mut prefix = Vec::new();
        let mut rest = words;
        while let Some((first, tail)) = rest.split_first() {
            let Some(assign) = self.scope.assignment(first) else {
                break;
            };
            prefix.push(assign);
            rest = tail;
        }
        if self.scope.budget.is_cut() {
            return self.report_cut();
        }
        self.clobber(&cmd.clobbers);
        if rest.is_empty() {
            // `done >> F`, `} > F`: what a loop or a group prints is not known here.
            self.compound_output(&cmd.outputs);
            for (name, value) in prefix {
                self.scope.set(&name, value, false);
            }
            return;
        }
        let head = self.scope.expand(&rest[0], true);
        match head.first().map(Field::text).as_deref() {
            Some(b @ ("export" | "declare" | "typeset" | "readonly" | "local")) => {
                let export = b == "export";
                return self.declaration(&rest[1..], export);
            }
            Some("eval") => {
                let fields: Vec<Field> = rest[1..]
                    .iter()
                    .flat_map(|w| self.scope.expand(w, true))
                    .collect();
                return self.eval(&fields);
            }
            _ => {}
        }
        // Sized up front: grown by doubling, a padded argv's fields were held up to three times.
        let mut fields: Vec<Field> = Vec::with_capacity(rest.len());
        fields.extend(head);
        for w in &rest[1..] {
            fields.extend(self.scope.expand(w, true));
        }
        // The words are not needed past here: a long argv is not held as words and fields at once.
        drop(cmd.words);
        if self.scope.budget.is_cut() {
            return self.report_cut();
        }
        let stdin = cmd.heredocs.last().and_then(|&i| heredocs.get(i));
        self.rewrites(&fields);
        self.write_files(&fields, &cmd.outputs, stdin);
        self.run(Cow::Owned(fields), prefix, stdin);
    }

    /// `$( ... )` and backticks run their commands in a subshell, which sees every variable of
    /// this one: a launch inside them (`echo $(vllm serve ...)`, `PID=$(vllm serve ... &)`) is a
    /// launch. What they print is unknown to the command they stand in.
    fn substitutions(&mut self, words: &[Word]) {
        for w in words {
            for part in &w.parts {
                match part {
                    Part::Subst { raw } => self.subshell(raw),
                    Part::Array(items) => self.substitutions(items),
                    _ => {}
                }
            }
        }
    }

    fn subshell(&mut self, raw: &[Ch]) {
        let Some(body) = lex::substitution_body(raw) else {
            return;
        };
        if self.depth >= MAX_DEPTH {
            return;
        }
        let env = self
            .scope
            .vars
            .iter()
            .map(|v| (v.name.clone(), v.value.clone()))
            .collect();
        let mut inner = self.child(env);
        inner.script(body);
        self.adopt(inner);
    }

    /// `INP001` where the read's budget ran out, once per read.
    pub(super) fn report_cut(&mut self) {
        if let Some((cut, at)) = self.scope.budget.take_report() {
            self.findings
                .push(Finding::new("INP001", Some(self.scope.loc(at))).var("reason", cut.reason()));
        }
    }

    /// `export A=1 B`, `declare -x A=1`: assignments without field splitting.
    fn declaration(&mut self, words: &[Word], export: bool) {
        let export = export
            || words.iter().any(|w| {
                matches!(literal_text(w).as_deref(), Some(f) if f.starts_with('-') && f.contains('x'))
            });
        for w in words {
            if let Some((name, value)) = self.scope.assignment(w) {
                self.scope.set(&name, value, export);
            } else if let Some(name) = literal_text(w).filter(|n| is_identifier(n)) {
                if let Some(v) = self.scope.var(&name).filter(|v| export && !v.exported) {
                    let (value, alts) = (v.value.clone(), v.alts.clone());
                    self.scope.set_alts(&name, value, true, alts);
                }
            }
        }
    }

    /// `eval ARGS`: the arguments joined with spaces are a script run by this same shell.
    fn eval(&mut self, fields: &[Field]) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        let mut src: Vec<Ch> = Vec::new();
        for f in fields {
            if let Some(last) = src.last().copied() {
                src.push(Ch {
                    c: ' ',
                    start: last.end,
                    end: last.end,
                    quoted: false,
                });
            }
            src.extend(f.lexer_chars());
        }
        self.depth += 1;
        self.script(src);
        self.depth -= 1;
    }

    /// A command's expanded words: enter a nested shell or container, or record an engine launch.
    /// Runs one simple command. Given its fields owned, a launch takes its arguments from them in
    /// place: a padded argv of 120,000 words is then not held twice.
    pub(super) fn run(
        &mut self,
        fields: Cow<'_, [Field]>,
        prefix: Vec<(String, Value)>,
        stdin: Option<&lex::Heredoc>,
    ) {
        // Borrowed: a padded argv of 120,000 words is not copied again.
        let texts: Vec<&str> = fields.iter().map(Field::as_str).collect();
        let Some(first) = texts.iter().position(|t| !commands::is_reserved(t)) else {
            return;
        };
        if commands::IGNORED_COMMANDS.contains(&commands::basename(texts[first])) {
            return;
        }
        if let Some(k) = commands::script_file(&texts, first) {
            if self.scripts_run.len() < MAX_SCRIPTS_RUN {
                self.scripts_run.push(fields[k].loc);
            }
        }
        for j in first..texts.len() {
            if let Some(w) = wrappers::at(&texts, j) {
                let env = self.env_of(&fields[first..j], prefix);
                return self.wrapped(fields, w, env, stdin);
            }
            if let Some(run) = commands::docker_run(&texts, j) {
                return self.docker(&fields, &texts, run);
            }
            match commands::shell_at(&texts, j) {
                Some(Shell::Script(script)) => {
                    // `sh -c SCRIPT NAME ARGS...`: NAME is `$0`, ARGS are `$1`... and `"$@"`.
                    let params = fields.get(script + 2..).unwrap_or_default();
                    return self.sh_c(&fields[first..j], &fields[script], params, prefix);
                }
                Some(Shell::Stdin) => {
                    if let Some(body) = stdin {
                        self.heredoc(&fields[first..j], body, prefix);
                    }
                    return;
                }
                None => {}
            }
            if let Some((engine, args_from)) = commands::match_launch(&texts, j) {
                let env = self.env_of(&fields[first..j], prefix);
                let command = fields[j..args_from].iter().map(|f| f.loc).reduce(Loc::join);
                if let Some(command) = command {
                    let args = match fields {
                        Cow::Owned(mut all) => {
                            all.drain(..args_from);
                            Cow::Owned(all)
                        }
                        Cow::Borrowed(all) => Cow::Borrowed(&all[args_from..]),
                    };
                    self.launch(engine, command, args, env);
                }
                return;
            }
            if let Some((p, args_from)) = by_platform::launcher::at(&texts, j) {
                let command = fields[j..args_from].iter().map(|f| f.loc).reduce(Loc::join);
                let args: Vec<Arg> = fields[args_from..].iter().map(Field::arg).collect();
                let found = command.and_then(|c| by_platform::launcher::launch(p, c, &args));
                self.launches.extend(found);
                return;
            }
        }
        self.options_by_keys(&fields[first..]);
    }

    /// `sh -c 'script'`: a fresh shell that sees only exported variables and the command's env.
    fn sh_c(
        &mut self,
        before: &[Field],
        script: &Field,
        params: &[Field],
        prefix: Vec<(String, Value)>,
    ) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        let mut inner = self.child(self.env_of(before, prefix));
        if !params.is_empty() {
            inner.scope.set("@", Value::Array(params.to_vec()), false);
        }
        inner.script(script.lexer_chars());
        still_unknown(script, &mut inner.launches);
        self.adopt(inner);
    }

    /// `bash <<EOF`: the body is the script. Unquoted, this shell expands it first, so the body
    /// sees all of its variables; quoted (`<<'EOF'`), only exported ones.
    fn heredoc(&mut self, before: &[Field], body: &lex::Heredoc, prefix: Vec<(String, Value)>) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        let mut env = self.env_of(before, prefix);
        if !body.quoted {
            for v in &self.scope.vars {
                if !env.iter().any(|(n, _)| *n == v.name) {
                    env.push((v.name.clone(), v.value.clone()));
                }
            }
        }
        let mut inner = self.child(env);
        inner.script(lex::unquoted(&body.body));
        self.adopt(inner);
    }

    /// `docker run [OPTIONS] IMAGE [COMMAND...]`: the container runs the command (or the image's
    /// entrypoint) with only its `-e` env; the image tag names the engine release.
    fn docker(&mut self, fields: &[Field], texts: &[&str], run: commands::DockerRun) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        let env: Vec<(String, Field)> = run
            .env
            .iter()
            .filter_map(|&k| docker_env(texts[k], &fields[k]))
            .collect();
        let scalars = env
            .iter()
            .map(|(n, f)| (n.clone(), Value::Scalar(f.clone())))
            .collect();
        let mut inner = self.child(scalars);
        inner.scope.open_env = false;
        let image = &fields[run.image];
        let args = &fields[run.image + 1..];
        let first = texts.get(run.image + 1).copied();
        match (
            run.entrypoint,
            commands::image_entrypoint(texts[run.image], first),
        ) {
            (Some(ep), _) => {
                let argv: Vec<Field> = std::iter::once(fields[ep].clone())
                    .chain(args.iter().cloned())
                    .collect();
                inner.run(Cow::Owned(argv), Vec::new(), None);
            }
            // The image's ENTRYPOINT takes the words after the image as its arguments; a command
            // that is itself a launch (`vllm serve m`) is read as the launch it was meant to be.
            (None, Some(engine)) if !starts_a_launch(args) => {
                inner.entrypoint_launch(engine, image.loc, args)
            }
            (None, _) => inner.run(Cow::Borrowed(args), Vec::new(), None),
        }
        // No engine command: the image's own server, which a platform may know by the image.
        if inner.launches.is_empty() && run.entrypoint.is_none() {
            inner.image_platform(&image.text(), image.loc, &env);
        }
        let gpus = run.gpus.and_then(|g| commands::docker_gpus(texts[g]));
        for l in &mut inner.launches {
            l.engine_version =
                placement::image_version(texts[run.image], l.engine.name()).map(|v| (v, image.loc));
            l.placement.image = Some((texts[run.image].to_string(), image.loc));
            l.placement.gpus_per_pod = gpus.or(l.placement.gpus_per_pod);
            l.placement.pods = Some(1);
        }
        self.adopt(inner);
    }

    /// Exported variables, then `KEY=value` prefixes, then `env KEY=value` words before the command.
    pub(super) fn env_of(
        &self,
        before: &[Field],
        prefix: Vec<(String, Value)>,
    ) -> Vec<(String, Value)> {
        let mut env: Vec<(String, Value)> = self
            .scope
            .vars
            .iter()
            .filter(|v| v.exported)
            .map(|v| (v.name.clone(), v.value.clone()))
            .collect();
        let words = before.iter().filter_map(|f| {
            let text = f.text();
            let (name, _) = text.split_once('=')?;
            let skip = name.chars().count() + 1;
            is_identifier(name).then(|| (name.to_string(), Value::Scalar(f.tail(skip))))
        });
        for (name, value) in prefix.into_iter().chain(words) {
            env.retain(|(n, _)| *n != name);
            env.push((name, value));
        }
        env
    }

    /// Records a launch; an argument that may stand for any number of words is `INP004`.
    fn launch(
        &mut self,
        engine: Engine,
        command: Loc,
        args: Cow<'_, [Field]>,
        env: Vec<(String, Value)>,
    ) {
        for (i, f) in args.iter().enumerate() {
            let Some((name, kind)) = f.splat.as_deref() else {
                continue;
            };
            let prev = i.checked_sub(1).map(|p| args[p].text());
            // `--flag $X` is one value (the engine reader checks it); `vllm serve $MODEL` the model.
            let a_value = prev.is_some_and(|p| p.starts_with('-') && !p.contains('='));
            let the_model = i == 0 && engine != Engine::Sglang;
            if *kind == Splat::Words && (a_value || the_model) {
                continue;
            }
            self.findings.push(
                Finding::new("INP004", Some(f.loc))
                    .var(
                        "flag",
                        format!("what `{}` adds to the command line", f.text()),
                    )
                    .var("vars", name)
                    .label("any engine flag may come from here"),
            );
        }
        let env = env
            .into_iter()
            .filter_map(|(name, value)| Some((name, env_arg(value)?)))
            .collect();
        let files = self.files_read(&args);
        let args = match args {
            Cow::Owned(fields) => {
                // Collected in place into the fields' buffer, then trimmed to the arguments' size.
                let mut args: Vec<Arg> = fields.into_iter().map(Field::into_arg).collect();
                args.shrink_to_fit();
                args
            }
            Cow::Borrowed(fields) => fields.iter().map(Field::arg).collect(),
        };
        self.launches.push(Launch {
            env,
            files,
            ..Launch::new(engine, command, args)
        });
    }

    /// A launch by an image's own entrypoint (`vllm serve` of `vllm/vllm-openai`), which has no
    /// command words in the file: `command` is where the image is named; `args` follow it.
    pub fn entrypoint_launch(&mut self, engine: Engine, command: Loc, args: &[Field]) {
        let env = self.env_of(&[], Vec::new());
        self.launch(engine, command, Cow::Borrowed(args), env);
    }

    /// Defines an exported variable (Dockerfile `ENV`, container env).
    pub fn export(&mut self, name: &str, value: Field) {
        self.scope.set(name, Value::Scalar(value), true);
    }

    /// Walks an exec-form argv (Dockerfile `CMD [...]`, a container's command): no expansion.
    pub fn argv<'f>(&mut self, fields: impl Into<Cow<'f, [Field]>>) {
        self.run(fields.into(), Vec::new(), None);
    }
}

fn starts_a_launch(args: &[Field]) -> bool {
    let texts: Vec<&str> = args.iter().map(Field::as_str).collect();
    !texts.is_empty() && commands::match_launch(&texts, 0).is_some()
}

/// An env entry as the engine sees it: a known value, or the reference kept as written.
fn env_arg(value: Value) -> Option<Arg> {
    match value {
        Value::Scalar(f) => Some(f.arg()),
        Value::Array(items) => items.first().map(Field::arg),
        Value::Unknown(_) => None,
    }
}

/// A `docker run -e NAME=value` (`--env=NAME=value`, `-eNAME=value`) word: the name and the value
/// as a field of its own.
fn docker_env(text: &str, field: &Field) -> Option<(String, Field)> {
    let kv = text
        .strip_prefix("--env=")
        .or_else(|| text.strip_prefix("-e").filter(|r| !r.is_empty()))
        .unwrap_or(text);
    let (name, _) = kv.split_once('=')?;
    let skip = text.chars().count() - kv.chars().count() + name.chars().count() + 1;
    is_identifier(name).then(|| (name.to_string(), field.tail(skip)))
}

/// A reference this shell could not expand in an `sh -c` script (`'$MODEL'` inside `"..."`,
/// whose value differs between branches) is still unknown in the words the inner shell makes of
/// it, though its quotes there keep the text as written: an argument of the launch that holds
/// that text, where the reference stands, names it as unresolved (INP004), never the `$MODEL`
/// text as a value. One expanded to the caller's default (`${CTX:-8192}`) is that default, still
/// the caller's.
fn still_unknown(script: &Field, launches: &mut [Launch]) {
    let mut refs: Vec<(usize, &str, bool)> = script
        .names
        .iter()
        .filter_map(|(i, n)| {
            let (_, start, _) = script.chars.get(*i)?;
            Some((start, n.as_str(), script.is_default(*i)))
        })
        .collect();
    if refs.is_empty() {
        return;
    }
    refs.sort_unstable();
    for arg in launches.iter_mut().flat_map(|l| l.args.iter_mut()) {
        let span = arg.loc.range();
        let from = refs.partition_point(|(at, ..)| *at < span.start);
        for (_, name, default) in refs[from..].iter().take_while(|(at, ..)| *at < span.end) {
            let var = bare(name);
            let written = [format!("${var}"), format!("${{{var}")]
                .iter()
                .any(|r| arg.text.contains(r.as_str()));
            // The inner shell saw it unquoted and named it already (`$(RANK)`, `RANK`).
            if arg.unresolved.iter().any(|u| u.contains(var)) {
                continue;
            }
            // Not written: the outer shell put the caller's default there (`${CTX:-8192}`).
            let default = !written && *default;
            if written || default {
                arg.defaulted = default && (arg.unresolved.is_empty() || arg.defaulted);
                arg.unresolved.push((*name).to_string());
            }
        }
    }
}

/// The variable a description of an unresolved reference names: `M` of `M (unknown or ...)`.
fn bare(name: &str) -> &str {
    let name = name.trim_start_matches(['$', '(', '{']);
    let end = name
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(name.len());
    &name[..end]
}
