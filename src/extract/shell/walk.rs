//! Walking a script: simple commands in order, variables tracked through assignments and
//! branches, nested shells (`sh -c`, `eval`, `bash <<EOF`, `docker run`) entered, launches kept.

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
    has_else: bool,
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
            inner.scope.set(&name, value, true);
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
        });
    }

    /// `elif`, `else`, `;;`: the next branch starts from the variables before the compound.
    fn branch(&mut self, is_else: bool) {
        if let Some(f) = self.frames.last_mut() {
            f.ends.push(self.scope.undo(f.mark));
            f.has_else |= is_else;
        }
    }

    /// `fi`, `done`, `esac`, the end of a `&&` list: a variable that ends with different values
    /// on different paths is unknown from here on (which path runs is decided at run time).
    fn close(&mut self) {
        let Some(mut f) = self.frames.pop() else {
            return;
        };
        f.ends.push(self.scope.undo(f.mark));
        let mut names: Vec<String> = Vec::new();
        for (name, _) in f.ends.iter().flatten() {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        // Without an `else`, no branch may run at all: the values from before count too.
        let no_branch = !(f.kind == FrameKind::If && f.has_else);
        for name in names {
            let before = self.scope.var(&name).cloned();
            let mut values: Vec<Option<Var>> = f
                .ends
                .iter()
                .map(|end| match end.iter().find(|(n, _)| *n == name) {
                    Some((_, v)) => v.clone(),
                    None => before.clone(),
                })
                .collect();
            if no_branch {
                values.push(before.clone());
            }
            let exported = values.iter().flatten().any(|v| v.exported);
            let first = values[0].as_ref().map(|v| &v.value);
            let same = |v: &Option<Var>| match (v.as_ref().map(|v| &v.value), first) {
                (Some(a), Some(b)) => same_value(a, b),
                (a, b) => a.is_none() && b.is_none(),
            };
            let value = if values.iter().all(same) {
                match first {
                    Some(v) => v.clone(),
                    None => continue,
                }
            } else {
                let refs: Vec<Option<&Var>> = values.iter().map(Option::as_ref).collect();
                Value::Unknown(differing(&name, &refs))
            };
            self.scope.set(&name, value, exported);
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
                    let value = v.value.clone();
                    self.scope.set(&name, value, true);
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

/// The same text (and the same unknowns) wherever it was written.
fn same_value(a: &Value, b: &Value) -> bool {
    let text = |f: &Field| (f.text(), f.unresolved());
    match (a, b) {
        (Value::Scalar(x), Value::Scalar(y)) => text(x) == text(y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| text(x) == text(y))
        }
        (Value::Unknown(x), Value::Unknown(y)) => x == y,
        _ => false,
    }
}

/// `CTX (8192 or 131072, set in different branches)`.
fn differing(name: &str, values: &[Option<&Var>]) -> String {
    const BRANCHES: &str = ", set in different branches)";
    let mut seen: Vec<String> = Vec::new();
    for v in values {
        let texts = match v.map(|v| &v.value) {
            Some(Value::Scalar(f)) if f.chars.is_empty() => vec!["\"\"".to_string()],
            Some(Value::Scalar(f)) if f.names.is_empty() => vec![f.text()],
            Some(Value::Array(items)) => vec![format!(
                "({})",
                items.iter().map(Field::text).collect::<Vec<_>>().join(" ")
            )],
            // A nested compound's alternatives are this one's too.
            Some(Value::Unknown(why)) => {
                match why.strip_suffix(BRANCHES).and_then(|w| w.split_once(" (")) {
                    Some((_, alts)) => alts.split(" or ").map(str::to_string).collect(),
                    None => vec!["unknown".to_string()],
                }
            }
            Some(_) => vec!["unknown".to_string()],
            None => vec!["unset".to_string()],
        };
        for text in texts {
            if !seen.contains(&text) {
                seen.push(text);
            }
        }
    }
    format!("{name} ({}{BRANCHES}", seen.join(" or "))
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
/// text as a value. A caller's default the outer reader put in place of its reference
/// (`${CTX:-32768}` in a compose file, `"${CTX:-32768}"` in the outer script) is no reference the
/// inner shell could read: where every name the script holds is one ([`Field::defaulted`]), the
/// argument that holds its characters names it, a caller's default still.
fn still_unknown(script: &Field, launches: &mut [Launch]) {
    let mut refs: Vec<(usize, &str, bool)> = script
        .names
        .iter()
        .filter_map(|(i, n)| {
            script
                .chars
                .get(*i)
                .map(|(c, start, _)| (start, n.as_str(), script.defaulted && c != '$'))
        })
        .collect();
    if refs.is_empty() {
        return;
    }
    refs.sort_unstable();
    for arg in launches.iter_mut().flat_map(|l| l.args.iter_mut()) {
        let span = arg.loc.range();
        let from = refs.partition_point(|(at, _, _)| *at < span.start);
        for (_, name, replaced) in refs[from..].iter().take_while(|(at, _, _)| *at < span.end) {
            if *replaced {
                if !arg.unresolved.iter().any(|u| u == name) {
                    arg.defaulted =
                        script.defaulted && (arg.unresolved.is_empty() || arg.defaulted);
                    arg.unresolved.push((*name).to_string());
                }
                continue;
            }
            let var = bare(name);
            let written = [format!("${var}"), format!("${{{var}")]
                .iter()
                .any(|r| arg.text.contains(r.as_str()));
            // The inner shell saw it unquoted and named it already (`$(RANK)`, `RANK`).
            if written && !arg.unresolved.iter().any(|u| u.contains(var)) {
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
