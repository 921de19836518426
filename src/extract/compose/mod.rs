//! docker-compose files: each service's `entrypoint` + `command` (lists, or strings split the way
//! compose splits them), its container environment (`env_file`, then `environment`), and the GPUs
//! `deploy.resources.reservations.devices` reserves.
//!
//! Every value is interpolated first, as compose does before anything else reads the file, with
//! the variables of the project's `.env` (the file's directory); a variable the `.env` does not
//! set is unknown (the shell that runs compose may set it). With a default the file writes
//! (`${CTX:-32768}`) the value is that default, a caller's default ([`MappedWord::defaulted`],
//! [`crate::launch::Arg::defaulted`]): listed and planned with, and a pool setting holding one is
//! still INP004, as the caller decides. Without one, a launch setting that uses it is INP004 with
//! no value; a whole word of it where a flag may stand is INP004 either way (any flag may come
//! from it). The container's own environment is no part of that: `environment` and `env_file`
//! reach the container, where a shell (`sh -c '... $CTX'`, `$$CTX` in the file) reads them.

mod dotenv;
mod interpolation;
mod shellwords;

use crate::extract::images;
use crate::extract::k8s::{self, placement, scalar};
use crate::extract::shell::{self, MappedWord};
use crate::extract::Extracted;
use crate::finding::Finding;
use crate::launch::{Engine, Launch, ObjectRef};
use crate::source::{FileId, Loc, SourceFile};
use crate::yaml::{Node, Value};
use interpolation::{Ch, Interpolated};
use std::path::{Path, PathBuf};

/// A compose file: a `services` mapping whose entries have an `image` or `build`, and no `kind`.
pub fn is_compose(doc: &Node) -> bool {
    let Some(Value::Map(services)) = doc.get("services").map(|s| &s.value) else {
        return false;
    };
    doc.get("kind").is_none()
        && services
            .iter()
            .any(|(_, s)| s.get("image").is_some() || s.get("build").is_some())
}

/// The services' launches, and what their commands hide (INP001, INP004).
pub fn launches(file: FileId, src: &SourceFile, doc: &Node) -> Extracted {
    let mut out = Extracted::default();
    let Some(Value::Map(services)) = doc.get("services").map(|s| &s.value) else {
        return out;
    };
    let project = Project::new(file, src, doc, &mut out.findings);
    for (name, svc) in services {
        let name = name.scalar_text().unwrap_or_default();
        let found = project.service(svc);
        out.findings.extend(found.findings);
        for mut l in found.launches {
            let by_platform = l.object.take().map(|o| o.kind);
            l.object = Some(ObjectRef {
                kind: by_platform.unwrap_or_else(|| "ComposeService".into()),
                namespace: None,
                name: name.clone(),
                container: None,
            });
            out.launches.push(l);
        }
    }
    out
}

/// What compose reads the file with: the project directory and the variables of its `.env`.
struct Project<'a> {
    file: FileId,
    src: &'a SourceFile,
    dir: PathBuf,
    vars: dotenv::Vars,
}

impl<'a> Project<'a> {
    /// The project directory is the compose file's (docs.docker.com, "Set, use, and manage
    /// variables in a Compose file with interpolation": `.env` in the project directory). A
    /// `.env` kvlint cannot read sets nothing it knows; one compose would refuse is INP001.
    fn new(file: FileId, src: &'a SourceFile, doc: &Node, findings: &mut Vec<Finding>) -> Self {
        let dir = Path::new(&src.name)
            .parent()
            .map_or_else(PathBuf::new, Path::to_path_buf);
        let path = dir.join(".env");
        let unknown = |_: &str| None;
        let text = dotenv::read(&path).ok().flatten().unwrap_or_default();
        let vars = dotenv::parse(&text, &unknown).unwrap_or_else(|why| {
            let at = doc.get("services").map_or(doc.loc, |s| s.loc);
            findings.push(invalid(
                at,
                format!("the project's {}: {why}", path.display()),
            ));
            Vec::new()
        });
        Project {
            file,
            src,
            dir,
            vars,
        }
    }

    /// A variable's value from the `.env`; `None` when it is not known.
    fn lookup(&self, name: &str) -> Option<String> {
        self.vars
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.clone())
    }

    fn service(&self, svc: &Node) -> Extracted {
        let mut findings = Vec::new();
        let command = match svc.get("command") {
            Some(c) => self.words(c, &mut findings),
            None => Vec::new(),
        };
        let mut argv = match svc.get("entrypoint") {
            Some(e) => self.words(e, &mut findings),
            None => self.image_entrypoint(svc, &command, &mut findings),
        };
        argv.extend(command);
        let whole_defaults: Vec<Loc> = argv
            .iter()
            .filter(|w| wholly_a_default(w))
            .map(|w| w.loc)
            .collect();
        let image = svc.get("image").and_then(|i| {
            let text = self.text(i, &mut findings)?;
            Some((text, i.loc))
        });
        // Compose refuses to start a service whose command it cannot interpolate: none of it runs.
        if findings.iter().any(|f| f.rule == "INP001") {
            return Extracted {
                launches: Vec::new(),
                findings,
            };
        }
        let env = self.environment(svc, &argv, &mut findings);
        let mut found = shell::exec_launches(self.file, argv, &env);
        // A worker image whose server reads its settings from env (Runpod worker-sglang).
        if found.launches.is_empty() && found.findings.is_empty() {
            if let Some((_, read)) =
                crate::extract::by_platform::container(self.file, self.src, svc)
            {
                found = read;
            }
        }
        for l in &mut found.launches {
            findings.extend(any_flag(l));
            findings.extend(any_flag_by_default(l, &whole_defaults));
            l.placement.gpus_per_pod = self.reserved_gpus(svc);
            l.placement.pods = Some(1);
            l.engine_version = image
                .as_ref()
                .and_then(|(i, loc)| Some((placement::image_version(i, l.engine.name())?, *loc)));
            l.placement.image = image.clone();
        }
        found.findings.extend(findings);
        found
    }

    /// A scalar interpolated; `None` (and INP001) when compose refuses it.
    fn interpolated(&self, node: &Node, findings: &mut Vec<Finding>) -> Option<Interpolated> {
        self.interpolated_with(node, findings, true)
    }

    /// [`Project::interpolated`], with the file's defaults taken or not.
    fn interpolated_with(
        &self,
        node: &Node,
        findings: &mut Vec<Finding>,
        defaults: bool,
    ) -> Option<Interpolated> {
        let word = scalar::word(self.src, node)?;
        let chars: Vec<Ch> = word.chars.iter().collect();
        let lookup = |name: &str| self.lookup(name);
        interpolation::interpolate_with(&chars, &lookup, defaults)
            .map_err(|why| findings.push(invalid(node.loc, format!("compose refuses it: {why}"))))
            .ok()
    }

    /// A scalar interpolated as one argv word. A word that holds a caller's default and an
    /// unknown with none takes no default: a shell that reads it again (`sh -c`) could not tell
    /// the default's characters from known ones.
    fn word(&self, node: &Node, findings: &mut Vec<Finding>) -> Option<MappedWord> {
        let mut text = self.interpolated(node, findings)?;
        if mixed(&text.unknown) {
            text = self.interpolated_with(node, &mut Vec::new(), false)?;
        }
        let defaulted =
            !text.unknown.is_empty() && text.unknown.iter().all(|u| u.default.is_some());
        Some(MappedWord {
            chars: text.chars.into_iter().collect(),
            loc: node.loc,
            unresolved: text.unknown.into_iter().map(|u| (u.at, u.name)).collect(),
            defaulted,
        })
    }

    /// A scalar's interpolated text when all of it is known.
    fn text(&self, node: &Node, findings: &mut Vec<Finding>) -> Option<String> {
        let text = self.interpolated(node, findings)?;
        text.unknown
            .is_empty()
            .then(|| text.chars.iter().map(|c| c.0).collect())
    }

    /// A list is an argv as written (each item one word); a string is split as compose splits it.
    fn words(&self, node: &Node, findings: &mut Vec<Finding>) -> Vec<MappedWord> {
        if !matches!(node.value, Value::Str(_)) {
            return placement::items(Some(node))
                .filter_map(|n| self.word(n, findings))
                .collect();
        }
        let Some(text) = self.interpolated(node, findings) else {
            return Vec::new();
        };
        let defaults: Vec<String> = text
            .unknown
            .iter()
            .filter(|u| u.default.is_some())
            .map(|u| u.name.clone())
            .collect();
        let mut words = shellwords::split(self.file, text);
        // As for one word ([`Project::word`]): none of the string's defaults where one word
        // mixes them with unknowns that have none.
        let mixes =
            |w: &MappedWord| !w.defaulted && w.unresolved.iter().any(|(_, n)| defaults.contains(n));
        if words.as_ref().is_ok_and(|ws| ws.iter().any(mixes)) {
            if let Some(text) = self.interpolated_with(node, &mut Vec::new(), false) {
                words = shellwords::split(self.file, text);
            }
        }
        words.unwrap_or_else(|why| {
            findings.push(invalid(node.loc, format!("compose cannot split it: {why}")));
            Vec::new()
        })
    }

    /// Without an `entrypoint`, the image's runs: `vllm/vllm-openai` images start `vllm serve`
    /// (vllm docker/Dockerfile, target `vllm-openai`), and an image named for an engine its
    /// server where `command` is engine options alone ([`crate::extract::images`]).
    fn image_entrypoint(
        &self,
        svc: &Node,
        command: &[MappedWord],
        findings: &mut Vec<Finding>,
    ) -> Vec<MappedWord> {
        let Some(image) = svc.get("image") else {
            return Vec::new();
        };
        let Some(text) = self.word(image, findings) else {
            return Vec::new();
        };
        let name = text.chars.as_str();
        let first = command.first().map(|w| w.chars.as_str());
        let engine = match images::entrypoint(name, first) {
            Some(engine) => engine,
            // An image that names no engine, run with one engine's flags: said at the image.
            None => {
                let words = command.iter().take(images::FLAG_WORDS);
                let args: Vec<&str> = words.map(|w| w.chars.as_str()).collect();
                let Some(read) = images::by_flags(name, &args) else {
                    return Vec::new();
                };
                let written = image.scalar_text().unwrap_or_default();
                findings.push(read.finding(&written, image.loc));
                read.engine
            }
        };
        k8s::synthetic_words(images::server_command(engine), image.loc)
    }

    /// The container's environment: each `env_file` in order, then `environment`, which wins
    /// (docs.docker.com "Environment variables precedence"). When an `env_file` cannot be read
    /// here (it is often kept out of the repository), each variable `argv` uses that nothing else
    /// sets may come from it: its value is unknown, not unset.
    fn environment(
        &self,
        svc: &Node,
        argv: &[MappedWord],
        findings: &mut Vec<Finding>,
    ) -> Vec<(String, MappedWord)> {
        let mut env: Vec<(String, MappedWord)> = Vec::new();
        let mut set = |name: String, value: MappedWord| {
            env.retain(|(n, _)| *n != name);
            env.push((name, value));
        };
        let (vars, unread) = self.env_files(svc, findings);
        for (name, value) in vars {
            set(name, value);
        }
        match svc.get("environment").map(|e| &e.value) {
            Some(Value::Map(entries)) => {
                for (k, v) in entries {
                    let Some(name) = k.scalar_text() else {
                        continue;
                    };
                    let value = match v.value {
                        Value::Null => self.inherited(&name, k.loc),
                        _ => self.word(v, findings),
                    };
                    set(
                        name,
                        value.unwrap_or_else(|| {
                            unknown_value(k.as_str().unwrap_or_default(), k.loc)
                        }),
                    );
                }
            }
            Some(Value::Seq(items)) => {
                for n in items {
                    let Some(w) = self.word(n, findings) else {
                        continue;
                    };
                    let text = w.chars.as_str();
                    let Some((name, _)) = text.split_once('=') else {
                        let value = self.inherited(text, n.loc);
                        let name = text.to_string();
                        set(
                            name.clone(),
                            value.unwrap_or_else(|| unknown_value(&name, n.loc)),
                        );
                        continue;
                    };
                    let skip = name.chars().count() + 1;
                    let unresolved: Vec<(usize, String)> = w
                        .unresolved
                        .iter()
                        .filter(|(i, _)| *i >= skip)
                        .map(|(i, n)| (i - skip, n.clone()))
                        .collect();
                    let value = MappedWord {
                        chars: w.chars.tail(skip),
                        defaulted: w.defaulted && !unresolved.is_empty(),
                        unresolved,
                        loc: w.loc,
                    };
                    set(name.to_string(), value);
                }
            }
            _ => {}
        }
        if let Some(at) = unread {
            for name in shell_variables(argv) {
                if !env.iter().any(|(n, _)| *n == name) {
                    env.push((name.clone(), unknown_value(&name, at)));
                }
            }
        }
        env
    }

    /// `environment: [NAME]` (or `NAME:` with no value) passes the variable compose runs with.
    fn inherited(&self, name: &str, at: Loc) -> Option<MappedWord> {
        let value = self.lookup(name)?;
        Some(MappedWord {
            chars: value.chars().map(|c| (c, at.start, at.end)).collect(),
            loc: at,
            unresolved: Vec::new(),
            defaulted: false,
        })
    }

    /// The variables of the service's `env_file` entries (a path, or `{path, required}`), relative
    /// to the project directory, and where the first one kvlint cannot read is. A file compose
    /// cannot parse is INP001, as compose refuses to start the service.
    fn env_files(
        &self,
        svc: &Node,
        findings: &mut Vec<Finding>,
    ) -> (Vec<(String, MappedWord)>, Option<Loc>) {
        let entries: Vec<&Node> = match svc.get("env_file") {
            Some(n) if matches!(n.value, Value::Seq(_)) => placement::items(Some(n)).collect(),
            Some(n) => vec![n],
            None => Vec::new(),
        };
        let mut out = Vec::new();
        let mut unread = None;
        for entry in entries {
            let path_node = entry.get("path").unwrap_or(entry);
            let required = entry
                .get("required")
                .is_none_or(|r| r.value != Value::Bool(false));
            let Some(path) = self.text(path_node, findings) else {
                continue;
            };
            let full = self.dir.join(&path);
            let lookup = |name: &str| self.lookup(name);
            let text = match dotenv::read(&full) {
                Ok(Some(text)) => text,
                Ok(None) if !required => continue,
                _ => {
                    unread = unread.or(Some(path_node.loc));
                    continue;
                }
            };
            match dotenv::parse(&text, &lookup) {
                Ok(vars) => out.extend(vars.into_iter().map(|(name, value)| {
                    let value = match value {
                        Some(v) => MappedWord {
                            chars: v
                                .chars()
                                .map(|c| (c, entry.loc.start, entry.loc.end))
                                .collect(),
                            loc: entry.loc,
                            unresolved: Vec::new(),
                            defaulted: false,
                        },
                        None => unknown_value(&name, entry.loc),
                    };
                    (name, value)
                })),
                Err(why) => findings.push(invalid(
                    path_node.loc,
                    format!("env file {}: {why}", full.display()),
                )),
            }
        }
        (out, unread)
    }

    /// GPUs reserved for the service: `count` (an int; `all` is unknown here) or the `device_ids` listed.
    fn reserved_gpus(&self, svc: &Node) -> Option<u32> {
        let devices = svc
            .get("deploy")
            .and_then(|d| d.get("resources"))
            .and_then(|r| r.get("reservations"))
            .and_then(|r| r.get("devices"));
        placement::items(devices).find_map(|d| {
            let ids = placement::items(d.get("device_ids")).count();
            let count = d.get("count").and_then(|c| match c.as_str() {
                Some(s) if s.contains('$') => self.text(c, &mut Vec::new())?.trim().parse().ok(),
                _ => placement::count_of(c),
            });
            count.or((ids > 0).then(|| u32::try_from(ids).unwrap_or(u32::MAX)))
        })
    }
}

/// The variables a shell in the container would read from the argv's words: `$NAME`, `${NAME...`.
fn shell_variables(argv: &[MappedWord]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for w in argv {
        let text = w.chars.as_str();
        for (i, _) in text.match_indices('$') {
            let rest = &text[i + 1..];
            let rest = rest.strip_prefix('{').unwrap_or(rest);
            let end = rest
                .find(|c: char| c != '_' && !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            let name = &rest[..end];
            if name.starts_with(|c: char| c == '_' || c.is_ascii_alphabetic())
                && !names.iter().any(|n| n == name)
            {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// A value kvlint cannot know, as interpolation writes one.
fn unknown_value(name: &str, at: Loc) -> MappedWord {
    MappedWord {
        chars: format!("$({name})")
            .chars()
            .map(|c| (c, at.start, at.end))
            .collect(),
        loc: at,
        unresolved: vec![(0, name.to_string())],
        defaulted: false,
    }
}

fn invalid(at: Loc, reason: String) -> Finding {
    Finding::new("INP001", Some(at)).var("reason", reason)
}

/// Some of the unknowns are a caller's default, and some are not.
fn mixed(unknown: &[interpolation::Unknown]) -> bool {
    unknown.iter().any(|u| u.default.is_some()) && unknown.iter().any(|u| u.default.is_none())
}

/// An argv word made only of one caller's default's characters (`${EXTRA_ARGS:---enforce-eager}`
/// or a word of it): the variable may put any words there.
fn wholly_a_default(w: &MappedWord) -> bool {
    let mut chars = w.chars.iter();
    let first = chars.next().map(|(_, start, end)| (start, end));
    w.defaulted
        && matches!(w.unresolved.as_slice(), [(0, _)])
        && chars.all(|(_, start, end)| Some((start, end)) == first)
}

/// [`any_flag`] for the words that are wholly a caller's default (`whole`, by their spans): they
/// are what runs when nobody sets the variable, and whatever it holds otherwise. One finding for
/// each reference, at the first of its words where an option may stand.
fn any_flag_by_default(l: &Launch, whole: &[Loc]) -> Vec<Finding> {
    let mut seen: Vec<Loc> = Vec::new();
    let mut out = Vec::new();
    for (i, a) in l.args.iter().enumerate() {
        let [name] = a.unresolved.as_slice() else {
            continue;
        };
        if !a.defaulted || !whole.contains(&a.loc) || seen.contains(&a.loc) {
            continue;
        }
        if flag_value_or_model(l, i) {
            continue;
        }
        seen.push(a.loc);
        let var = name.split(' ').next().unwrap_or(name);
        out.push(
            Finding::new("INP004", Some(a.loc))
                .var("flag", format!("what `${var}` adds to the command line"))
                .var("vars", name)
                .label("any engine flag may come from here"),
        );
    }
    out
}

/// The argument at `i` is an option's value, or vLLM's model.
fn flag_value_or_model(l: &Launch, i: usize) -> bool {
    let prev = i.checked_sub(1).map(|p| l.args[p].text.as_str());
    let a_value = prev.is_some_and(|p| p.starts_with('-') && !p.contains('='));
    let the_model = i == 0 && l.engine != Engine::Sglang;
    a_value || the_model
}

/// INP004 for each argv word that is wholly an unknown value where an option may stand: it
/// becomes whatever words the variable holds (one, for a list item), and any engine flag may be
/// among them. The value of an option, and vLLM's model, are that value only.
pub(crate) fn any_flag(l: &Launch) -> Vec<Finding> {
    let mut out = Vec::new();
    for (i, a) in l.args.iter().enumerate() {
        let [name] = a.unresolved.as_slice() else {
            continue;
        };
        if a.text != format!("$({name})") {
            continue;
        }
        if flag_value_or_model(l, i) {
            continue;
        }
        out.push(
            Finding::new("INP004", Some(a.loc))
                .var("flag", format!("what `${name}` adds to the command line"))
                .var("vars", name)
                .label("any engine flag may come from here"),
        );
    }
    out
}
