//! `kvlint plan`: every layout an engine accepts for a model on a GPU type, each planned by the
//! pipeline `check` and `capacity` run, fed the layout's own launch line, and ranked.
//! `enumerate` lists the layouts and writes their argv, `evaluate` plans them, `rank` orders
//! them and finds the smallest GPU count that holds the context, `explore` (`--launch FILE`)
//! looks around the launches of a file.

mod enumerate;
mod evaluate;
pub mod explore;
mod rank;

use crate::capacity::{Plan, Role};
use crate::gpu::GpuSpec;
use crate::launch::Engine;
use crate::model::Geometry;
use crate::pipeline::Options;
use crate::version::Version;
use serde::Serialize;
use std::sync::Arc;

pub use enumerate::{layouts, Layout};
pub use evaluate::Planner;

/// GPUs of one node: `--max-gpus`' default.
pub const NODE_GPUS: u32 = 8;

/// The largest GPU count searched for the smallest that fits, beyond `--max-gpus` (a 64-GPU
/// NVL domain times 4 pipeline stages).
pub const SEARCH_GPUS: u32 = 256;

/// What to plan.
#[derive(Debug, Clone)]
pub struct Request {
    pub model: String,
    pub gpus: Vec<GpuSpec>,
    /// Each engine with the release it is planned at.
    pub engines: Vec<(Engine, Version)>,
    /// The context to hold; None: each layout's own (the model's limit as the engine derives it).
    pub context: Option<u64>,
    pub role: Role,
    pub max_gpus: u32,
    /// KV cache dtypes to try besides the engine's default (none given: FP8 where the GPU has it).
    pub kv_cache_dtypes: Vec<String>,
    /// Memory fractions to try besides the engine's default.
    pub memory_fractions: Vec<f64>,
}

/// Whether a layout holds the context: the verdict `check` gives (KV001/KV002/KV005 refuse,
/// KV004 warns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The band's low end holds the context.
    Fits,
    /// The band straddles the context.
    Tight,
    DoesNotFit,
}

impl Verdict {
    /// A context beyond the model's own limit is refused whatever the pool (KV005).
    pub fn of(p: &Plan) -> Verdict {
        let ctx = p.context_length;
        if ctx > p.model_max_context {
            Verdict::DoesNotFit
        } else if p.usable_tokens_low >= ctx {
            Verdict::Fits
        } else if p.usable_tokens_high >= ctx {
            Verdict::Tight
        } else {
            Verdict::DoesNotFit
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Verdict::Fits => "fits",
            Verdict::Tight => "tight",
            Verdict::DoesNotFit => "does not fit",
        }
    }
}

/// One planned layout.
#[derive(Debug, Clone)]
pub struct Row {
    pub layout: Layout,
    pub argv: Vec<String>,
    /// The plan `check` makes of `argv`.
    pub plan: Plan,
    pub verdict: Verdict,
    /// The rules `check` reports on `argv` (KV003 when a prefill pool holds the context less than
    /// twice, ...).
    pub rules: Vec<&'static str>,
}

impl Row {
    /// Longest context one request can hold: the band's low end, within the model's own limit.
    pub fn max_context(&self) -> u64 {
        self.plan.usable_tokens_low.min(self.plan.model_max_context)
    }

    /// Low end of the band over the context: 1.0 just holds it.
    pub fn margin(&self) -> f64 {
        self.plan.usable_tokens_low as f64 / self.plan.context_length.max(1) as f64
    }

    /// Prefill headroom as KV003 sees it: pool low end over the context.
    pub fn headroom(&self) -> Option<f64> {
        (self.plan.role == Role::Prefill).then(|| self.margin())
    }
}

/// The answer to a request.
#[derive(Debug, Clone)]
pub struct Report {
    pub model: String,
    pub gpus: Vec<String>,
    pub role: Role,
    /// `--context`, else None (each layout is checked against its own model limit).
    pub context: Option<u64>,
    pub max_gpus: u32,
    /// Ranked: fewest GPUs first, then the largest margin.
    pub rows: Vec<Row>,
    /// Layouts left out because the weights leave no memory for a KV cache (MEM001).
    pub no_room: usize,
    /// When no layout up to `max_gpus` fits: the smallest GPU count that does, per GPU type,
    /// searched up to [`SEARCH_GPUS`] (None: none up to that).
    pub beyond: Vec<(String, Option<u32>)>,
}

impl Report {
    pub fn fits(&self) -> bool {
        self.rows.iter().any(|r| r.verdict == Verdict::Fits)
    }
}

/// Why a request cannot be planned: the finding `check` gives (unknown model, GPU or
/// architecture), as its message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct PlanError(pub String);

/// Plans every layout of the request.
pub fn plan(req: &Request, opts: &Options) -> Result<Report, PlanError> {
    let mut planner = Planner::new(opts.clone());
    let mut rows = Vec::new();
    let mut beyond = Vec::new();
    for gpu in &req.gpus {
        for (engine, version) in &req.engines {
            let model = planner.model(&req.model, *engine, version, gpu)?;
            let layouts = enumerate::layouts(req, *engine, version, gpu, &model, 1..=req.max_gpus);
            rows.extend(planner.evaluate_all(&layouts));
        }
    }
    let before = rows.len();
    rows.retain(|r| r.plan.pool_tokens_high > 0);
    let no_room = before - rows.len();
    rank::rank(&mut rows);
    // More GPUs never lift the model's own limit.
    let beyond_limit = rows
        .iter()
        .any(|r| r.plan.context_length > r.plan.model_max_context);
    if !beyond_limit && !rows.iter().any(|r| r.verdict == Verdict::Fits) {
        for gpu in &req.gpus {
            beyond.push((gpu.name.clone(), smallest_fit(req, gpu, &mut planner)?));
        }
    }
    Ok(Report {
        model: req.model.clone(),
        gpus: req.gpus.iter().map(|g| g.name.clone()).collect(),
        role: req.role,
        context: req.context,
        max_gpus: req.max_gpus,
        rows,
        no_room,
        beyond,
    })
}

/// The smallest GPU count above `--max-gpus` at which a layout on `gpu` fits, doubling.
fn smallest_fit(
    req: &Request,
    gpu: &GpuSpec,
    planner: &mut Planner,
) -> Result<Option<u32>, PlanError> {
    let mut n = req.max_gpus.max(1);
    while n < SEARCH_GPUS {
        let mut fit = None;
        for (engine, version) in &req.engines {
            let model: Arc<Geometry> = planner.model(&req.model, *engine, version, gpu)?;
            let layouts = enumerate::layouts(req, *engine, version, gpu, &model, n + 1..=n * 2);
            let here = planner
                .evaluate_all(&layouts)
                .into_iter()
                .filter(|r| r.verdict == Verdict::Fits)
                .map(|r| r.plan.gpu_count)
                .min();
            fit = [fit, here].into_iter().flatten().min();
        }
        if fit.is_some() {
            return Ok(fit);
        }
        n *= 2;
    }
    Ok(None)
}
