//! `kvlint plan --launch FILE`: for each launch `check` finds in a file, the longest context its
//! layout holds, the smallest change that makes it hold its context (the help `check` gives:
//! context, fraction, KV dtype, GPUs), and the layouts of its model and GPU that hold it.

use super::{PlanError, Report, Request, Verdict};
use crate::capacity::Plan;
use crate::input::{self, Limits};
use crate::pipeline::{Options, Outcome};
use crate::report;
use crate::version::Version;
use std::path::Path;

/// Largest file read, as `check`'s default `--max-input-size`.
const MAX_INPUT: u64 = 256 * 1024 * 1024;

/// Rules whose help is the smallest change that makes the pool hold the context.
const POOL_RULES: &[&str] = &["KV001", "KV002", "KV004"];

/// One launch of the file and what was found around it.
#[derive(Debug, Clone)]
pub struct Explored {
    pub file: String,
    pub line: usize,
    /// The launch's plan, as `check` makes it.
    pub plan: Option<Plan>,
    /// Why there is no plan (an unknown model or GPU, a value only known at deploy).
    pub problem: Option<String>,
    /// `check`'s help on the pool finding: the changes that make it hold the context.
    pub change: Option<String>,
    /// The layouts of its model and GPU that hold its context.
    pub layouts: Option<Report>,
}

impl Explored {
    pub fn verdict(&self) -> Option<Verdict> {
        self.plan.as_ref().map(Verdict::of)
    }

    pub fn fits(&self) -> bool {
        self.verdict() == Some(Verdict::Fits)
    }

    /// Longest context one request can hold on the launch's own layout.
    pub fn max_context(&self) -> Option<u64> {
        self.plan
            .as_ref()
            .map(|p| p.usable_tokens_low.min(p.model_max_context))
    }
}

/// Checks every launch in `path` as `check` does and explores around each. `base` carries the
/// request's `--max-gpus`, KV dtypes and fractions.
pub fn explore(path: &Path, base: &Request, opts: &Options) -> Result<Vec<Explored>, PlanError> {
    let limits = Limits {
        max_size: MAX_INPUT,
        vcs_ignores: true,
        stdin_name: None,
    };
    let inputs = input::read(&path.to_string_lossy(), &limits, |_| false)
        .map_err(|e| PlanError(e.to_string()))?;
    let mut outcome = Outcome::default();
    for i in inputs {
        let file = outcome.sources.add(i.name, i.text);
        outcome.check_file(file, opts, i.base.as_deref());
    }
    let findings = report::render_all(&outcome);
    let mut out = Vec::new();
    for (i, l) in outcome.launches.iter().enumerate() {
        let own = |rules: &[&str]| {
            findings
                .iter()
                .find(|f| f.finding.launch == Some(i) && rules.contains(&f.rule.as_str()))
        };
        let problem = match &l.plan {
            Some(_) => None,
            None => Some(own(&["INP002", "INP003", "INP004", "INP008"]).map_or_else(
                || "no plan could be made for this launch".to_string(),
                |f| f.message.clone(),
            )),
        };
        let layouts = match (&l.plan, &l.gpu) {
            (Some(p), Some(gpu)) => around(p, gpu, base, opts)?,
            _ => None,
        };
        out.push(Explored {
            file: outcome.sources.get(l.file).name.clone(),
            line: outcome.sources.line(l.launch.loc()),
            plan: l.plan.clone(),
            problem,
            change: own(POOL_RULES).map(|f| f.help.clone()),
            layouts,
        });
    }
    Ok(out)
}

/// The layouts of the launch's model, engine, release and role on its GPU type that hold its
/// context (the fitting rows only); None when the launch's release is not one version (its
/// image names none: the plan spans every release it could run).
fn around(
    p: &Plan,
    gpu: &crate::gpu::GpuSpec,
    base: &Request,
    opts: &Options,
) -> Result<Option<Report>, PlanError> {
    let Some(version) = Version::parse(&p.engine_version) else {
        return Ok(None);
    };
    let req = Request {
        model: p.model.clone(),
        gpus: vec![gpu.clone()],
        engines: vec![(p.engine, version)],
        context: Some(base.context.unwrap_or(p.context_length)),
        role: p.role,
        max_gpus: base.max_gpus.max(p.gpu_count),
        ..base.clone()
    };
    let mut report = super::plan(&req, opts)?;
    report.rows.retain(|r| r.verdict == Verdict::Fits);
    Ok(Some(report))
}
