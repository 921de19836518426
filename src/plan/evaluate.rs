//! Plans a layout by checking its launch line exactly as `kvlint capacity --gpu GPUxN
//! --engine-version V -- ARGV` does: the same reader, parser, model and GPU resolution, plan and
//! rules, so the pool and verdict of a listed layout are `capacity`'s by construction.

use super::{Layout, PlanError, Row, Verdict};
use crate::extract;
use crate::gpu::{GpuSelection, GpuSource, GpuSpec};
use crate::launch::Engine;
use crate::model::Geometry;
use crate::pipeline::{Options, Outcome};
use crate::report;
use crate::version::{EngineVersions, Version};
use std::sync::Arc;

/// Rules whose finding means the engine refuses the launch itself, not its pool: such a
/// layout is not offered.
const REFUSED: &[&str] = &["PAR001", "CFG001", "CFG002", "CFG004", "CFG005"];

/// Findings that stop any plan of the request: `capacity` exits 2 on them.
const UNKNOWN: &[&str] = &["INP002", "INP003", "INP004", "INP008"];

/// Checks launch lines, sharing one run's model and plan memos.
pub struct Planner {
    opts: Options,
    outcome: Outcome,
}

impl Planner {
    /// `opts` as `capacity` builds them; the GPU is each layout's own, never this node's.
    pub fn new(mut opts: Options) -> Self {
        opts.node_gpu = None;
        Planner {
            opts,
            outcome: Outcome::default(),
        }
    }

    /// Checks `argv` on `count` GPUs of `gpu` at `version`; the index of its launch outcome,
    /// None when the line is no launch.
    fn check(
        &mut self,
        argv: &[String],
        engine: Engine,
        version: &Version,
        gpu: &GpuSpec,
        count: u32,
    ) -> Option<usize> {
        self.opts.gpu = Some(GpuSelection {
            spec: gpu.clone(),
            count: Some(count),
        });
        self.opts.gpu_source = GpuSource::Flag;
        self.opts.engine_version = Some(EngineVersions {
            per_engine: vec![(engine.name().to_string(), version.clone())],
            bare: None,
        });
        let o = &mut self.outcome;
        let file = o.sources.add("<plan>", extract::quote_argv(argv));
        let launch = extract::parse_command_line(file, &o.sources)
            .launches
            .into_iter()
            .next()?;
        o.check_launch(launch, file, &self.opts, None);
        Some(o.launches.len() - 1)
    }

    /// Rule ids `check` reported on launch `i`.
    fn rules(&self, i: usize) -> Vec<&'static str> {
        let mut rules: Vec<&'static str> = self
            .outcome
            .findings
            .iter()
            .rev()
            .take_while(|f| f.launch == Some(i))
            .map(|f| f.rule)
            .collect();
        rules.reverse();
        rules
    }

    /// The model's geometry as `check` resolves it for `engine`, or the message `capacity`
    /// exits 2 with (unknown model, GPU or architecture, a value it cannot know).
    pub fn model(
        &mut self,
        model: &str,
        engine: Engine,
        version: &Version,
        gpu: &GpuSpec,
    ) -> Result<Arc<Geometry>, PlanError> {
        let probe = Layout {
            engine,
            version: version.clone(),
            role: crate::capacity::Role::Unified,
            model: model.to_string(),
            gpu: gpu.clone(),
            tp: 1,
            pp: 1,
            dp_attention: false,
            kv_cache_dtype: None,
            memory_fraction: None,
            context: None,
        };
        let i = self
            .check(&probe.argv(), engine, version, gpu, 1)
            .ok_or_else(|| PlanError(format!("{model:?} does not make a launch line")))?;
        let rules = self.rules(i);
        if let Some(rule) = UNKNOWN.iter().find(|r| rules.contains(r)) {
            return Err(self.unknown(i, rule));
        }
        self.outcome.launches[i]
            .model
            .clone()
            .ok_or_else(|| PlanError(format!("{model}: no model geometry")))
    }

    /// The message (and for an unknown model, the help) of `rule` on launch `i`, as `capacity`
    /// prints it before exiting 2.
    fn unknown(&self, i: usize, rule: &str) -> PlanError {
        let rendered = report::render_all(&self.outcome);
        let f = rendered
            .iter()
            .find(|f| f.rule == rule && f.finding.launch == Some(i));
        PlanError(match f {
            Some(f) if rule == "INP002" => format!("{}; {}", f.message, f.help),
            Some(f) => f.message.clone(),
            None => format!("{rule} on the plan's launch line"),
        })
    }

    /// Plans one layout; None when the engine would refuse it or no plan can be made.
    pub fn evaluate(&mut self, layout: &Layout) -> Option<Row> {
        let argv = layout.argv();
        let i = self.check(
            &argv,
            layout.engine,
            &layout.version,
            &layout.gpu,
            layout.gpus(),
        )?;
        let rules = self.rules(i);
        if rules.iter().any(|r| REFUSED.contains(r)) {
            return None;
        }
        let plan = self.outcome.launches[i].plan.clone()?;
        Some(Row {
            layout: layout.clone(),
            argv,
            verdict: Verdict::of(&plan),
            plan,
            rules,
        })
    }

    pub fn evaluate_all(&mut self, layouts: &[Layout]) -> Vec<Row> {
        layouts.iter().filter_map(|l| self.evaluate(l)).collect()
    }
}
