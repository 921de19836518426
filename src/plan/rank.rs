//! Orders planned layouts: fewest GPUs first, then the largest margin over the context.

use super::Row;

/// Drops layouts that plan the same as one before them (an FP8 flag on a model whose default
/// is already FP8, a given fraction equal to the default), then ranks.
pub fn rank(rows: &mut Vec<Row>) {
    let mut seen = Vec::new();
    rows.retain(|r| {
        let key = same_as(r);
        let new = !seen.contains(&key);
        if new {
            seen.push(key);
        }
        new
    });
    rows.sort_by(|a, b| {
        a.plan
            .gpu_count
            .cmp(&b.plan.gpu_count)
            .then(b.margin().total_cmp(&a.margin()))
            .then(a.layout.engine.name().cmp(b.layout.engine.name()))
            .then(a.layout.tp.cmp(&b.layout.tp))
            .then(a.layout.dp_attention.cmp(&b.layout.dp_attention))
            .then(a.plan.kv_cache_dtype.cmp(&b.plan.kv_cache_dtype))
            .then(a.plan.memory_fraction.total_cmp(&b.plan.memory_fraction))
    });
}

/// What makes two layouts the same server: its split, GPU, and the dtype and fraction in force.
fn same_as(r: &Row) -> (String, &'static str, u32, u32, bool, String, u64) {
    (
        r.plan.gpu.clone(),
        r.layout.engine.name(),
        r.layout.tp,
        r.layout.pp,
        r.layout.dp_attention,
        r.plan.kv_cache_dtype.clone(),
        r.plan.memory_fraction.to_bits(),
    )
}
