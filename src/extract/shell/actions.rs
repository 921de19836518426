//! GitHub Actions workflows (`jobs.<id>.steps`) and composite actions (`runs.using: composite`):
//! each `run:` step is a script read with the workflow's, job's and step's `env:`, in the job's
//! `container:` image when it has one.
//!
//! The runner replaces every `${{ ... }}` expression in a `run:` text before the shell reads it
//! (docs.github.com, "Evaluate expressions in workflows and actions"). An expression kvlint can
//! evaluate from the file is put in place: a literal, `env.NAME` of a constant `env:` entry, and
//! `matrix.KEY` of a matrix whose values are written out, the step being read once per value
//! (per combination of the keys it uses, at most [`MAX_COMBINATIONS`]). Any other expression
//! (`secrets.*`, `inputs.*`, `github.*`, a function) is a value the runner fills in, unknown
//! here: `INP004` where the pool needs it. An input the file declares with a `default`
//! (`on.workflow_dispatch.inputs`, `on.workflow_call.inputs`, a composite action's `inputs`), or
//! an expression with a literal fallback (`inputs.model || 'Qwen/Qwen3-8B'`), is the caller's
//! default: the launch lists it and is planned with it, still INP004 (the caller decides). The
//! runner's own environment is open: a variable the file does not set may come from it or from
//! `$GITHUB_ENV`.

use super::expand::{Field, Value};
use super::{commands, lex, walk::Walker, Budget, MappedWord};
use crate::extract::k8s::{placement, scalar};
use crate::extract::Extracted;
use crate::gpu::catalog;
use crate::source::{FileId, SourceFile};
use crate::yaml::{Node, Value as Y};

/// Matrix combinations a step is read with; a step using more is read once, its matrix values
/// unknown.
const MAX_COMBINATIONS: usize = 16;

/// An `env:` entry as the step sees it.
#[derive(Clone)]
enum Env {
    Known(MappedWord),
    Unknown(String),
    /// The whole value is an expression with a caller's default.
    Default(Field),
}

/// Inputs the file declares with a default, by name.
type Inputs = Vec<(String, String)>;

/// An expression the runner fills in, by the variable that stands for it in the script.
struct Expr {
    name: String,
    why: String,
    /// What runs when the caller gives no value, mapped to the expression.
    default: Option<Field>,
}

impl Expr {
    /// The default as the caller's (its name unresolved), else why the value is unknown.
    fn defaulted(self) -> Result<Field, String> {
        let mut f = self.default.ok_or(self.why.clone())?;
        f.names = vec![(0, self.why)];
        f.defaults = vec![0];
        Ok(f)
    }

    fn value(self) -> Value {
        self.defaulted().map_or_else(Value::Unknown, Value::Scalar)
    }
}

type EnvList = Vec<(String, Env)>;

/// The launches of every `run:` step.
pub fn read(file: FileId, src: &SourceFile, doc: &Node, title: &str) -> Extracted {
    let mut out = Extracted::default();
    let inputs = input_defaults(doc);
    let top = env_list(src, doc.get("env"), &[], &EnvList::new(), &inputs);
    let shell = default_shell(doc);
    if let Some(runs) = doc.get("runs") {
        let job = Job {
            env: top.clone(),
            matrix: Vec::new(),
            shell: shell.clone(),
            inputs: inputs.clone(),
        };
        job.steps(file, src, runs.get("steps"), &mut out);
        let name = doc
            .get("name")
            .and_then(Node::scalar_text)
            .unwrap_or_default();
        super::titled(Some(title), &mut out.launches, &name, None);
    }
    let Some(Y::Map(jobs)) = doc.get("jobs").map(|j| &j.value) else {
        return out;
    };
    for (node_name, node) in jobs {
        let first = out.launches.len();
        let matrix = matrix(node);
        let mut env = top.clone();
        let container = node.get("container");
        let image =
            container.and_then(|c| c.get("image").or(Some(c)).filter(|i| i.as_str().is_some()));
        env.extend(env_list(
            src,
            container.and_then(|c| c.get("env")),
            &[],
            &env,
            &inputs,
        ));
        env.extend(env_list(src, node.get("env"), &[], &env, &inputs));
        let job = Job {
            env,
            matrix,
            shell: default_shell(node).or_else(|| shell.clone()),
            inputs: inputs.clone(),
        };
        job.steps(file, src, node.get("steps"), &mut out);
        services(file, src, node, &mut out);
        let id = node_name.scalar_text().unwrap_or_default();
        super::titled(Some(title), &mut out.launches[first..], &id, None);
        let gpu = runs_on_gpu(node);
        for l in &mut out.launches[first..] {
            if let Some(i) = image.filter(|_| l.placement.image.is_none()) {
                in_image(
                    std::slice::from_mut(l),
                    i.as_str().unwrap_or_default(),
                    i.loc,
                );
                l.placement.gpus_per_pod = container
                    .and_then(|c| c.get("options"))
                    .and_then(Node::as_str)
                    .and_then(options_gpus);
            }
            if l.placement.gpu.is_none() {
                l.placement.gpu.clone_from(&gpu);
            }
        }
    }
    out
}

struct Job {
    env: EnvList,
    /// Each key with its written-out values (`include` entries' values added).
    matrix: Vec<(String, Vec<String>)>,
    shell: Option<String>,
    inputs: Inputs,
}

impl Job {
    fn steps(&self, file: FileId, src: &SourceFile, steps: Option<&Node>, out: &mut Extracted) {
        let Some(Y::Seq(steps)) = steps.map(|s| &s.value) else {
            return;
        };
        for step in steps {
            if let Some(uses) = step.get("uses") {
                docker_step(file, src, uses, step, (&self.env, &self.inputs), out);
            }
            let Some(run) = step.get("run") else { continue };
            let shell = step
                .get("shell")
                .and_then(Node::scalar_text)
                .or_else(|| self.shell.clone());
            if !shell.as_deref().is_none_or(is_posix_shell) {
                continue;
            }
            let Some(script) = scalar::word(src, run) else {
                continue;
            };
            let keys = self.matrix_keys(src, step, &script);
            for combo in self.combinations(&keys) {
                let mut env = self.env.clone();
                env.extend(env_list(src, step.get("env"), &combo, &env, &self.inputs));
                let (script, exprs) = substitute(&script, &combo, &env, &self.inputs);
                let found = run_step(file, &script, &env, exprs);
                out.launches.extend(found.launches);
                for f in found.findings {
                    if !out.findings.contains(&f) {
                        out.findings.push(f);
                    }
                }
            }
        }
    }

    /// The matrix keys a step's `run:` and `env:` use.
    fn matrix_keys(&self, src: &SourceFile, step: &Node, script: &MappedWord) -> Vec<usize> {
        let env_text = step
            .get("env")
            .and_then(|e| src.text.get(e.loc.range()))
            .unwrap_or("");
        self.matrix
            .iter()
            .enumerate()
            .filter(|(_, (k, _))| {
                let r = format!("matrix.{k}");
                script.chars.as_str().contains(&r) || env_text.contains(&r)
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// Every combination of the keys' values, or one empty combination when there are none or
    /// too many (their expressions then stay unknown).
    fn combinations(&self, keys: &[usize]) -> Vec<Vec<(String, String)>> {
        let mut combos: Vec<Vec<(String, String)>> = vec![Vec::new()];
        for &k in keys {
            let (name, values) = &self.matrix[k];
            if combos.len() * values.len() > MAX_COMBINATIONS {
                return vec![Vec::new()];
            }
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((name.clone(), v.clone()));
                        c
                    })
                })
                .collect();
        }
        combos
    }
}

/// `uses: docker://IMAGE`: the image runs `with.entrypoint` (else its own entrypoint) with
/// `with.args` split as a shell splits them (docs.github.com, "jobs.<job_id>.steps[*].with.args").
fn docker_step(
    file: FileId,
    src: &SourceFile,
    uses: &Node,
    step: &Node,
    (env, inputs): (&EnvList, &Inputs),
    out: &mut Extracted,
) {
    let Some(image) = uses.as_str().and_then(|u| u.strip_prefix("docker://")) else {
        return;
    };
    let with = |key: &str| {
        step.get("with")?
            .get(key)
            .and_then(|n| scalar::word(src, n))
    };
    let mut walker = Walker::new(file, false);
    let mut env = env.clone();
    env.extend(env_list(src, step.get("env"), &[], &env, inputs));
    let mut fields = Vec::new();
    if let Some(args) = with("args") {
        let (args, exprs) = substitute(&args, &[], &env, inputs);
        for e in exprs {
            walker.scope.set(&e.name.clone(), e.value(), true);
        }
        for w in lex::words(&args.field().lexer_chars()) {
            fields.extend(walker.scope.expand(&w, true));
        }
    }
    let first = fields.first().map(Field::as_str);
    match (with("entrypoint"), commands::image_entrypoint(image, first)) {
        (Some(ep), _) => {
            let argv: Vec<Field> = std::iter::once(ep.field()).chain(fields).collect();
            walker.argv(argv);
        }
        (None, Some(engine)) => walker.entrypoint_launch(engine, uses.loc, &fields),
        (None, None) => return,
    }
    let mut found = super::extracted(walker);
    in_image(&mut found.launches, image, uses.loc);
    out.launches.extend(found.launches);
    out.findings.extend(found.findings);
}

/// `services:` whose image is an engine's: the service runs the image's entrypoint with no
/// arguments (a service takes no command) and its own `env:`.
fn services(file: FileId, src: &SourceFile, job: &Node, out: &mut Extracted) {
    let Some(Y::Map(services)) = job.get("services").map(|s| &s.value) else {
        return;
    };
    for (_, svc) in services {
        let Some(image) = svc.get("image") else {
            continue;
        };
        let Some(name) = image.as_str() else { continue };
        let Some(engine) = commands::image_entrypoint(name, None) else {
            continue;
        };
        let mut walker = Walker::new(file, false);
        for (k, v) in env_list(src, svc.get("env"), &[], &EnvList::new(), &Inputs::new()) {
            match v {
                Env::Known(w) => walker.export(&k, w.field()),
                Env::Default(f) => walker.export(&k, f),
                Env::Unknown(_) => {}
            }
        }
        walker.entrypoint_launch(engine, image.loc, &[]);
        let mut found = super::extracted(walker);
        in_image(&mut found.launches, name, image.loc);
        let gpus = svc
            .get("options")
            .and_then(Node::as_str)
            .and_then(options_gpus);
        for l in &mut found.launches {
            l.placement.gpus_per_pod = gpus;
        }
        out.launches.extend(found.launches);
        out.findings.extend(found.findings);
    }
}

/// GPUs a container's `options` give it (`--gpus 2`, `--gpus=device=0,1`).
fn options_gpus(options: &str) -> Option<u32> {
    let words: Vec<&str> = options.split_whitespace().collect();
    words
        .iter()
        .enumerate()
        .find_map(|(i, w)| match w.strip_prefix("--gpus") {
            Some("") => words.get(i + 1).and_then(|v| commands::docker_gpus(v)),
            Some(v) => v.strip_prefix('=').and_then(commands::docker_gpus),
            None => None,
        })
}

/// Launches in a container of `image`: its tag names the release.
fn in_image(launches: &mut [crate::launch::Launch], image: &str, at: crate::source::Loc) {
    for l in launches {
        l.placement.image = Some((image.to_string(), at));
        l.engine_version = placement::image_version(image, l.engine.name()).map(|v| (v, at));
        l.placement.pods = Some(1);
    }
}

/// Reads one `run:` text with its env; `exprs` are the expressions left unknown, by the name
/// that stands for each.
fn run_step(file: FileId, script: &MappedWord, env: &EnvList, exprs: Vec<Expr>) -> Extracted {
    let mut walker = Walker::new(file, true);
    let mut input = script.chars.as_str().len();
    for (name, value) in env {
        match value {
            Env::Known(w) => {
                input += w.chars.as_str().len();
                walker.export(name, w.field());
            }
            Env::Unknown(why) => walker.scope.set(name, Value::Unknown(why.clone()), true),
            Env::Default(f) => walker.export(name, f.clone()),
        }
    }
    for e in exprs {
        walker.scope.set(&e.name.clone(), e.value(), true);
    }
    walker.scope.budget = Budget::for_input(input);
    walker.script(script.field().lexer_chars());
    super::extracted(walker)
}

/// The `run:` text with each `${{ ... }}` replaced: by its value where the file gives it (each
/// character mapped to the whole expression), else by a reference to a variable standing for it,
/// returned with the reason it is unknown.
fn substitute(
    script: &MappedWord,
    combo: &[(String, String)],
    env: &EnvList,
    inputs: &Inputs,
) -> (MappedWord, Vec<Expr>) {
    let chars: Vec<(char, usize, usize)> = script.chars.iter().collect();
    let text = script.chars.as_str();
    let mut out = super::Chars::default();
    let mut unknown = Vec::new();
    let mut i = 0;
    // Byte offset in `text` of each character.
    let offsets: Vec<usize> = text.char_indices().map(|(b, _)| b).collect();
    while i < chars.len() {
        let rest = &text[offsets[i]..];
        let close = rest.starts_with("${{").then(|| rest.find("}}")).flatten();
        let Some(close) = close else {
            out.push(chars[i]);
            i += 1;
            continue;
        };
        let n = rest[..close + 2].chars().count();
        let (start, end) = (chars[i].1, chars[i + n - 1].2);
        let expr = rest[3..close].trim();
        match evaluate(expr, combo, env) {
            Some(value) => out.extend(value.chars().map(|c| (c, start, end))),
            None => {
                let name = format!("GITHUB_EXPRESSION_{}", unknown.len());
                out.extend(format!("${{{name}}}").chars().map(|c| (c, start, end)));
                let default = caller_default(expr, combo, env, inputs).map(|d| {
                    let at = crate::source::Loc::new(script.loc.file, start..end);
                    let chars: Vec<lex::Ch> = d
                        .chars()
                        .map(|c| lex::Ch {
                            c,
                            start,
                            end,
                            quoted: false,
                        })
                        .collect();
                    Field::from_chars(&chars, at)
                });
                let why = match &default {
                    Some(d) => format!(
                        "`${{{{ {expr} }}}}` (\"{}\" unless the caller gives a value)",
                        d.as_str()
                    ),
                    None => format!(
                        "`${{{{ {expr} }}}}` (a GitHub Actions expression the runner fills in)"
                    ),
                };
                unknown.push(Expr { name, why, default });
            }
        }
        i += n;
    }
    let word = MappedWord {
        chars: out,
        loc: script.loc,
        unresolved: Vec::new(),
        defaulted: false,
    };
    (word, unknown)
}

/// An expression's value from the file: a quoted literal or number, `matrix.KEY` of this
/// combination, `env.NAME` of a constant entry.
/// The text an expression the runner fills in has when the caller gives no value: an input's
/// declared `default`, or the literal after `||` (never empty: an empty value is no default).
fn caller_default(
    expr: &str,
    combo: &[(String, String)],
    env: &EnvList,
    inputs: &Inputs,
) -> Option<String> {
    let (left, fallback) = match expr.rsplit_once("||") {
        Some((l, r)) => (l.trim(), evaluate(r.trim(), combo, env)),
        None => (expr, None),
    };
    let input = left
        .strip_prefix("inputs.")
        .or_else(|| left.strip_prefix("github.event.inputs."));
    let declared = input.and_then(|n| inputs.iter().find(|(k, _)| k == n).map(|(_, d)| d.clone()));
    declared.or(fallback).filter(|d| !d.is_empty())
}

/// Inputs declared with a default: a workflow's `on.workflow_dispatch.inputs` and
/// `on.workflow_call.inputs`, a composite action's `inputs`.
fn input_defaults(doc: &Node) -> Inputs {
    // A YAML 1.1 reader takes the key `on` for `true`.
    let on = match &doc.value {
        Y::Map(entries) => entries
            .iter()
            .find(|(k, _)| matches!(&k.value, Y::Bool(true)) || k.as_str() == Some("on"))
            .map(|(_, v)| v),
        _ => None,
    };
    let lists = [
        on.and_then(|o| o.get("workflow_dispatch")),
        on.and_then(|o| o.get("workflow_call")),
        Some(doc),
    ];
    let mut out = Inputs::new();
    for inputs in lists.into_iter().flatten().filter_map(|n| n.get("inputs")) {
        let Y::Map(entries) = &inputs.value else {
            continue;
        };
        for (k, v) in entries {
            let default = v.get("default").and_then(Node::scalar_text);
            if let (Some(name), Some(d)) = (k.scalar_text(), default) {
                out.push((name, d));
            }
        }
    }
    out
}

fn evaluate(expr: &str, combo: &[(String, String)], env: &EnvList) -> Option<String> {
    if let Some(key) = expr.strip_prefix("matrix.") {
        return combo.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
    }
    if let Some(name) = expr.strip_prefix("env.") {
        return env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| match v {
                Env::Known(w) if w.unresolved.is_empty() => Some(w.chars.as_str().to_string()),
                _ => None,
            });
    }
    if let Some(s) = expr.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        return (!s.contains('\'')).then(|| s.to_string());
    }
    expr.parse::<f64>().is_ok().then(|| expr.to_string())
}

/// An `env:` mapping: each value with its expressions evaluated, or unknown with the reason.
fn env_list(
    src: &SourceFile,
    node: Option<&Node>,
    combo: &[(String, String)],
    outer: &EnvList,
    inputs: &Inputs,
) -> EnvList {
    let Some(Y::Map(entries)) = node.map(|n| &n.value) else {
        return Vec::new();
    };
    let mut out = EnvList::new();
    for (k, v) in entries {
        let Some(name) = k.scalar_text() else {
            continue;
        };
        let Some(word) = scalar::word(src, v) else {
            continue;
        };
        // The entries of one `env:` map do not see each other: only the outer levels'.
        let (value, exprs) = substitute(&word, combo, outer, inputs);
        let env = match <[Expr; 1]>::try_from(exprs) {
            // The whole value is one expression: its default, if it has one.
            Ok([e]) if value.chars.as_str() == format!("${{{}}}", e.name) => match e.defaulted() {
                Ok(f) => Env::Default(f),
                Err(why) => Env::Unknown(format!("{name}, set from {why}")),
            },
            Ok([e]) => Env::Unknown(format!("{name}, set from {}", e.why)),
            Err(exprs) => match exprs.first() {
                None => Env::Known(value),
                Some(e) => Env::Unknown(format!("{name}, set from {}", e.why)),
            },
        };
        out.push((name, env));
    }
    out
}

/// `defaults.run.shell` of a workflow or job.
fn default_shell(node: &Node) -> Option<String> {
    node.get("defaults")?
        .get("run")?
        .get("shell")?
        .scalar_text()
}

/// `bash`, `sh`, `bash -l {0}`: a shell the reader reads (not `python`, `pwsh`, `cmd`).
fn is_posix_shell(shell: &str) -> bool {
    let first = shell.split_whitespace().next().unwrap_or("");
    matches!(super::commands::basename(first), "bash" | "sh")
}

/// The matrix keys whose values are written out.
fn matrix(job: &Node) -> Vec<(String, Vec<String>)> {
    let Some(Y::Map(entries)) = job
        .get("strategy")
        .and_then(|s| s.get("matrix"))
        .map(|m| &m.value)
    else {
        return Vec::new();
    };
    let mut keys: Vec<(String, Vec<String>)> = Vec::new();
    for (k, v) in entries {
        let Some(name) = k.scalar_text() else {
            continue;
        };
        if let Y::Seq(items) = &v.value {
            let values: Option<Vec<String>> = items.iter().map(Node::scalar_text).collect();
            keys.extend(values.map(|vs| (name, vs)));
        }
    }
    // `include` entries add values (and combinations) of their own.
    if let Some(Y::Seq(includes)) = job
        .get("strategy")
        .and_then(|s| s.get("matrix"))
        .and_then(|m| m.get("include"))
        .map(|i| &i.value)
    {
        for inc in includes {
            let Y::Map(pairs) = &inc.value else { continue };
            for (k, v) in pairs {
                let (Some(name), Some(value)) = (k.scalar_text(), v.scalar_text()) else {
                    continue;
                };
                match keys.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, vs)) if !vs.contains(&value) => vs.push(value),
                    Some(_) => {}
                    None => keys.push((name, vec![value])),
                }
            }
        }
    }
    keys
}

/// A `runs-on` label that names a GPU the catalog knows (`runs-on: [self-hosted, h100]`).
fn runs_on_gpu(job: &Node) -> Option<(String, crate::source::Loc)> {
    let node = job.get("runs-on")?;
    let labels: Vec<&Node> = match &node.value {
        Y::Seq(items) => items.iter().collect(),
        _ => vec![node],
    };
    labels.into_iter().find_map(|l| {
        let name = l.as_str()?;
        catalog::lookup(name).map(|_| (name.to_string(), l.loc))
    })
}
