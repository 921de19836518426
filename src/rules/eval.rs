//! The evaluators rule data points at (`check = "..."` in `rules/*.toml`). Each reads a plan and
//! the launch's settings and returns at most one finding; wording comes from the rule's templates.

use super::Rule;
use crate::capacity::{ContextSource, Plan, Role};
use crate::engine::EngineArgs;
use crate::finding::Finding;
use crate::launch::Engine;
use crate::model::Geometry;
use crate::source::Loc;

/// What the evaluators look at for one launch.
pub struct Subject<'a> {
    pub plan: &'a Plan,
    pub args: &'a EngineArgs,
    pub model: &'a Geometry,
    /// The launch's command words, for findings with no flag to point at.
    pub at: Loc,
}

/// Runs every plan-level rule on one launch.
pub fn evaluate(s: &Subject) -> Vec<Finding> {
    super::all()
        .iter()
        .filter(|r| r.applies_to(s.plan.role.name()))
        .filter_map(|r| {
            let f = match r.check.as_str() {
                "pool_vs_context" => pool_vs_context(r, s),
                "pool_headroom" => pool_headroom(r, s),
                "pool_uncertain" => pool_uncertain(r, s),
                "context_vs_model" => context_vs_model(r, s),
                "weights_vs_budget" => weights_vs_budget(r, s),
                "heads_vs_tp" => heads_vs_tp(r, s),
                _ => None,
            };
            f
        })
        .collect()
}

/// Thousands separators, as the engines' own logs print token counts.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn context_flag(p: &Plan) -> &'static str {
    match p.engine {
        Engine::Sglang => "--context-length",
        Engine::Vllm => "--max-model-len",
        Engine::Trtllm => "max_seq_len",
    }
}

/// Where a context finding points: the context flag, else the launch.
fn context_loc(s: &Subject) -> (Loc, &'static str) {
    match &s.plan.context_source {
        ContextSource::Flag(l) | ContextSource::Auto(l) => (*l, "advertised context"),
        ContextSource::Model => (s.at, "context taken from the model's config.json"),
    }
}

/// The shared template values of the pool rules.
fn pool_finding(rule: &'static str, s: &Subject) -> Finding {
    let p = s.plan;
    let (loc, label) = context_loc(s);
    let fp8 = p.kv_cache_dtype.starts_with("fp8") || p.kv_cache_dtype.starts_with("fp4");
    let remedy = match p.needed_fraction {
        Some(f) if f > p.memory_fraction => format!("raise {} to {f}", p.memory_fraction_flag),
        _ if fp8 => "spread the model over more GPUs".to_string(),
        _ => "use an FP8 KV cache or spread the model over more GPUs".to_string(),
    };
    let mut f = Finding::new(rule, Some(loc))
        .var("role", p.role.name())
        .var("pool", thousands(p.usable_tokens))
        .var("pool_low", thousands(p.usable_tokens_low))
        .var("pool_high", thousands(p.usable_tokens_high))
        .var("context", thousands(p.context_length))
        .var("max_context", thousands(p.max_context_fit))
        .var("context_flag", context_flag(p))
        .var("fraction_flag", p.memory_fraction_flag)
        .var("fraction", p.memory_fraction)
        .var("remedy", remedy)
        .var("engine_note", engine_note(p))
        .label(label);
    if let Some(l) = p.memory_fraction_loc {
        f = f.also(l, "sets the memory fraction");
    }
    f
}

/// TensorRT-LLM does not refuse such a launch: it starts with a smaller context than advertised.
fn engine_note(p: &Plan) -> String {
    match p.engine {
        Engine::Trtllm => format!(
            "; TensorRT-LLM would start anyway and silently lower max_seq_len to about {}",
            thousands(p.usable_tokens)
        ),
        _ => String::new(),
    }
}

/// KV001 / KV002: even the optimistic end of the band holds less than the advertised context.
fn pool_vs_context(r: &'static Rule, s: &Subject) -> Option<Finding> {
    let p = s.plan;
    let ratio = r.param("min_ratio").unwrap_or(1.0);
    ((p.usable_tokens_high as f64) < p.context_length as f64 * ratio)
        .then(|| pool_finding(&r.id, s))
}

/// KV004: the band straddles the context.
fn pool_uncertain(r: &'static Rule, s: &Subject) -> Option<Finding> {
    let p = s.plan;
    let ctx = p.context_length;
    (p.usable_tokens_low < ctx && p.usable_tokens_high >= ctx).then(|| pool_finding(&r.id, s))
}

/// KV003: a PD prefill pool that holds the context but with less than `min_ratio` of headroom.
fn pool_headroom(r: &'static Rule, s: &Subject) -> Option<Finding> {
    let p = s.plan;
    let ratio = r.param("min_ratio").unwrap_or(2.0);
    let ctx = p.context_length as f64;
    let holds = p.usable_tokens_low as f64 >= ctx;
    (p.role == Role::Prefill && holds && (p.usable_tokens_low as f64) < ctx * ratio)
        .then(|| pool_finding(&r.id, s).var("ratio", ratio))
}

/// KV005: the context exceeds what config.json and its rope scaling allow.
fn context_vs_model(r: &'static Rule, s: &Subject) -> Option<Finding> {
    let p = s.plan;
    let ContextSource::Flag(loc) = p.context_source else {
        return None;
    };
    (p.context_length > p.model_max_context).then(|| {
        Finding::new(&r.id, Some(loc))
            .var("context", thousands(p.context_length))
            .var("model_max", thousands(p.model_max_context))
            .var("model", &p.model)
            .var("context_flag", context_flag(p))
            .label("beyond the model's trained context")
    })
}

/// MEM001: the weights alone take the whole memory budget, so no KV pool can be made.
fn weights_vs_budget(r: &'static Rule, s: &Subject) -> Option<Finding> {
    let p = s.plan;
    (p.pool_tokens_high == 0).then(|| {
        let loc = p.memory_fraction_loc.unwrap_or(s.at);
        Finding::new(&r.id, Some(loc))
            .var(
                "weights_gib",
                format!("{:.1}", p.weights_bytes as f64 / crate::capacity::GIB),
            )
            .var("fraction_flag", p.memory_fraction_flag)
            .var("fraction", p.memory_fraction)
            .var("gpu", &p.gpu)
            .var("tp", p.tp)
            .label("budget left for the KV cache is empty")
    })
}

/// PAR001: attention or KV heads that tensor parallelism cannot split.
fn heads_vs_tp(r: &'static Rule, s: &Subject) -> Option<Finding> {
    let (m, p) = (s.model, s.plan);
    let tp = p.tp;
    if tp <= 1 || m.mla.is_some() {
        return None;
    }
    let heads_ok = m.num_attention_heads % tp == 0;
    let kv = m.num_kv_heads;
    let kv_ok = kv % tp == 0 || tp % kv == 0;
    if heads_ok && kv_ok {
        return None;
    }
    let dest = match p.engine {
        Engine::Sglang => "tp_size",
        Engine::Vllm | Engine::Trtllm => "tensor_parallel_size",
    };
    let loc = s.args.get(dest).map_or(s.at, |x| x.loc());
    Some(
        Finding::new(&r.id, Some(loc))
            .var("tp", tp)
            .var("heads", m.num_attention_heads)
            .var("kv_heads", kv)
            .var("model", &m.id)
            .label("tensor-parallel size"),
    )
}
