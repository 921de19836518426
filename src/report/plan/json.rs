//! `kvlint plan --format json`: `schema_version` 1.

use crate::plan::explore::Explored;
use crate::plan::{Report, Row};
use serde_json::{json, Value};

/// `schema_version` 1: the request, the ranked layouts, and the smallest fit beyond `--max-gpus`.
pub fn render(r: &Report) -> Value {
    json!({
        "schema_version": 1,
        "model": r.model,
        "gpu": r.gpus.join(","),
        "context": r.context,
        "role": r.role.name(),
        "max_gpus": r.max_gpus,
        "layouts": r.rows.iter().map(layout_json).collect::<Vec<_>>(),
        "smallest_fit_beyond_max_gpus": r.beyond.iter().map(|(gpu, n)| json!({"gpu": gpu, "gpus": n})).collect::<Vec<_>>(),
    })
}

/// One layout: the contract's fields, then what else `check` said of it.
pub fn layout_json(row: &Row) -> Value {
    let (l, p) = (&row.layout, &row.plan);
    json!({
        "engine": l.engine.name(),
        "engine_version": p.engine_version,
        "role": p.role.name(),
        "gpu": p.gpu,
        "gpus": p.gpu_count,
        "tp": p.tp,
        "pp": p.pp,
        "dp": l.dp(),
        "ep": 1,
        "dp_attention": l.dp_attention,
        "kv_cache_dtype": p.kv_cache_dtype,
        "memory_fraction": p.memory_fraction,
        "page_size": p.page_size,
        "pool_tokens": p.pool_tokens,
        "pool_tokens_low": p.pool_tokens_low,
        "pool_tokens_high": p.pool_tokens_high,
        "context": p.context_length,
        "max_context": row.max_context(),
        "verdict": row.verdict,
        "margin": round3(row.margin()),
        "headroom": row.headroom().map(round3),
        "findings": row.rules,
        "argv": row.argv,
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// `plan --launch --format json`: `schema_version` 1, one object per launch.
pub fn explore(found: &[Explored]) -> Value {
    let launches: Vec<Value> = found
        .iter()
        .map(|e| {
            json!({
                "file": e.file,
                "line": e.line,
                "engine": e.plan.as_ref().map(|p| p.engine.name()),
                "engine_version": e.plan.as_ref().map(|p| &p.engine_version),
                "role": e.plan.as_ref().map(|p| p.role.name()),
                "model": e.plan.as_ref().map(|p| &p.model),
                "gpu": e.plan.as_ref().map(|p| &p.gpu),
                "gpus": e.plan.as_ref().map(|p| p.gpu_count),
                "context": e.plan.as_ref().map(|p| p.context_length),
                "max_context": e.max_context(),
                "verdict": e.verdict(),
                "change": e.change,
                "problem": e.problem,
                "plan": e.layouts.as_ref().map(render),
            })
        })
        .collect();
    json!({"schema_version": 1, "launches": launches})
}
