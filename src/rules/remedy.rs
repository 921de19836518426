//! What would make a launch's pool hold a number of tokens, found by planning the launch again
//! with one thing changed: a larger memory fraction, an FP8 KV cache, more GPUs. Help text only
//! offers a change that was computed to work, and never a context of zero.

use super::eval::{thousands, Subject};
use crate::capacity::{self, Inputs, Plan};
use crate::engine::{trtllm, EngineArgs, Setting, SettingValue};
use crate::launch::Engine;

/// The largest memory fraction kvlint suggests: above it the engines' activations and CUDA graphs
/// have no room left.
const MAX_FRACTION: f64 = 0.95;

/// The largest tensor-parallel size kvlint suggests (a 64-GPU NVL domain).
const MAX_TP: u32 = 64;

/// The changes that make the low end of the band hold `target` tokens, joined with "or"; when
/// none does, a sentence saying what was tried.
pub fn remedy(s: &Subject, target: u64) -> String {
    let p = s.plan;
    let mut out = Vec::new();
    if let Some(f) = fraction(s, target) {
        out.push(format!("raise {} to {f}", p.memory_fraction_flag));
    }
    if let Some(q) = fp8(s, target) {
        out.push(q);
    }
    if let Some(t) = more_gpus(s, target) {
        out.push(t);
    }
    if out.is_empty() {
        return format!(
            "no single change holds it: not a memory fraction up to {MAX_FRACTION}, an FP8 KV cache or up to {} GPUs; use GPUs with more memory or a smaller (or quantized) model",
            MAX_TP * p.pp * p.dp
        );
    }
    out.join(", or ")
}

/// Plans the launch again with `changes` applied; None when the engine cannot plan it.
fn replan(s: &Subject, changes: &[(&str, SettingValue)]) -> Option<Plan> {
    let mut args: EngineArgs = s.args.clone();
    for (dest, value) in changes {
        args.settings.insert(
            (*dest).to_string(),
            Setting {
                dest: (*dest).to_string(),
                value: value.clone(),
                flag_loc: s.at,
                value_loc: s.at,
                unresolved: Vec::new(),
                defaulted: false,
            },
        );
    }
    let inputs = Inputs {
        args: &args,
        model: s.model,
        gpu: s.gpu,
        gpu_count: None,
        at: s.at,
    };
    capacity::plan(&inputs).ok()
}

fn holds(p: &Plan, target: u64) -> bool {
    p.usable_tokens_low >= target
}

/// The option that sets the memory fraction, as the engine's settings name it.
fn fraction_dest(e: Engine) -> &'static str {
    match e {
        Engine::Sglang => "mem_fraction_static",
        Engine::Vllm => "gpu_memory_utilization",
        Engine::Trtllm => trtllm::FRACTION,
    }
}

/// The smallest fraction up to `MAX_FRACTION` that holds `target`: the engine plan's own
/// `needed_fraction` for the advertised context, else a search over re-plans (to 0.005).
fn fraction(s: &Subject, target: u64) -> Option<f64> {
    let p = s.plan;
    if target == p.context_length {
        return p
            .needed_fraction
            .filter(|f| *f > p.memory_fraction && *f <= MAX_FRACTION);
    }
    let dest = fraction_dest(p.engine);
    let fits =
        |f: f64| replan(s, &[(dest, SettingValue::Float(f))]).is_some_and(|q| holds(&q, target));
    let (mut lo, mut hi) = (p.memory_fraction, MAX_FRACTION);
    if lo >= hi || !fits(hi) {
        return None;
    }
    while hi - lo > 0.005 {
        let mid = (lo + hi) / 2.0;
        if fits(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some((hi * 1000.0).ceil() / 1000.0)
}

/// An FP8 KV cache, when the launch does not already store 8 bits or fewer.
fn fp8(s: &Subject, target: u64) -> Option<String> {
    let p = s.plan;
    if p.kv_cache_dtype.starts_with("fp8") || p.kv_cache_dtype.starts_with("fp4") {
        return None;
    }
    let (dest, value, how) = match p.engine {
        Engine::Sglang => ("kv_cache_dtype", "fp8_e4m3", "--kv-cache-dtype fp8_e4m3"),
        Engine::Vllm => ("kv_cache_dtype", "fp8", "--kv-cache-dtype fp8"),
        Engine::Trtllm => ("kv_cache_config.dtype", "fp8", "kv_cache_config.dtype: fp8"),
    };
    let q = replan(s, &[(dest, SettingValue::Text(value.into()))])?;
    holds(&q, target).then(|| {
        format!(
            "use an FP8 KV cache ({how}: about {} tokens)",
            thousands(q.usable_tokens)
        )
    })
}

/// The smallest tensor-parallel size (doubling, heads still divisible) that holds `target`.
fn more_gpus(s: &Subject, target: u64) -> Option<String> {
    let (p, m) = (s.plan, s.model);
    let dest = match p.engine {
        Engine::Sglang => "tp_size",
        Engine::Vllm | Engine::Trtllm => "tensor_parallel_size",
    };
    let splits = |tp: u32| {
        m.mla.is_some()
            || (m.num_attention_heads.is_multiple_of(tp)
                && (m.num_kv_heads.is_multiple_of(tp) || tp.is_multiple_of(m.num_kv_heads.max(1))))
    };
    let mut tp = p.tp.max(1) * 2;
    while tp <= MAX_TP {
        if splits(tp) {
            if let Some(q) = replan(s, &[(dest, SettingValue::Int(i64::from(tp)))]) {
                if holds(&q, target) {
                    return Some(format!(
                        "spread it over {} GPUs (TP {tp}: about {} tokens)",
                        q.gpu_count,
                        thousands(q.usable_tokens)
                    ));
                }
            }
        }
        tp *= 2;
    }
    None
}
