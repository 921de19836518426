//! JSON output: the versioned `check` document and the `capacity` objects (DESIGN.md contract).

use super::{pretty, Rendered};
use crate::deployment;
use crate::engine::{trtllm, EngineArgs, SettingValue};
use crate::gpu::GpuSource;
use crate::launch::{Engine, ObjectRef};
use crate::model::resolve::ModelSource;
use crate::outcome::LaunchOutcome;
use crate::pipeline::Outcome;
use crate::source::Sources;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{json, Map, Value};
use std::io::{BufWriter, Write};

pub const SCHEMA_VERSION: u32 = 1;

/// Keys every launch object carries, `null` when they could not be determined.
const PLAN_KEYS: &[&str] = &[
    "engine",
    "engine_version",
    "role",
    "model",
    "gpu",
    "gpu_count",
    "tp",
    "pp",
    "dp",
    "context_length",
    "model_max_context",
    "kv_cache_dtype",
    "page_size",
    "kv_bytes_per_token",
    "pool_tokens",
    "pool_tokens_low",
    "pool_tokens_high",
    "usable_tokens",
    "usable_tokens_low",
    "usable_tokens_high",
    "budget_bytes",
    "weights_bytes",
    "memory_fraction",
    "needed_fraction",
    "max_context_fit",
    "assumptions",
];

/// The object `capacity --format json` prints for a launch. Without a plan it still carries
/// every setting the launch writes; `null` only for what is really unknown.
pub fn launch_object(lo: &LaunchOutcome, sources: &Sources) -> Map<String, Value> {
    match serde_json::to_value(LaunchView::new(lo, sources)) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// [`launch_object`] as it is written: the plan's fields (or, without one, every key of
/// [`PLAN_KEYS`] with what the launch writes), its model source and GPU source. Serialized in
/// place, so that a large render builds no JSON tree per launch.
#[derive(Serialize)]
struct LaunchView<'a> {
    #[serde(flatten)]
    head: Head<'a>,
    model_source: Option<&'a ModelSource>,
    gpu_source: GpuSourceView<'a>,
}

impl<'a> LaunchView<'a> {
    fn new(lo: &'a LaunchOutcome, sources: &'a Sources) -> Self {
        LaunchView {
            head: Head(lo),
            model_source: lo.model.as_ref().and_then(|m| m.model_source.as_ref()),
            gpu_source: GpuSourceView { lo, sources },
        }
    }
}

/// The plan's own fields, else [`PLAN_KEYS`] filled from the launch's settings.
struct Head<'a>(&'a LaunchOutcome);

impl Serialize for Head<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(plan) = &self.0.plan {
            return plan.serialize(s);
        }
        let given = parsed(self.0);
        let mut map = s.serialize_map(Some(PLAN_KEYS.len()))?;
        for key in PLAN_KEYS {
            let value = given.iter().find(|(k, _)| k == key).map(|(_, v)| v);
            map.serialize_entry(key, &value)?;
        }
        map.end()
    }
}

/// The settings of a launch that has no plan, as written (engine defaults for TP, PP and DP
/// that the launch does not write).
fn parsed(lo: &LaunchOutcome) -> Vec<(&'static str, Value)> {
    let a = &lo.args;
    let dests: [(&str, [&str; 3]); 7] = [
        (
            "tp",
            ["tp_size", "tensor_parallel_size", "tensor_parallel_size"],
        ),
        (
            "pp",
            [
                "pp_size",
                "pipeline_parallel_size",
                "pipeline_parallel_size",
            ],
        ),
        ("dp", ["dp_size", "data_parallel_size", ""]),
        (
            "context_length",
            ["context_length", "max_model_len", "max_seq_len"],
        ),
        (
            "memory_fraction",
            [
                "mem_fraction_static",
                "gpu_memory_utilization",
                trtllm::FRACTION,
            ],
        ),
        (
            "kv_cache_dtype",
            ["kv_cache_dtype", "kv_cache_dtype", "kv_cache_config.dtype"],
        ),
        (
            "page_size",
            [
                "page_size",
                "block_size",
                "kv_cache_config.tokens_per_block",
            ],
        ),
    ];
    let column = match a.engine {
        Engine::Sglang => 0,
        Engine::Vllm => 1,
        Engine::Trtllm => 2,
    };
    let mut out: Vec<(&'static str, Value)> = dests
        .iter()
        .map(|(key, d)| {
            // The engine default only where the launch does not write the setting: a `$TP`
            // nobody resolved is unknown, not 1.
            let absent = a.get(d[column]).is_none();
            let default = (absent && matches!(*key, "tp" | "pp" | "dp")).then(|| json!(1));
            (
                *key,
                written(a, d[column]).or(default).unwrap_or(Value::Null),
            )
        })
        .collect();
    let model = lo.model.as_ref().map(|m| m.id.clone()).or_else(|| {
        let dest = deployment::model_dest(a.engine);
        // A model in an object store is listed as written: unknown (INP002) whatever its
        // variables hold.
        let known = a.get(dest).is_some_and(|s| {
            s.usable()
                || deployment::model_text(a)
                    .is_some_and(|m| deployment::OBJECT_STORES.iter().any(|p| m.starts_with(p)))
        });
        known
            .then(|| deployment::model_text(a))
            .flatten()
            .map(str::to_string)
    });
    let gpu = lo.gpu.as_ref().map(|g| g.name.clone()).or_else(|| {
        let (name, _) = lo.launch.placement.gpu.as_ref()?;
        Some(name.clone())
    });
    let count = lo
        .launch
        .placement
        .gpus_per_pod
        .map(|g| g * lo.launch.placement.pods.unwrap_or(1));
    out.extend([
        ("engine", json!(lo.launch.engine)),
        ("engine_version", json!(a.version.to_string())),
        ("role", json!(deployment::role_of(&lo.launch, a).name())),
        ("model", json!(model)),
        ("gpu", json!(gpu)),
        ("gpu_count", json!(count)),
    ]);
    out
}

/// A setting's value as the engine parsed it; `None` when absent or left in a variable.
fn written(a: &EngineArgs, dest: &str) -> Option<Value> {
    let s = a.get(dest).filter(|s| s.usable())?;
    Some(match &s.value {
        SettingValue::Flag(b) => json!(b),
        SettingValue::Int(i) => json!(i),
        SettingValue::Float(f) => json!(f),
        SettingValue::Auto => json!("auto"),
        SettingValue::Text(t) => json!(t),
        SettingValue::List(l) => json!(l),
    })
}

/// `{"kind": "input", "file", "line", "column"}` for the input's own GPU; `{"kind": "nvml"}`,
/// `"flag"`, `"env"`, `"config"` or `"webhook"` for a fallback; `null` when no GPU is known.
struct GpuSourceView<'a> {
    lo: &'a LaunchOutcome,
    sources: &'a Sources,
}

impl Serialize for GpuSourceView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let lo = self.lo;
        // A GPU the input names but the catalog lacks still came from the input.
        let named = lo
            .launch
            .placement
            .gpu
            .as_ref()
            .map(|(_, l)| GpuSource::Input(*l));
        let Some(src) = lo.gpu_source.or(named) else {
            return s.serialize_none();
        };
        let mut map = s.serialize_map(None)?;
        map.serialize_entry("kind", src.kind())?;
        if let Some(loc) = src.loc() {
            let file = self.sources.get(loc.file);
            let (line, column) = file.line_col(loc.start);
            map.serialize_entry("file", &file.name)?;
            map.serialize_entry("line", &line)?;
            map.serialize_entry("column", &column)?;
        }
        map.end()
    }
}

/// A `check` launch entry: the capacity object plus where the launch was found and its verdict.
#[derive(Serialize)]
struct CheckLaunch<'a> {
    #[serde(flatten)]
    launch: LaunchView<'a>,
    file: &'a str,
    line: usize,
    object: &'a Option<ObjectRef>,
    verdict: &'a str,
}

impl<'a> CheckLaunch<'a> {
    fn new(lo: &'a LaunchOutcome, verdict: &'a str, sources: &'a Sources) -> Self {
        CheckLaunch {
            launch: LaunchView::new(lo, sources),
            file: &sources.get(lo.file).name,
            line: sources.line(lo.launch.command),
            object: &lo.launch.object,
            verdict,
        }
    }
}

/// The whole `check --format json` document.
pub fn check(outcome: &Outcome, findings: &[Rendered]) -> Value {
    serde_json::to_value(Check::new(outcome, findings)).unwrap_or(Value::Null)
}

/// [`check`] as the text `--format json` prints (pretty, one newline at the end).
pub fn check_text(outcome: &Outcome, findings: &[Rendered]) -> String {
    let mut out = Vec::new();
    // Writing to a Vec fails only if a value does not serialize; every value here is JSON.
    let _ = write_check(&mut out, outcome, findings, 1);
    String::from_utf8(out).unwrap_or_default()
}

/// [`check_text`] written straight to `w`, one piece at a time: a large render never holds
/// every launch's object, nor the whole text, at once. The launches, findings and deployments are
/// serialized in chunks on up to `jobs` threads and written in order: the text does not depend on
/// `jobs`. The serializer's many small writes go to a buffer here, inlined, not through `w`'s
/// (possibly dynamic) `write` one by one.
pub fn write_check<W: Write>(
    w: W,
    outcome: &Outcome,
    findings: &[Rendered],
    jobs: usize,
) -> std::io::Result<()> {
    let mut w = BufWriter::with_capacity(1 << 16, w);
    let c = Check::new(outcome, findings);
    let launches: Vec<(&LaunchOutcome, &str)> = outcome
        .launches
        .iter()
        .zip(c.launches.verdicts.iter().copied())
        .collect();
    let sources = &outcome.sources;
    // The fields of `Check`, in its order (a test compares the two).
    let mut o = pretty::Object::new(&mut w, 0)?;
    o.field("schema_version", &c.schema_version)?;
    o.field_with("launches", |w, d| {
        pretty::array(w, d, &launches, jobs, |(lo, v)| {
            CheckLaunch::new(lo, v, sources)
        })
    })?;
    o.field_with("findings", |w, d| {
        pretty::array(w, d, c.findings, jobs, |f| f)
    })?;
    o.field("suppressed", &c.suppressed)?;
    o.field_with("deployments", |w, d| {
        pretty::array(w, d, c.deployments.0, jobs, deployment)
    })?;
    o.field("files_checked", &c.files_checked)?;
    o.field("summary", &c.summary)?;
    o.field("notices", &c.notices)?;
    o.end()?;
    w.write_all(b"\n")?;
    w.flush()
}

/// The `check` document, its fields in the order of the contract; launches and deployments are
/// turned into JSON as they are written.
#[derive(Serialize)]
struct Check<'a> {
    schema_version: u32,
    launches: Launches<'a>,
    findings: &'a [Rendered],
    suppressed: usize,
    deployments: Deployments<'a>,
    files_checked: usize,
    summary: String,
    notices: Vec<String>,
}

impl<'a> Check<'a> {
    fn new(outcome: &'a Outcome, findings: &'a [Rendered]) -> Self {
        Check {
            schema_version: SCHEMA_VERSION,
            launches: Launches {
                outcome,
                verdicts: super::verdict_words(outcome.launches.len(), findings),
            },
            findings,
            suppressed: outcome.suppressed.len(),
            deployments: Deployments(&outcome.deployments),
            files_checked: outcome.files_checked,
            summary: super::checked_line(outcome),
            notices: super::nothing_found(outcome).into_iter().collect(),
        }
    }
}

struct Launches<'a> {
    outcome: &'a Outcome,
    verdicts: Vec<&'static str>,
}

impl Serialize for Launches<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let sources = &self.outcome.sources;
        s.collect_seq(
            self.outcome
                .launches
                .iter()
                .zip(&self.verdicts)
                .map(|(lo, v)| CheckLaunch::new(lo, v, sources)),
        )
    }
}

struct Deployments<'a>(&'a [crate::deployment::Deployment]);

impl Serialize for Deployments<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(deployment))
    }
}

/// A deployment entry: its id, whether it is a prefill/decode pair, and role → launch indices.
#[derive(Serialize)]
struct DeploymentView<'a> {
    id: &'a str,
    pd_pair: bool,
    roles: Roles<'a>,
}

fn deployment(d: &crate::deployment::Deployment) -> DeploymentView<'_> {
    DeploymentView {
        id: &d.id,
        pd_pair: d.is_pd_pair(),
        roles: Roles(&d.members),
    }
}

/// Role name → launch indices, roles in the order their first member appears.
struct Roles<'a>(&'a [crate::deployment::Member]);

impl Serialize for Roles<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut roles: Vec<(&str, Vec<usize>)> = Vec::new();
        for m in self.0 {
            let name = m.role.name();
            match roles.iter_mut().find(|(r, _)| *r == name) {
                Some((_, items)) => items.push(m.launch),
                None => roles.push((name, vec![m.launch])),
            }
        }
        s.collect_map(roles)
    }
}

/// `capacity --format json`: one object per launch, with its verdict and findings.
pub fn capacity(outcome: &Outcome, findings: &[Rendered]) -> Value {
    let items: Vec<Value> = outcome
        .launches
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut obj = launch_object(l, &outcome.sources);
            let own: Vec<&Rendered> = findings
                .iter()
                .filter(|f| f.finding.launch == Some(i))
                .collect();
            obj.insert("verdict".into(), json!(super::verdict_word(findings, i)));
            obj.insert("findings".into(), json!(own));
            Value::Object(obj)
        })
        .collect();
    match items.len() {
        1 => items.into_iter().next().unwrap_or(Value::Null),
        _ => Value::Array(items),
    }
}
