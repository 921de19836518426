//! `kvlint.toml`: per-repository settings, found upward from the inputs or given with `--config`.
//!
//! ```toml
//! gpu = "h200x8"              # default for --gpu
//! engine-version = "0.5.20"   # default for --engine-version
//! fail-on = "warn"            # default for --fail-on
//! exclude = ["vendor/**"]     # globs, relative to this file, skipped when walking directories
//! select = ["ALL"]            # rules reported, by id, name, category or id prefix (ruff's)
//! extend-select = []          # added to `select`
//! ignore = ["KV004"]          # never reported
//!
//! [rules]
//! pool-headroom-low = "allow" # a level by rule id or name
//! KV003 = { level = "deny", min_ratio = 3.0 }  # a level and parameters
//!
//! [models]                    # a model as launches write it → what to read
//! "/models/Qwen3-32B/" = "Qwen/Qwen3-32B"
//! "/mnt/models" = { config = "configs/llama70b.json" }
//! "chat" = { id = "meta-llama/Llama-3.1-8B-Instruct", revision = "main" }
//!
//! [gpus.H20]                  # adds a GPU, or overrides one of the catalog's
//! memory-bytes = 102_005_473_280          # total as CUDA reports it
//! aliases = ["h20-96gb"]
//! labels = ["NVIDIA-H20"]                 # nvidia.com/gpu.product node labels
//! ```
//!
//! Every key is checked: an unknown key, rule or parameter is an error pointing at it.

use crate::gpu::catalog::{self as gpu_catalog, CatalogEntry, LocalGpu};
use crate::model::resolve::{Mapping, ModelTable, Target};
use crate::rules::select::Selection;
use crate::rules::{self, Level, Rule, RuleSettings};
use crate::source::SourceFile;
use globset::{Glob, GlobSet, GlobSetBuilder};
use schemars::JsonSchema;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// The name kvlint looks for in each directory from the inputs upward.
pub const FILE_NAME: &str = "kvlint.toml";

/// The lowest level that makes a run fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    Warn,
    Deny,
}

impl FailOn {
    pub fn level(self) -> Level {
        match self {
            FailOn::Warn => Level::Warn,
            FailOn::Deny => Level::Deny,
        }
    }
}

/// The file as written.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
#[schemars(
    title = "kvlint.toml",
    description = "kvlint configuration (https://github.com/kvlint/kvlint)"
)]
pub struct File {
    /// GPU the launches run on when `--gpu` is not given: a catalog name or alias, optionally with a
    /// count (`h200x8`).
    #[schemars(with = "Option<String>")]
    pub gpu: Option<Spanned<String>>,
    /// Engine version when `--engine-version` is not given: `0.5.20`, or per engine
    /// `sglang=0.5.20,vllm=0.19.0`.
    #[schemars(with = "Option<String>")]
    pub engine_version: Option<Spanned<String>>,
    /// Lowest level that fails the run when `--fail-on` is not given.
    pub fail_on: Option<FailOn>,
    /// Globs, relative to this file's directory, of paths skipped when walking directories.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub exclude: Vec<Spanned<String>>,
    /// Rules reported, by id (`KV001`), name, category (`correctness`), id prefix (`KV`) or `ALL`;
    /// the others are `allow`. `--select` replaces it.
    #[schemars(with = "Option<Vec<String>>")]
    pub select: Option<Vec<Spanned<String>>>,
    /// Rules added to `select`; `--extend-select` adds more.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub extend_select: Vec<Spanned<String>>,
    /// Rules never reported (level `allow`), whatever selects them; `--ignore` adds more.
    #[serde(default)]
    #[schemars(with = "Vec<String>")]
    pub ignore: Vec<Spanned<String>>,
    /// Rule levels and parameters, by rule id (`KV003`) or name (`pool-headroom-low`).
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, RuleEntrySchema>")]
    pub rules: BTreeMap<Spanned<String>, Spanned<RuleEntry>>,
    /// Models as launches write them (a path, a Hub id, a served-model-name), mapped to a Hub id
    /// or to a config.json / model directory relative to this file.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, ModelEntry>")]
    pub models: BTreeMap<Spanned<String>, Spanned<ModelEntry>>,
    /// GPUs added to the catalog, or catalog GPUs overridden, by name.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, GpuEntry>")]
    pub gpus: BTreeMap<Spanned<String>, Spanned<GpuEntry>>,
    /// Settings of `kvlint webhook`.
    #[serde(default)]
    pub webhook: WebhookTable,
    /// The site's own platforms (an in-house CRD, a chart), in the schema of kvlint's
    /// `platforms/*.toml`; one named like a built-in platform replaces it.
    #[serde(default)]
    #[schemars(with = "Vec<serde_json::Value>")]
    pub platform: Vec<Spanned<toml::Table>>,
}

/// `[webhook]`: settings only the admission webhook reads.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WebhookTable {
    /// User names trusted as pod controllers besides the built-in ones (the
    /// kube-controller-manager's service accounts and the LeaderWorkerSet controller), e.g. an
    /// operator's `system:serviceaccount:NAMESPACE:NAME`: a deny on an object they create and a
    /// controller of theirs owns is only warned about.
    #[serde(default)]
    pub trusted_controllers: Vec<String>,
}

/// One `[models]` entry: a Hub id, or a table.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ModelEntry {
    /// A Hub id (`Qwen/Qwen3-32B`).
    Id(String),
    Table(ModelTableEntry),
}

/// A `[models]` table: `config` (a config.json or model directory), or `id` and `revision`;
/// `layout` asserts the KV layout of an architecture kvlint does not model (INP008).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelTableEntry {
    pub config: Option<String>,
    pub id: Option<String>,
    pub revision: Option<String>,
    pub layout: Option<String>,
}

/// A `[gpus]` entry. Fields left out of an override keep the catalog's values.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct GpuEntry {
    /// Total memory in bytes as CUDA reports it (`cudaMemGetInfo`, `torch.cuda.mem_get_info`).
    pub memory_bytes: Option<u64>,
    /// Total as nvidia-smi prints it, MiB (default: `memory-bytes` rounded up to MiB).
    pub memory_mib: Option<u64>,
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Node label values (`nvidia.com/gpu.product`) and NVML names that mean this GPU.
    #[serde(default)]
    pub labels: Vec<String>,
    /// `[major, minor]`, e.g. `[9, 0]` for Hopper.
    pub compute_capability: Option<[u32; 2]>,
    /// Peak memory bandwidth, GB/s.
    pub bandwidth_gbs: Option<f64>,
    /// Where the figures come from.
    pub source: Option<String>,
}

/// One `[rules]` entry: a level, or a table with an optional level and parameters.
#[derive(Debug)]
pub enum RuleEntry {
    Level(String),
    Table(Vec<(Spanned<String>, Spanned<toml::Value>)>),
}

// A hand-written visitor keeps the spans of table keys, which `#[serde(untagged)]` would lose.
impl<'de> Deserialize<'de> for RuleEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RuleEntry;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a level (\"allow\", \"warn\", \"deny\") or a table of level and parameters",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RuleEntry, E> {
                Ok(RuleEntry::Level(v.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RuleEntry, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<String>>()? {
                    entries.push((key, map.next_value::<Spanned<toml::Value>>()?));
                }
                Ok(RuleEntry::Table(entries))
            }
        }
        d.deserialize_any(V)
    }
}

/// Schema-only shape of a `[rules]` entry (the file is read through [`RuleEntry`]).
#[derive(JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // read by the schema generator only
enum RuleEntrySchema {
    Level(LevelSchema),
    Table(RuleTableSchema),
}

/// Schema-only: a rule level.
#[derive(JsonSchema)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)] // read by the schema generator only
enum LevelSchema {
    Allow,
    Warn,
    Deny,
}

/// Schema-only: a rule's level and numeric parameters (e.g. `min_ratio`).
#[derive(JsonSchema)]
#[allow(dead_code)] // read by the schema generator only
struct RuleTableSchema {
    level: Option<LevelSchema>,
    #[serde(flatten)]
    params: BTreeMap<String, f64>,
}

/// A loaded, validated configuration.
#[derive(Debug, Default)]
pub struct Config {
    /// The file it came from (`None`: no file, the defaults).
    pub path: Option<PathBuf>,
    pub gpu: Option<String>,
    pub engine_version: Option<String>,
    pub fail_on: Option<FailOn>,
    /// Levels and parameters of `[rules]`, before any selection.
    pub rules: RuleSettings,
    /// `[models]`, config paths made relative to the file's directory.
    pub models: ModelTable,
    /// `[gpus]`, as catalog entries.
    pub gpus: Vec<CatalogEntry>,
    /// `select`, `extend-select` and `ignore`.
    pub selection: Selection,
    /// `[webhook] trusted-controllers`.
    pub trusted_controllers: Vec<String>,
    /// `[[platform]]`, validated.
    pub platforms: Vec<crate::platform::Platform>,
    exclude: Option<(PathBuf, GlobSet)>,
}

/// A configuration problem, at a line and column of the file when known.
#[derive(Debug, thiserror::Error)]
#[error("{path}{at}: {message}")]
pub struct ConfigError {
    pub path: String,
    /// `:line:col`, or empty.
    pub at: String,
    pub message: String,
}

impl Config {
    /// The rule settings of a run: `[rules]`, then the selection of this file with the command
    /// line's on top (`--select` replaces `select`; `--extend-select` and `--ignore` add).
    pub fn rule_settings(&self, cli: &Selection) -> RuleSettings {
        let file = &self.selection;
        let merged = Selection {
            select: cli.select.clone().or_else(|| file.select.clone()),
            extend_select: [file.extend_select.as_slice(), &cli.extend_select].concat(),
            ignore: [file.ignore.as_slice(), &cli.ignore].concat(),
        };
        let mut settings = self.rules.clone();
        merged.apply(&mut settings);
        settings
    }

    /// Whether a path found while walking a directory is excluded.
    pub fn excluded(&self, path: &Path) -> bool {
        let Some((dir, set)) = &self.exclude else {
            return false;
        };
        let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        let rel = abs.strip_prefix(dir).unwrap_or(path);
        set.is_match(rel) || set.is_match(path)
    }
}

/// The nearest `kvlint.toml` in the directory of `start` or above it.
pub fn discover(start: &Path) -> Option<PathBuf> {
    let abs = std::fs::canonicalize(start).ok()?;
    let dir = if abs.is_dir() {
        abs.as_path()
    } else {
        abs.parent()?
    };
    dir.ancestors()
        .map(|d| d.join(FILE_NAME))
        .find(|p| p.is_file())
}

/// Reads and validates a configuration file.
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let name = path.display().to_string();
    let text = crate::input::read_regular(path).map_err(|e| ConfigError {
        path: name.clone(),
        at: String::new(),
        message: e.reason(),
    })?;
    let dir = path
        .parent()
        .map(|d| std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf()));
    parse(&name, &text, dir.as_deref())
}

/// Parses configuration text; `dir` is where exclude globs are rooted.
pub fn parse(name: &str, text: &str, dir: Option<&Path>) -> Result<Config, ConfigError> {
    let src = SourceFile::new(name, text);
    let err = |span: Option<Range<usize>>, message: String| {
        let at = span.map_or(String::new(), |s| {
            let (l, c) = src.line_col(s.start);
            format!(":{l}:{c}")
        });
        ConfigError {
            path: name.to_string(),
            at,
            message,
        }
    };
    let file: File =
        toml::from_str(text).map_err(|e| err(e.span(), e.message().trim().to_string()))?;
    let mut rules = RuleSettings::default();
    for (key, entry) in &file.rules {
        let rule = rules::find(key.get_ref()).ok_or_else(|| {
            err(
                Some(key.span()),
                format!(
                    "unknown rule `{}` (`kvlint rules` lists them)",
                    key.get_ref()
                ),
            )
        })?;
        match entry.get_ref() {
            RuleEntry::Level(l) => rules.set_level(
                &rule.id,
                level(l).ok_or_else(|| err(Some(entry.span()), bad_level(l)))?,
            ),
            RuleEntry::Table(items) => {
                for (k, v) in items {
                    apply_item(rule, k, v, &mut rules)
                        .map_err(|(span, msg)| err(Some(span), msg))?;
                }
            }
        }
    }
    let selection = selection(&file).map_err(|(span, msg)| err(Some(span), msg))?;
    let exclude = match dir {
        Some(d) if !file.exclude.is_empty() => {
            let mut b = GlobSetBuilder::new();
            for g in &file.exclude {
                b.add(
                    Glob::new(g.get_ref())
                        .map_err(|e| err(Some(g.span()), format!("exclude: {e}")))?,
                );
            }
            Some((
                d.to_path_buf(),
                b.build().map_err(|e| err(None, format!("exclude: {e}")))?,
            ))
        }
        _ => None,
    };
    let line = |span: Range<usize>| format!("{name}:{}", src.line_col(span.start).0);
    let models = ModelTable {
        entries: file
            .models
            .iter()
            .map(|(k, v)| {
                let target = model_target(v.get_ref(), dir).ok_or_else(|| {
                    err(
                        Some(v.span()),
                        "a [models] entry needs a Hub id, `id = ...` or `config = ...` (not both)"
                            .into(),
                    )
                })?;
                Ok(Mapping {
                    key: k.get_ref().clone(),
                    target,
                    at: line(k.span()),
                    layout: asserted_layout(v.get_ref()).map_err(|m| err(Some(v.span()), m))?,
                })
            })
            .collect::<Result<_, ConfigError>>()?,
    };
    let gpus = file
        .gpus
        .iter()
        .map(|(k, v)| {
            let g = v.get_ref();
            let local = LocalGpu {
                name: k.get_ref().clone(),
                memory_bytes: g.memory_bytes,
                memory_mib: g.memory_mib,
                aliases: g.aliases.clone(),
                labels: g.labels.clone(),
                compute_capability: g.compute_capability,
                bandwidth_gbs: g.bandwidth_gbs,
                source: g.source.clone().unwrap_or_else(|| line(k.span())),
            };
            gpu_catalog::local_entry(local).map_err(|m| err(Some(k.span()), m))
        })
        .collect::<Result<Vec<_>, ConfigError>>()?;
    let platforms = file
        .platform
        .iter()
        .map(|p| {
            let platform = p
                .get_ref()
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| {
                    err(
                        Some(p.span()),
                        format!("[[platform]]: {}", e.message().trim()),
                    )
                })?;
            crate::platform::check(&platform)
                .map_err(|m| err(Some(p.span()), format!("[[platform]]: {m}")))?;
            Ok(platform)
        })
        .collect::<Result<Vec<_>, ConfigError>>()?;
    Ok(Config {
        path: Some(PathBuf::from(name)),
        models,
        gpus,
        gpu: file.gpu.map(Spanned::into_inner),
        engine_version: file.engine_version.map(Spanned::into_inner),
        fail_on: file.fail_on,
        rules,
        selection,
        trusted_controllers: file.webhook.trusted_controllers,
        platforms,
        exclude,
    })
}

/// `layout = ...` of a `[models]` table: one of the layouts kvlint models.
fn asserted_layout(e: &ModelEntry) -> Result<Option<String>, String> {
    let ModelEntry::Table(ModelTableEntry {
        layout: Some(layout),
        ..
    }) = e
    else {
        return Ok(None);
    };
    let modelled = crate::model::architectures::MODELLED;
    if modelled.contains(&layout.as_str()) {
        Ok(Some(layout.clone()))
    } else {
        Err(format!(
            "layout {layout:?} is not one kvlint models; use one of {}",
            modelled.join(", ")
        ))
    }
}

/// What a `[models]` entry points at; config paths are relative to the file's directory.
fn model_target(e: &ModelEntry, dir: Option<&Path>) -> Option<Target> {
    let hub = |id: &str, revision: Option<&String>| Target::Hub {
        id: id.to_string(),
        revision: revision.cloned(),
    };
    match e {
        ModelEntry::Id(id) => Some(hub(id, None)),
        ModelEntry::Table(t) => match (&t.config, &t.id) {
            (Some(c), None) if t.revision.is_none() => {
                let path = Path::new(c);
                Some(Target::Config(match dir {
                    Some(d) if path.is_relative() => d.join(path),
                    _ => path.to_path_buf(),
                }))
            }
            (None, Some(id)) => Some(hub(id, t.revision.as_ref())),
            _ => None,
        },
    }
}

/// `select`, `extend-select` and `ignore`, each selector checked where it is written.
fn selection(file: &File) -> Result<Selection, (Range<usize>, String)> {
    let strings = |v: &[Spanned<String>]| -> Result<Vec<String>, (Range<usize>, String)> {
        v.iter()
            .map(|s| {
                let one = Selection {
                    ignore: vec![s.get_ref().clone()],
                    ..Selection::default()
                };
                one.validate().map_err(|e| (s.span(), e.to_string()))?;
                Ok(s.get_ref().clone())
            })
            .collect()
    };
    Ok(Selection {
        select: file.select.as_deref().map(strings).transpose()?,
        extend_select: strings(&file.extend_select)?,
        ignore: strings(&file.ignore)?,
    })
}

/// One `level = ...` or parameter of a rule table.
fn apply_item(
    rule: &Rule,
    key: &Spanned<String>,
    value: &Spanned<toml::Value>,
    out: &mut RuleSettings,
) -> Result<(), (Range<usize>, String)> {
    let k = key.get_ref();
    if k == "level" {
        let l = value.get_ref().as_str().and_then(level);
        let l = l.ok_or_else(|| (value.span(), bad_level(&value.get_ref().to_string())))?;
        out.set_level(&rule.id, l);
        return Ok(());
    }
    if !rule.params.contains_key(k) {
        let known: Vec<&str> = rule.params.keys().map(String::as_str).collect();
        let has = if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        };
        return Err((
            key.span(),
            format!("{} has no parameter `{k}` (its parameters: {has})", rule.id),
        ));
    }
    let n = match value.get_ref() {
        toml::Value::Float(f) => *f,
        toml::Value::Integer(i) => *i as f64,
        other => {
            return Err((
                value.span(),
                format!("{}.{k} must be a number, not {other}", rule.id),
            ))
        }
    };
    out.set_param(&rule.id, k, n);
    Ok(())
}

fn level(s: &str) -> Option<Level> {
    match s {
        "allow" => Some(Level::Allow),
        "warn" => Some(Level::Warn),
        "deny" => Some(Level::Deny),
        _ => None,
    }
}

fn bad_level(s: &str) -> String {
    format!("unknown level {s:?}: expected \"allow\", \"warn\" or \"deny\"")
}

/// The JSON schema of `kvlint.toml`, with the rule ids and names it accepts.
pub fn schema() -> serde_json::Value {
    let mut schema = serde_json::to_value(schemars::schema_for!(File)).unwrap_or_default();
    let keys: Vec<String> = rules::all()
        .iter()
        .flat_map(|r| [r.id.clone(), r.name.clone()])
        .collect();
    if let Some(rules) = schema.pointer_mut("/properties/rules") {
        rules["propertyNames"] = serde_json::json!({ "enum": keys });
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse("kvlint.toml", text, None).unwrap_err().to_string()
    }

    #[test]
    fn the_webhook_table_names_trusted_controllers() {
        let c = parse(
            "kvlint.toml",
            "[webhook]\ntrusted-controllers = [\"system:serviceaccount:kserve:kserve-controller-manager\"]\n",
            None,
        )
        .unwrap();
        assert_eq!(
            c.trusted_controllers,
            ["system:serviceaccount:kserve:kserve-controller-manager"]
        );
        assert!(err("[webhook]\ntrusted = []\n").contains("unknown field `trusted`"));
    }

    #[test]
    fn levels_by_id_or_name_and_parameters() {
        let c = parse(
            "kvlint.toml",
            "fail-on = \"warn\"\ngpu = \"h200x8\"\n[rules]\npool-below-context = \"warn\"\nKV003 = { level = \"deny\", min_ratio = 3 }\n",
            None,
        )
        .unwrap();
        let kv001 = rules::find("KV001").unwrap();
        let kv003 = rules::find("KV003").unwrap();
        assert_eq!(c.rules.level(kv001), Level::Warn);
        assert_eq!(c.rules.level(kv003), Level::Deny);
        assert_eq!(c.rules.param(kv003, "min_ratio"), Some(3.0));
        assert_eq!(
            c.rules.param(kv001, "min_ratio"),
            Some(1.0),
            "falls back to the rule file"
        );
        assert_eq!(
            (c.fail_on, c.gpu.as_deref()),
            (Some(FailOn::Warn), Some("h200x8"))
        );
    }

    #[test]
    fn unknown_keys_rules_and_parameters_point_at_the_key() {
        assert!(err("gpu = \"h200\"\nfail_on = \"warn\"\n")
            .starts_with("kvlint.toml:2:1: unknown field `fail_on`"));
        assert!(
            err("[rules]\nKV999 = \"deny\"\n").starts_with("kvlint.toml:2:1: unknown rule `KV999`")
        );
        assert!(err("[rules.KV003]\nmin_ratio = 3.0\nratio = 2\n")
            .starts_with("kvlint.toml:3:1: KV003 has no parameter `ratio`"));
        assert!(err("[rules]\nKV003 = \"loud\"\n").starts_with("kvlint.toml:2:9: unknown level"));
        assert!(err("[rules]\nKV003 = { min_ratio = \"x\" }\n").contains("must be a number"));
    }

    #[test]
    fn selection_from_the_file_and_the_command_line() {
        let c = parse(
            "kvlint.toml",
            "select = [\"KV\", \"PD\"]\nignore = [\"KV003\"]\n",
            None,
        )
        .unwrap();
        let at = |s: &RuleSettings, id: &str| s.level(rules::find(id).unwrap());
        let file_only = c.rule_settings(&Selection::default());
        assert_eq!(at(&file_only, "KV001"), Level::Deny);
        assert_eq!(at(&file_only, "KV003"), Level::Allow);
        assert_eq!(at(&file_only, "CFG001"), Level::Allow);
        let cli = Selection {
            select: Some(vec!["CFG".into()]),
            ignore: vec!["PD001".into()],
            ..Selection::default()
        };
        let both = c.rule_settings(&cli);
        assert_eq!(at(&both, "CFG001"), rules::find("CFG001").unwrap().level);
        assert_eq!(at(&both, "KV001"), Level::Allow, "--select replaces select");
        assert!(err("select = [\"KV\", \"pool-below-contxt\"]\n").starts_with(
            "kvlint.toml:1:17: unknown rule selector `pool-below-contxt` (did you mean `pool-below-context`?)"
        ));
    }

    #[test]
    fn excludes_match_relative_to_the_file() {
        let dir = std::env::temp_dir();
        let c = parse("kvlint.toml", "exclude = [\"vendor/**\"]\n", Some(&dir)).unwrap();
        assert!(c.excluded(&dir.join("vendor/x/run.sh")));
        assert!(!c.excluded(&dir.join("deploy/run.sh")));
    }
}
