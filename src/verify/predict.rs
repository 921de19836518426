//! kvlint's prediction for the launch that produced a server or log, set beside the measurement:
//! the error in % is the calibration data the capacity model is checked against.

use super::measured::Reading;
use super::VerifyArgs;
use crate::capacity::Plan;
use crate::extract;
use crate::pipeline::{Options, Outcome};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub engine_version: String,
    pub model: String,
    pub gpu: String,
    pub context_length: u64,
    pub pool_tokens: u64,
    pub pool_tokens_low: u64,
    pub pool_tokens_high: u64,
    /// (predicted − measured) / measured, in %.
    pub error_percent: f64,
    pub inside_band: bool,
}

impl Prediction {
    fn new(p: &Plan, measured: u64) -> Self {
        let m = measured.max(1) as f64;
        Prediction {
            engine_version: p.engine_version.clone(),
            model: p.model.clone(),
            gpu: p.gpu.clone(),
            context_length: p.context_length,
            pool_tokens: p.pool_tokens,
            pool_tokens_low: p.pool_tokens_low,
            pool_tokens_high: p.pool_tokens_high,
            error_percent: ((p.pool_tokens as f64 - m) / m * 1000.0).round() / 10.0,
            inside_band: (p.pool_tokens_low..=p.pool_tokens_high).contains(&measured),
        }
    }
}

/// The plan of the launch after `--` or in `--launch FILE` for the reading's engine (and role,
/// when the file holds several launches); None when no launch is given.
pub fn plan(a: &VerifyArgs, opts: Option<&Options>, r: &Reading) -> Result<Option<Plan>, String> {
    let Some(opts) = opts.filter(|_| a.predicts()) else {
        return Ok(None);
    };
    let mut outcome = Outcome::default();
    let base = std::env::current_dir().ok();
    if let Some(path) = &a.launch_file {
        let text = crate::input::read_regular(path).map_err(|e| e.to_string())?;
        let file = outcome.sources.add(path.display().to_string(), text);
        outcome.check_file(file, opts, path.parent().or(base.as_deref()));
    } else {
        let file = outcome
            .sources
            .add("<command line>", extract::quote_argv(&a.launch));
        let found = extract::parse_command_line(file, &outcome.sources);
        for l in found.launches {
            outcome.check_launch(l, file, opts, base.as_deref());
        }
    }
    let plans: Vec<&Plan> = outcome
        .launches
        .iter()
        .filter_map(|l| l.plan.as_ref())
        .filter(|p| p.engine == r.engine)
        .collect();
    let pick = plans
        .iter()
        .find(|p| Some(p.role) == r.role)
        .or(plans.first())
        .copied()
        .cloned();
    match pick {
        Some(p) => Ok(Some(p)),
        None => {
            let why = crate::report::render_all(&outcome)
                .into_iter()
                .find(|f| f.level == crate::rules::Level::Deny)
                .map_or_else(
                    || format!("no {} launch found", r.engine.name()),
                    |f| f.message,
                );
            Err(format!("the launch cannot be predicted: {why}"))
        }
    }
}

/// The prediction beside a measured pool.
pub fn compare(p: &Plan, measured: u64) -> Prediction {
    Prediction::new(p, measured)
}
