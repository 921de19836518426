//! What a running engine reported, as read from its endpoints or log, and the plan and findings
//! made of it: the measured pool stands in for the whole band, so the pool rules judge the
//! engine's own number.

use super::predict::Prediction;
use crate::capacity::{Assumption, ContextSource, Plan, Role};
use crate::finding::Finding;
use crate::launch::Engine;
use crate::rules::RuleSettings;
use crate::rules::{self, thousands, PoolSubject};
use crate::source::{FileId, Loc, Sources};
use std::ops::Range;

/// One value read, where in the text it was read (None: given on the command line), and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact<T> {
    pub value: T,
    pub at: Option<Range<usize>>,
    pub how: String,
}

impl<T> Fact<T> {
    pub fn new(value: T, at: Range<usize>, how: impl Into<String>) -> Self {
        Fact {
            value,
            at: Some(at),
            how: how.into(),
        }
    }
    pub fn given(value: T, how: impl Into<String>) -> Self {
        Fact {
            value,
            at: None,
            how: how.into(),
        }
    }
}

/// What one server or log said, with byte ranges into `text` (what was read).
#[derive(Debug, Clone)]
pub struct Reading {
    /// The URL or the log's file name.
    pub name: String,
    pub text: String,
    pub engine: Engine,
    pub version: Option<String>,
    pub role: Option<Role>,
    /// The smallest pool of any rank: what one request can count on.
    pub pool: Fact<u64>,
    /// Every rank's pool (`TP0`, `DP1 TP0`, `EngineCore_DP0`), in the order first seen.
    pub ranks: Vec<(String, u64)>,
    pub context: Option<Fact<u64>>,
    pub model: Option<Fact<String>>,
    pub page_size: Option<Fact<u64>>,
    pub kv_cache_dtype: Option<Fact<String>>,
    /// SGLang's `disaggregation_transfer_backend` (mooncake, nixl, ...), for PD005.
    pub transfer_backend: Option<Fact<String>>,
    /// What kvlint could not read and says so.
    pub notes: Vec<String>,
}

/// A reading placed in the run's sources, with the plan the pool rules judge.
#[derive(Debug)]
pub struct Measurement {
    pub reading: Reading,
    pub file: FileId,
    pub context: Fact<u64>,
    pub plan: Plan,
    pub prediction: Option<Prediction>,
}

impl Measurement {
    pub fn loc<T>(&self, f: &Fact<T>) -> Option<Loc> {
        f.at.clone().map(|r| Loc::new(self.file, r))
    }
    pub fn role(&self) -> Role {
        self.plan.role
    }
    /// Where the finding about the pool points: the pool's number, else the top of the text.
    fn pool_loc(&self) -> Loc {
        self.loc(&self.reading.pool)
            .unwrap_or(Loc::new(self.file, 0..0))
    }
}

/// Places a reading in `sources` and builds its plan. The context must be known by now.
pub fn measure(r: Reading, sources: &mut Sources) -> Result<Measurement, String> {
    let context = r.context.clone().ok_or_else(|| {
        let notes: String = r.notes.iter().map(|n| format!(" ({n})")).collect();
        format!(
            "{}: the {} {} does not say the advertised context{notes}; pass --context N or the launch after --",
            r.name,
            r.engine.name(),
            if r.name.contains("://") { "server" } else { "log" }
        )
    })?;
    let file = sources.add(r.name.clone(), r.text.clone());
    let role = r.role.unwrap_or(Role::Unified);
    let context_at = context.at.clone().map(|x| Loc::new(file, x));
    let pool_at = r
        .pool
        .at
        .clone()
        .map_or(Loc::new(file, 0..0), |x| Loc::new(file, x));
    let p = r.pool.value;
    let plan = Plan {
        engine: r.engine,
        engine_version: r.version.clone().unwrap_or_else(|| "unknown".into()),
        role,
        model: r
            .model
            .as_ref()
            .map_or_else(|| "unknown".into(), |m| m.value.clone()),
        gpu: "measured".into(),
        gpu_count: 0,
        tp: 1,
        pp: 1,
        dp: 1,
        context_length: context.value,
        context_source: ContextSource::Flag(context_at.unwrap_or(pool_at)),
        model_max_context: context.value,
        kv_cache_dtype: r
            .kv_cache_dtype
            .as_ref()
            .map_or_else(|| "unknown".into(), |d| d.value.clone()),
        page_size: r
            .page_size
            .as_ref()
            .and_then(|x| u32::try_from(x.value).ok())
            .unwrap_or(1),
        kv_bytes_per_token: 0,
        pool_tokens: p,
        pool_tokens_low: p,
        pool_tokens_high: p,
        usable_tokens: p,
        usable_tokens_low: p,
        usable_tokens_high: p,
        budget_bytes: 0,
        weights_bytes: 0,
        memory_fraction: 0.0,
        memory_fraction_loc: None,
        memory_fraction_flag: match r.engine {
            Engine::Sglang => "--mem-fraction-static",
            Engine::Vllm => "--gpu-memory-utilization",
            Engine::Trtllm => "free_gpu_memory_fraction",
        },
        needed_fraction: None,
        max_context_fit: p,
        assumptions: vec![Assumption {
            term: "pool_tokens".into(),
            value: p as f64,
            low: None,
            high: None,
            source: format!("measured: {}", r.pool.how),
        }],
    };
    Ok(Measurement {
        reading: r,
        file,
        context,
        plan,
        prediction: None,
    })
}

/// KV001–KV003 on the measured plan, each pointing at the context and the measured pool.
pub fn findings(m: &Measurement) -> Vec<Finding> {
    let settings = RuleSettings::default();
    let how = m.reading.pool.how.clone();
    let subject = PoolSubject {
        plan: &m.plan,
        at: m.pool_loc(),
        settings: &settings,
        measured: Some(&how),
        launch: None,
    };
    rules::evaluate_measured(&subject)
        .into_iter()
        .map(|mut f| {
            if m.plan.engine == Engine::Trtllm {
                f = f.var(
                    "engine_note",
                    "; TensorRT-LLM started anyway and serves no request longer than its pool",
                );
            }
            if f.primary != Some(m.pool_loc()) {
                f = f.also(m.pool_loc(), "measured pool");
            }
            f
        })
        .collect()
}

/// PD001–PD005 between every measured prefill server and every measured decode server.
pub fn pd_findings(ms: &[Measurement]) -> Vec<Finding> {
    let mut out = Vec::new();
    let half = |role: Role| ms.iter().filter(move |m| m.role() == role);
    for p in half(Role::Prefill) {
        for d in half(Role::Decode) {
            let ctx = |m: &Measurement| {
                Some((
                    thousands(m.context.value),
                    m.loc(&m.context).or(Some(m.pool_loc())),
                ))
            };
            let page = |m: &Measurement| {
                let f = m.reading.page_size.as_ref()?;
                Some((f.value.to_string(), m.loc(f)))
            };
            let dtype = |m: &Measurement| {
                let f = m.reading.kv_cache_dtype.as_ref()?;
                Some((f.value.clone(), m.loc(f)))
            };
            let model = |m: &Measurement| {
                let f = m.reading.model.as_ref()?;
                Some((f.value.trim_end_matches('/').to_string(), m.loc(f)))
            };
            let backend = |m: &Measurement| {
                let f = m.reading.transfer_backend.as_ref()?;
                Some((f.value.clone(), m.loc(f)))
            };
            let pairs = [
                ("PD001", ctx(p), ctx(d)),
                ("PD002", page(p), page(d)),
                ("PD003", dtype(p), dtype(d)),
                ("PD004", model(p), model(d)),
                ("PD005", backend(p), backend(d)),
            ];
            for (rule, a, b) in pairs {
                let (Some((pv, pat)), Some((dv, dat))) = (a, b) else {
                    continue;
                };
                if pv == dv {
                    continue;
                }
                let mut f = Finding::new(rule, pat.or(Some(p.pool_loc())))
                    .var("prefill", &pv)
                    .var("decode", &dv)
                    .label(format!("prefill: {pv}"));
                if let Some(at) = dat {
                    f = f.also(at, format!("decode: {dv}"));
                }
                out.push(f);
            }
        }
    }
    out
}
