//! Plans once per distinct launch setup in a run: a Helm render repeats a few setups thousands
//! of times. [`plan`](super::plan) reads the settings' values, never where they are written,
//! so its answer depends only on the engine and release, the settings' values, the model, the
//! GPU and the GPU count. The plan's two places (`context_source`, `memory_fraction_loc`) are
//! each one setting's span or the launch's: they are put back from each launch's own settings.

use super::{ContextSource, Inputs, Plan};
use crate::engine::{Setting, SettingValue};
use crate::finding::Finding;
use crate::gpu::GpuSpec;
use crate::launch::Engine;
use crate::model::Geometry;
use crate::source::Loc;
use crate::version::Version;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

/// Setups remembered per run; more are planned each time, so a hostile input of many distinct
/// setups costs what it did before and holds no more than this.
const CAPACITY: usize = 1024;

/// The plans of one run, by setup.
#[derive(Debug, Default)]
pub struct Memo {
    setups: HashMap<u64, Vec<Setup>>,
    len: usize,
}

/// Where a plan's place comes from.
#[derive(Debug, Clone, PartialEq)]
enum Origin {
    /// The launch's command (`Inputs::at`).
    Launch,
    /// The span of this setting.
    Setting(String),
}

/// One planned setup: what the plan read, and the plan with where its places come from.
#[derive(Debug)]
struct Setup {
    engine: Engine,
    version: Version,
    could_run: Vec<Version>,
    /// (dest, value, unresolved variables) in dest order.
    settings: Vec<(String, SettingValue, Vec<String>)>,
    /// Held so that its address, which identifies it, is not reused during the run.
    model: Arc<Geometry>,
    gpu: GpuSpec,
    gpu_count: Option<u32>,
    plan: Plan,
    context_at: Option<Origin>,
    fraction_at: Option<Origin>,
}

impl Memo {
    /// [`super::plan`] of `inp`, whose model is `model`, remembered for the rest of the run.
    /// A launch that cannot be planned is not remembered: its findings point into it.
    pub fn plan(&mut self, inp: &Inputs, model: &Arc<Geometry>) -> Result<Plan, Vec<Finding>> {
        let same_model = std::ptr::eq(inp.model, Arc::as_ptr(model));
        let key = key(inp);
        let known = self
            .setups
            .get(&key)
            .and_then(|b| b.iter().find(|s| s.matches(inp)));
        if let Some(plan) = known.filter(|_| same_model).and_then(|s| s.replay(inp)) {
            return Ok(plan);
        }
        let plan = super::plan(inp)?;
        if same_model && self.len < CAPACITY {
            if let Some(setup) = Setup::new(inp, model, &plan) {
                self.setups.entry(key).or_default().push(setup);
                self.len += 1;
            }
        }
        Ok(plan)
    }
}

/// A hash of everything [`Setup::matches`] compares.
fn key(inp: &Inputs) -> u64 {
    let mut h = DefaultHasher::new();
    let a = inp.args;
    (a.engine, &a.version, &a.could_run).hash(&mut h);
    for (dest, s) in &a.settings {
        dest.hash(&mut h);
        hash_value(&s.value, &mut h);
        s.unresolved.hash(&mut h);
    }
    (inp.model as *const Geometry).hash(&mut h);
    (&inp.gpu.name, inp.gpu_count).hash(&mut h);
    h.finish()
}

fn hash_value(v: &SettingValue, h: &mut DefaultHasher) {
    std::mem::discriminant(v).hash(h);
    match v {
        SettingValue::Flag(b) => b.hash(h),
        SettingValue::Int(i) => i.hash(h),
        SettingValue::Float(f) => f.to_bits().hash(h),
        SettingValue::Auto => {}
        SettingValue::Text(t) => t.hash(h),
        SettingValue::List(l) => l.hash(h),
    }
}

/// Equal values, floats bit for bit (`-0.0` is not `0.0` where a plan prints it).
fn same_value(a: &SettingValue, b: &SettingValue) -> bool {
    match (a, b) {
        (SettingValue::Float(x), SettingValue::Float(y)) => x.to_bits() == y.to_bits(),
        _ => a == b,
    }
}

impl Setup {
    /// The setup of a planned launch, unless one of the plan's places cannot be told apart.
    fn new(inp: &Inputs, model: &Arc<Geometry>, plan: &Plan) -> Option<Setup> {
        let context_at = match plan.context_source {
            ContextSource::Flag(l) | ContextSource::Auto(l) => Some(origin(inp, l)?),
            ContextSource::Model => None,
        };
        let fraction_at = match plan.memory_fraction_loc {
            Some(l) => Some(origin(inp, l)?),
            None => None,
        };
        let a = inp.args;
        Some(Setup {
            engine: a.engine,
            version: a.version.clone(),
            could_run: a.could_run.clone(),
            settings: a
                .settings
                .iter()
                .map(|(d, s)| (d.clone(), s.value.clone(), s.unresolved.clone()))
                .collect(),
            model: Arc::clone(model),
            gpu: inp.gpu.clone(),
            gpu_count: inp.gpu_count,
            plan: plan.clone(),
            context_at,
            fraction_at,
        })
    }

    /// Whether `inp` is this setup: everything the plan reads is equal.
    fn matches(&self, inp: &Inputs) -> bool {
        let a = inp.args;
        let same_setting = |(d, v, u): &(String, SettingValue, Vec<String>),
                            (dest, s): (&String, &Setting)| {
            d == dest && same_value(v, &s.value) && *u == s.unresolved
        };
        a.engine == self.engine
            && a.version == self.version
            && a.could_run == self.could_run
            && std::ptr::eq(inp.model, Arc::as_ptr(&self.model))
            && inp.gpu_count == self.gpu_count
            && *inp.gpu == self.gpu
            && a.settings.len() == self.settings.len()
            && self
                .settings
                .iter()
                .zip(&a.settings)
                .all(|(m, s)| same_setting(m, s))
    }

    /// The plan with `inp`'s own places.
    fn replay(&self, inp: &Inputs) -> Option<Plan> {
        let mut plan = self.plan.clone();
        if let Some(o) = &self.context_at {
            let at = place(inp, o)?;
            plan.context_source = match plan.context_source {
                ContextSource::Flag(_) => ContextSource::Flag(at),
                ContextSource::Auto(_) => ContextSource::Auto(at),
                ContextSource::Model => ContextSource::Model,
            };
        }
        if let Some(o) = &self.fraction_at {
            plan.memory_fraction_loc = Some(place(inp, o)?);
        }
        Some(plan)
    }
}

/// The one source of place `at`: the launch, or one setting's span.
fn origin(inp: &Inputs, at: Loc) -> Option<Origin> {
    let mut found = (inp.at == at).then_some(Origin::Launch).into_iter().chain(
        inp.args
            .settings
            .iter()
            .filter(|(_, s)| s.loc() == at)
            .map(|(d, _)| Origin::Setting(d.clone())),
    );
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

fn place(inp: &Inputs, o: &Origin) -> Option<Loc> {
    match o {
        Origin::Launch => Some(inp.at),
        Origin::Setting(d) => inp.args.get(d).map(Setting::loc),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::testing::{args, dense};
    use crate::engine::EngineArgs;
    use crate::source::FileId;

    /// `pairs` as one launch whose settings are written from byte `base` on, 100 bytes apart.
    fn launch(engine: Engine, pairs: &[(&str, SettingValue)], base: usize) -> EngineArgs {
        let mut a = args(engine, "0.19.0", pairs);
        if engine == Engine::Sglang {
            a.version = Version::new(0, 5, 20);
        }
        for (i, s) in a.settings.values_mut().enumerate() {
            let at = base + 100 * i;
            s.flag_loc = Loc::new(FileId(0), at..at + 10);
            s.value_loc = Loc::new(FileId(0), at + 11..at + 15);
        }
        a
    }

    fn inputs<'a>(
        a: &'a EngineArgs,
        m: &'a Arc<Geometry>,
        gpu: &'a GpuSpec,
        at: usize,
    ) -> Inputs<'a> {
        Inputs {
            args: a,
            model: m,
            gpu,
            gpu_count: Some(2),
            at: Loc::new(FileId(0), at..at + 50),
        }
    }

    #[test]
    fn a_repeated_setup_is_planned_once_with_each_launchs_own_places() {
        let m = Arc::new(dense(32, 32, 8, 128));
        let gpu = crate::gpu::lookup("H100").cloned().unwrap();
        let cases: [(Engine, Vec<(&str, SettingValue)>); 3] = [
            (
                Engine::Vllm,
                vec![
                    ("max_model_len", SettingValue::Int(32768)),
                    ("gpu_memory_utilization", SettingValue::Float(0.85)),
                    ("tensor_parallel_size", SettingValue::Int(2)),
                ],
            ),
            (Engine::Vllm, vec![("max_model_len", SettingValue::Auto)]),
            (
                Engine::Sglang,
                vec![
                    ("mem_fraction_static", SettingValue::Float(0.8)),
                    ("tp_size", SettingValue::Int(2)),
                ],
            ),
        ];
        for (engine, pairs) in cases {
            let mut memo = Memo::default();
            let (first, again) = (launch(engine, &pairs, 1000), launch(engine, &pairs, 5000));
            let p1 = memo.plan(&inputs(&first, &m, &gpu, 900), &m).unwrap();
            let p2 = memo.plan(&inputs(&again, &m, &gpu, 4900), &m).unwrap();
            assert_eq!(memo.len, 1, "{engine:?}: one setup");
            // The memo answers as planning each launch afresh would, places included.
            assert_eq!(
                p1,
                super::super::plan(&inputs(&first, &m, &gpu, 900)).unwrap()
            );
            assert_eq!(
                p2,
                super::super::plan(&inputs(&again, &m, &gpu, 4900)).unwrap()
            );
            assert_ne!(
                (p1.context_source, p1.memory_fraction_loc),
                (p2.context_source, p2.memory_fraction_loc),
                "{engine:?}: the places differ between the launches"
            );
        }
    }

    #[test]
    fn another_value_model_or_gpu_is_planned_again() {
        let m = Arc::new(dense(32, 32, 8, 128));
        let other_model = Arc::new(dense(32, 32, 8, 128));
        let h100 = crate::gpu::lookup("H100").cloned().unwrap();
        let h200 = crate::gpu::lookup("H200").cloned().unwrap();
        let base = launch(
            Engine::Vllm,
            &[("max_model_len", SettingValue::Int(32768))],
            0,
        );
        let longer = launch(
            Engine::Vllm,
            &[("max_model_len", SettingValue::Int(65536))],
            0,
        );
        let mut memo = Memo::default();
        let runs = [
            (&base, &m, &h100),
            (&longer, &m, &h100),
            (&base, &other_model, &h100),
            (&base, &m, &h200),
        ];
        for (a, model, gpu) in runs {
            let got = memo.plan(&inputs(a, model, gpu, 0), model).unwrap();
            assert_eq!(got, super::super::plan(&inputs(a, model, gpu, 0)).unwrap());
        }
        assert_eq!(memo.len, 4);
    }

    #[test]
    fn the_memo_stays_bounded() {
        let m = Arc::new(dense(32, 32, 8, 128));
        let gpu = crate::gpu::lookup("H100").cloned().unwrap();
        let mut memo = Memo::default();
        for n in 0..CAPACITY as i64 + 20 {
            let a = launch(
                Engine::Vllm,
                &[("max_model_len", SettingValue::Int(1024 + n))],
                0,
            );
            let got = memo.plan(&inputs(&a, &m, &gpu, 0), &m).unwrap();
            assert_eq!(got.context_length, 1024 + n as u64);
        }
        assert_eq!(memo.len, CAPACITY);
    }
}
