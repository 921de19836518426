//! JSON output: the versioned `check` document and the `capacity` objects (DESIGN.md contract).

use super::Rendered;
use crate::pipeline::{LaunchOutcome, Outcome};
use serde_json::{json, Map, Value};

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

/// The object `capacity --format json` prints for a launch.
pub fn launch_object(lo: &LaunchOutcome) -> Map<String, Value> {
    let mut obj = match lo.plan.as_ref().map(serde_json::to_value) {
        Some(Ok(Value::Object(m))) => m,
        _ => Map::new(),
    };
    for key in PLAN_KEYS {
        obj.entry(*key).or_insert(Value::Null);
    }
    let source = lo.model.as_ref().and_then(|m| m.model_source.as_ref());
    obj.insert("model_source".into(), json!(source));
    if lo.plan.is_none() {
        obj.insert("engine".into(), json!(lo.launch.engine));
        obj.insert("engine_version".into(), json!(lo.args.version.to_string()));
        obj.insert(
            "model".into(),
            lo.model.as_ref().map_or(Value::Null, |m| json!(m.id)),
        );
        obj.insert(
            "gpu".into(),
            lo.gpu.as_ref().map_or(Value::Null, |g| json!(g.name)),
        );
    }
    obj
}

/// A `check` launch entry: the capacity object plus where the launch was found.
fn check_launch(lo: &LaunchOutcome, outcome: &Outcome) -> Value {
    let mut obj = launch_object(lo);
    let pos = outcome.sources.position(lo.launch.command);
    obj.insert("file".into(), json!(outcome.sources.get(lo.file).name));
    obj.insert("line".into(), json!(pos.line));
    obj.insert("object".into(), json!(lo.launch.object));
    Value::Object(obj)
}

/// The whole `check --format json` document.
pub fn check(outcome: &Outcome, findings: &[Rendered]) -> Value {
    json!({
        "schema_version": SCHEMA_VERSION,
        "launches": outcome.launches.iter().map(|l| check_launch(l, outcome)).collect::<Vec<_>>(),
        "findings": findings,
        "suppressed": outcome.suppressed.len(),
        "deployments": outcome.deployments.iter().map(deployment).collect::<Vec<_>>(),
    })
}

/// A deployment entry: its id, whether it is a prefill/decode pair, and role → launch indices.
fn deployment(d: &crate::deployment::Deployment) -> Value {
    let mut roles = Map::new();
    for m in &d.members {
        let list = roles
            .entry(m.role.name())
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(items) = list {
            items.push(json!(m.launch));
        }
    }
    json!({"id": d.id, "pd_pair": d.is_pd_pair(), "roles": roles})
}

/// `capacity --format json`: one object per launch.
pub fn capacity(outcome: &Outcome) -> Value {
    let items: Vec<Value> = outcome
        .launches
        .iter()
        .map(|l| Value::Object(launch_object(l)))
        .collect();
    match items.len() {
        1 => items.into_iter().next().unwrap_or(Value::Null),
        _ => Value::Array(items),
    }
}
