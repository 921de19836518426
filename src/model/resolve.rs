//! Which geometry a launch's model has, tried in the order an operator would expect (DESIGN.md
//! "Provenance and precedence"): `--model-config` and kvlint.toml `[models]`, a local model
//! directory, the Hugging Face cache, the Hub, the embedded catalog. The step that answers is
//! recorded in [`Geometry::model_source`]; when none does, INP002 lists what was tried.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::cache::{is_repo_id, HubCache, Snapshot};
use super::{catalog_lookup, load_config_file, load_model_dir, suggestions, Geometry, Hub};
use super::{ModelError, WeightsSource};
use crate::engine::{EngineArgs, SettingValue};
use crate::finding::Finding;
use crate::launch::{Engine, Launch};

/// Where a launch's geometry came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelSource {
    /// `model-config`, `kvlint.toml`, `local-dir`, `hf-cache`, `hub` or `catalog`.
    pub kind: &'static str,
    /// The file, directory or URL read (the catalog entry's public source for `catalog`).
    pub location: String,
    /// The commit read, when known.
    pub revision: Option<String>,
    /// What the user should know about this choice.
    pub note: Option<String>,
}

/// One `[models]` entry of kvlint.toml: a model as a launch writes it → what to read.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    /// The model path, Hub id or served-model-name as written in launches.
    pub key: String,
    pub target: Target,
    /// `kvlint.toml:LINE`, for the model source.
    pub at: String,
    /// `layout = ...`: the KV layout the user asserts for an architecture kvlint does not model
    /// (INP008), one of [`super::architectures::MODELLED`].
    pub layout: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A Hub id, resolved from the cache, the Hub or the catalog.
    Hub {
        id: String,
        revision: Option<String>,
    },
    /// A config.json or model directory on this machine.
    Config(PathBuf),
}

/// kvlint.toml `[models]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelTable {
    pub entries: Vec<Mapping>,
}

fn same_name(a: &str, b: &str) -> bool {
    let t = |s: &str| s.trim().trim_end_matches('/').to_string();
    let (a, b) = (t(a), t(b));
    !a.is_empty() && a.eq_ignore_ascii_case(&b)
}

impl ModelTable {
    fn find(&self, names: &[&str]) -> Option<&Mapping> {
        self.entries
            .iter()
            .find(|m| names.iter().any(|n| same_name(&m.key, n)))
    }
}

/// Whether the resolver may ask the Hub.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum HubUse {
    /// Not asked (the library's and the webhook's default).
    #[default]
    Off,
    /// Asked after the local cache.
    On,
    /// `--offline` or `HF_HUB_OFFLINE=1`.
    Offline,
}

/// How models are resolved in a run.
#[derive(Debug, Clone, Default)]
pub struct Resolver {
    /// `--model-config PATH`: a config.json or model directory for every launch.
    pub model_config: Option<PathBuf>,
    pub table: ModelTable,
    pub hub: HubUse,
}

/// What a launch asks for.
#[derive(Debug, Default)]
pub struct Wanted<'a> {
    pub model: &'a str,
    /// `--revision`, else `main`.
    pub revision: Option<&'a str>,
    /// `--served-model-name` values.
    pub served: Vec<&'a str>,
}

/// No step knew the model: what was tried, and catalog ids that look close.
#[derive(Debug, Clone)]
pub struct Unresolved {
    pub tried: Vec<String>,
    pub suggestions: Vec<String>,
}

fn source(
    kind: &'static str,
    location: impl Into<String>,
    revision: Option<String>,
) -> ModelSource {
    ModelSource {
        kind,
        location: location.into(),
        revision,
        note: None,
    }
}

/// A config.json file or a model directory; the id is the launch's model when it names one.
pub fn load_model_path(path: &Path, id: Option<&str>) -> Result<Geometry, ModelError> {
    let mut g = if path.is_dir() {
        load_model_dir(path)?
    } else {
        load_config_file(path)?
    };
    if let Some(id) = id {
        g.id = id.to_string();
    }
    Ok(g)
}

impl Resolver {
    /// Runs the steps in order. `Err(Ok(e))`: a file that exists could not be read;
    /// `Err(Err(u))`: no step knew the model.
    pub fn resolve(&self, want: &Wanted) -> Result<Geometry, Result<String, Unresolved>> {
        if let Some(path) = &self.model_config {
            // A launch that names no model takes the config's own path as its id.
            let named = Some(want.model).filter(|m| !m.is_empty());
            let mut g = load_model_path(path, named).map_err(|e| Ok(e.to_string()))?;
            let mut s = source("model-config", path.display().to_string(), None);
            s.note = named.and_then(|m| model_config_mismatch(path, m));
            g.model_source = Some(s);
            return Ok(g);
        }
        let names: Vec<&str> = std::iter::once(want.model)
            .chain(want.served.iter().copied())
            .collect();
        if let Some(m) = self.table.find(&names) {
            return self.mapped(m, want);
        }
        let local = Path::new(want.model);
        if local.join("config.json").is_file() {
            let mut g = load_model_dir(local).map_err(|e| Ok(format!("{} ({e})", want.model)))?;
            g.model_source = Some(source("local-dir", local.display().to_string(), None));
            return Ok(g);
        }
        let mut tried = Vec::new();
        if !is_repo_id(want.model) {
            tried.push(format!(
                "{} has no config.json on this machine (map it in kvlint.toml [models])",
                want.model
            ));
        }
        self.by_id(want.model, want.model, want.revision, &mut tried)
            .map_err(|e| e.map_err(|()| self.unresolved(want.model, tried)))
    }

    fn unresolved(&self, model: &str, tried: Vec<String>) -> Unresolved {
        Unresolved {
            tried,
            suggestions: suggestions(model),
        }
    }

    /// A `[models]` entry: its config path, or its Hub id through the cache, Hub and catalog.
    fn mapped(&self, m: &Mapping, want: &Wanted) -> Result<Geometry, Result<String, Unresolved>> {
        match &m.target {
            Target::Config(path) => {
                let mut g = load_model_path(path, Some(want.model))
                    .map_err(|e| Ok(format!("{} ({}: {e})", want.model, m.at)))?;
                g.model_source = Some(source("kvlint.toml", path.display().to_string(), None));
                Ok(g)
            }
            Target::Hub { id, revision } => {
                let mut tried = vec![format!("{} maps it to {id}", m.at)];
                let rev = revision.as_deref().or(want.revision);
                let mut g = self
                    .by_id(want.model, id, rev, &mut tried)
                    .map_err(|e| e.map_err(|()| self.unresolved(id, tried)))?;
                if let Some(s) = &mut g.model_source {
                    s.note = Some(format!("{} maps {} to {id}", m.at, want.model));
                }
                Ok(g)
            }
        }
    }

    /// Steps 3-5 for a Hub id: the local cache, the Hub, the catalog.
    fn by_id(
        &self,
        shown: &str,
        id: &str,
        revision: Option<&str>,
        tried: &mut Vec<String>,
    ) -> Result<Geometry, Result<String, ()>> {
        let rev = revision.unwrap_or("main");
        if is_repo_id(id) {
            let cache = HubCache::from_env();
            if let Some(cache) = &cache {
                if let Some(s) = cache.snapshot(id, rev) {
                    return from_snapshot(shown, "hf-cache", s.dir.display().to_string(), s);
                }
                tried.push(format!(
                    "no snapshot of {id}@{rev} in the Hugging Face cache {}",
                    cache.dir.display()
                ));
            }
            match (self.hub, &cache) {
                (HubUse::On, Some(cache)) => {
                    let hub = Hub::from_env();
                    match hub.fetch(cache, id, rev) {
                        Ok(s) => {
                            let url = hub.url(id, &s.commit, "config.json");
                            return from_snapshot(shown, "hub", url, s);
                        }
                        Err(e) => tried.push(e),
                    }
                }
                (HubUse::On, None) => {
                    tried.push("the Hub was not asked: no cache directory (set HF_HOME)".into())
                }
                (HubUse::Offline, _) => {
                    tried.push("the Hub was not asked (--offline or HF_HUB_OFFLINE=1)".into())
                }
                (HubUse::Off, _) => tried.push(
                    "the Hub was not asked (off here; the webhook asks it only with --hub)".into(),
                ),
            }
        }
        match catalog_lookup(id) {
            Some(mut g) => {
                let s = g.source.trim_start_matches("catalog: ").to_string();
                g.id = shown.to_string();
                g.model_source = Some(source("catalog", s, None));
                Ok(g)
            }
            None => {
                tried.push(format!("{id} is not in the embedded catalog"));
                Err(Err(()))
            }
        }
    }
}

/// Reads a cache snapshot as a model directory (its safetensors index gives exact weight bytes).
fn from_snapshot(
    shown: &str,
    kind: &'static str,
    location: String,
    s: Snapshot,
) -> Result<Geometry, Result<String, ()>> {
    let mut g = load_model_dir(&s.dir).map_err(|e| Ok(format!("{shown} ({e})")))?;
    g.id = shown.to_string();
    let mut src = source(kind, location, Some(s.commit));
    if g.weight_bytes_source == WeightsSource::ParamCount {
        src.note = Some("no model.safetensors.index.json: weight bytes estimated".into());
    }
    g.model_source = Some(src);
    Ok(g)
}

/// `--model-config` applies to every launch of a run; say so when this launch names a model
/// whose name differs from the config's directory or `_name_or_path`.
fn model_config_mismatch(path: &Path, model: &str) -> Option<String> {
    let tail = |s: &str| {
        let s = s.trim().trim_end_matches('/');
        s.rsplit('/').next().unwrap_or(s).to_ascii_lowercase()
    };
    let dir = if path.is_dir() {
        Some(path)
    } else {
        path.parent()
    };
    let dir_name = dir
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned());
    let config = if path.is_dir() {
        path.join("config.json")
    } else {
        path.to_path_buf()
    };
    let name_or_path = crate::input::read_regular(&config)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("_name_or_path")?.as_str().map(str::to_string));
    let want = tail(model);
    let matches = [dir_name, name_or_path]
        .iter()
        .flatten()
        .any(|n| tail(n) == want);
    (!matches).then(|| {
        format!("--model-config applies to every launch of the run; this launch names {model}")
    })
}

/// The model a launch serves, or findings saying why it is unknown (INP002) or not known before
/// deploy (INP004).
pub fn for_launch(
    launch: &Launch,
    args: &EngineArgs,
    resolver: &Resolver,
    memo: &mut super::Memo,
    findings: &mut Vec<Finding>,
) -> Option<std::sync::Arc<Geometry>> {
    let dest = match launch.engine {
        Engine::Sglang => "model_path",
        Engine::Vllm | Engine::Trtllm => "model",
    };
    let setting = args.get(dest);
    let at = setting.map_or(launch.command, |s| s.value_loc);
    let text = |d: &str| match args.get(d).map(|s| (&s.value, s.usable())) {
        Some((SettingValue::Text(t), true)) => Some(t.as_str()),
        _ => None,
    };
    let served: Vec<&str> = match args.get("served_model_name").map(|s| &s.value) {
        Some(SettingValue::List(items)) => items.iter().map(String::as_str).collect(),
        Some(SettingValue::Text(t)) => vec![t.as_str()],
        _ => Vec::new(),
    };
    let model = match (text(dest), setting) {
        (Some(m), _) => m,
        (None, Some(s)) if !s.unresolved.is_empty() && in_store(&s.value).is_some() => {
            // Whatever the variable holds, kvlint reads no object store: the model is unknown
            // (INP002), and the launch names it as written.
            let model = in_store(&s.value).unwrap_or_default();
            let names = served_as(launch, &served);
            let tried = format!(
                "{model} is in an object store kvlint does not read, whatever {} holds{names}",
                s.unresolved.join(", ")
            );
            findings.push(unknown(at, model, &tried, &[]));
            return None;
        }
        (None, Some(s)) if !s.unresolved.is_empty() => {
            // Same shape as `capacity::unresolved`, which sits above this module.
            findings.push(
                Finding::new("INP004", Some(s.value_loc))
                    .var("flag", format!("--{}", s.dest.replace('_', "-")))
                    .var("vars", s.unresolved.join(", "))
                    .label("value not known before deploy"),
            );
            return None;
        }
        _ if resolver.model_config.is_some() => "",
        _ => {
            findings.push(unknown(at, "(the launch names none)", "", &[]));
            return None;
        }
    };
    let want = Wanted {
        model,
        revision: text("revision"),
        served,
    };
    match memo.resolve(resolver, &want) {
        Ok(g) => modelled(g, resolver, &want, at, findings),
        Err(Ok(e)) => {
            findings.push(unknown(at, &e, "a file exists but cannot be read", &[]));
            None
        }
        Err(Err(u)) => {
            findings.push(unknown(at, model, &u.tried.join("; "), &u.suggestions));
            None
        }
    }
}

/// The geometry when its architecture's layout is modelled or the user asserts it in
/// kvlint.toml; otherwise INP008, and no plan (never plain attention).
fn modelled(
    g: std::sync::Arc<Geometry>,
    resolver: &Resolver,
    want: &Wanted,
    at: crate::source::Loc,
    findings: &mut Vec<Finding>,
) -> Option<std::sync::Arc<Geometry>> {
    let Err(u) = super::architectures::check(&g) else {
        return Some(g);
    };
    let mut names = vec![want.model];
    names.extend(&want.served);
    let asserted = resolver
        .table
        .find(&names)
        .and_then(|m| Some((m.layout.as_ref()?, &m.at)));
    let Some((layout, line)) = asserted else {
        findings.push(
            Finding::new("INP008", Some(at))
                .var(
                    "model",
                    if want.model.is_empty() {
                        &g.id
                    } else {
                        want.model
                    },
                )
                .var("architecture", &u.architecture)
                .var("why", u.why)
                .var("need", u.need)
                .label("KV layout not modelled"),
        );
        return None;
    };
    let mut g = (*g).clone();
    if let Some(src) = g.model_source.as_mut() {
        let asserted = format!(
            "{} asserted as layout {layout} in {line} ({})",
            u.architecture, u.why
        );
        src.note = Some(match src.note.take() {
            Some(note) => format!("{note}; {asserted}"),
            None => asserted,
        });
    }
    Some(std::sync::Arc::new(g))
}

/// A model written as a URI of an object store (`s3://$BUCKET/models/x`: Ray Serve LLM's
/// `model_source`, a download the serving side does), which kvlint never reads.
fn in_store(value: &SettingValue) -> Option<&str> {
    let SettingValue::Text(t) = value else {
        return None;
    };
    crate::deployment::OBJECT_STORES
        .iter()
        .any(|scheme| t.starts_with(scheme))
        .then_some(t.as_str())
}

/// `; the launch serves it as NAME` for its `--served-model-name` values, else `; kvlint lists
/// the launch as NAME` (its object's name: Ray Serve LLM's `model_id` in a serve config), to map
/// in kvlint.toml `[models]`.
fn served_as(launch: &Launch, served: &[&str]) -> String {
    let object = launch.object.as_ref().map(|o| o.name.as_str());
    match (served, object) {
        ([], Some(name)) if !name.is_empty() => format!("; kvlint lists the launch as {name}"),
        ([], _) => String::new(),
        (names, _) => format!("; the launch serves it as {}", names.join(", ")),
    }
}

fn unknown(at: crate::source::Loc, model: &str, tried: &str, close: &[String]) -> Finding {
    let suggest = match close {
        [] => String::new(),
        [one] => format!("did you mean {one}? "),
        many => format!("did you mean one of {}? ", many.join(", ")),
    };
    let tried = if tried.is_empty() {
        String::new()
    } else {
        format!(" (tried: {tried})")
    };
    Finding::new("INP002", Some(at))
        .var("model", model)
        .var("tried", tried)
        .var("suggest", suggest)
}
