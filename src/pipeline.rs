//! The check pipeline: inputs → launches → engine settings → model and GPU → plans → findings.
//! A problem with one launch becomes a finding on that launch; it never hides the others.

use crate::capacity::{self, Inputs};
use crate::deployment::{self, Deployment};
use crate::engine::{self, ParseContext};
use crate::extract;
use crate::finding::Finding;
use crate::gpu::{self, source::Chosen};
use crate::launch::{Engine, Launch};
use crate::model;
pub use crate::outcome::LaunchOutcome;
use crate::parallel;
use crate::rules;
use crate::rules::RuleSettings;
use crate::source::{FileId, Sources};
use crate::suppress::{self, Suppressed};
use crate::version::{EngineVersions, Version};
use std::path::Path;

/// A finding's rule and place (file, start, end), for findings that go one to each launch.
type SaidAt = (&'static str, Option<(usize, usize, usize)>);

/// Settings of a run that apply to every launch.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// The default GPU (`--gpu SPEC`, `$KVLINT_GPU`, kvlint.toml, `webhook --gpu`): used only
    /// when neither the input nor NVML names one.
    pub gpu: Option<gpu::GpuSelection>,
    /// Where `gpu` was given.
    pub gpu_source: gpu::GpuSource,
    /// This node's GPUs when NVML answers: used after the input's own GPU, before the default.
    pub node_gpu: Option<gpu::GpuSelection>,
    /// How models are resolved: `--model-config`, kvlint.toml `[models]`, Hub use.
    pub models: model::Resolver,
    /// `--engine-version V` or `ENGINE=V,...`.
    pub engine_version: Option<EngineVersions>,
    /// Rule levels and parameters from `kvlint.toml`.
    pub rules: RuleSettings,
    /// Threads that read the documents of a large YAML file (`--jobs`); 0 or 1: this thread only.
    pub jobs: usize,
}

/// The result of a run.
#[derive(Debug, Default)]
pub struct Outcome {
    pub sources: Sources,
    pub launches: Vec<LaunchOutcome>,
    pub findings: Vec<Finding>,
    /// Findings hidden by a suppression with a reason.
    pub suppressed: Vec<Suppressed>,
    /// The launches grouped into deployments; filled by `finish`.
    pub deployments: Vec<Deployment>,
    /// Input files read (files an engine `--config` names are not counted).
    pub files_checked: usize,
    /// Models resolved so far in this run, by what the launch asks for (every caller checks an
    /// outcome's launches with one `Options`, so with one resolver).
    models: model::Memo,
    /// Plans so far in this run, by what they depend on.
    plans: capacity::Memo,
}

/// A whole-run failure (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Model(#[from] model::ModelError),
}

impl Outcome {
    /// Extracts and checks every launch of one loaded file.
    pub fn check_file(&mut self, file: FileId, opts: &Options, base_dir: Option<&Path>) {
        self.files_checked += 1;
        let first = self.launches.len();
        // On threads (`--jobs`), each launch is checked as soon as it is read while the others
        // read on, holding the file's text while checking adds the files launches name
        // (`--config`). On one thread, reading all first then checking runs faster (measured:
        // 0.42 against 0.47 s at 10,000 objects): one working set at a time stays in cache.
        let src = self.sources.shared(file);
        let mut later = Vec::new();
        let found = extract::read_each(file, &src, opts.jobs, |launch| match opts.jobs {
            0 | 1 => later.push(launch),
            _ => self.check_read(launch, file, opts, base_dir),
        });
        for launch in later {
            self.check_read(launch, file, opts, base_dir);
        }
        // What reading found inside one launch (INP004 on a `"$@"`, INP001 in its quotes) is
        // that launch's: its verdict says so. Several findings of one rule at one place (a
        // template every role's launch lacks) go one to each launch that reaches it, in order.
        let mut said: std::collections::HashMap<SaidAt, usize> = std::collections::HashMap::new();
        for mut f in found {
            let within = |lo: &LaunchOutcome| {
                let (l, at) = (lo.launch.loc(), f.anchor.or(f.primary));
                at.is_some_and(|a| a.file == l.file && l.start <= a.start && a.end <= l.end)
            };
            let key = (f.rule, f.primary.map(|a| (a.file.0, a.start, a.end)));
            let before = said.get(&key).copied().unwrap_or(0);
            let nth = self.launches[first..]
                .iter()
                .enumerate()
                .filter(|(_, lo)| within(lo))
                .map(|(i, _)| i)
                .take(before + 1)
                .last();
            if let Some(i) = nth {
                said.insert(key, before + 1);
                f.launch = Some(first + i);
                f.object = f
                    .object
                    .or_else(|| self.launches[first + i].launch.object.clone());
            }
            self.findings.push(f);
        }
    }

    /// Checks a launch just read from `file`, with the role its input gives it.
    fn check_read(
        &mut self,
        mut launch: Launch,
        file: FileId,
        opts: &Options,
        base_dir: Option<&Path>,
    ) {
        extract::fill_role(&mut launch, &self.sources);
        self.check_launch(launch, file, opts, base_dir);
    }

    /// After every file of a run is checked: groups the launches into deployments and runs the
    /// rules that compare launches (prefill/decode pairs, GPUs promised twice), on up to `jobs`
    /// threads, the findings in the deployments' order.
    pub fn finish(&mut self, jobs: usize) {
        // A document whose launch is in another file of the run (a Triton `config.pbtxt` and its
        // `1/model.json`) was read there.
        let names: Vec<&str> = self.sources.iter().map(|(_, s)| s.name.as_str()).collect();
        self.findings
            .retain(|f| !extract::by_platform::held_by(f, &names, false));
        // A template's holder in another file of the run (llm-d's BaseConfig) is named there.
        extract::by_platform::base::held_in_run(&mut self.findings, &self.sources);
        self.deployments = deployment::group(&self.launches, &self.sources);
        let (launches, sources) = (&self.launches, &self.sources);
        let evaluate = |ds: &&[Deployment]| -> Vec<Finding> {
            let found = ds
                .iter()
                .flat_map(|d| rules::evaluate_deployment(d, launches, sources));
            found
                .map(|mut f| {
                    let object = f
                        .launch
                        .and_then(|i| launches.get(i)?.launch.object.clone());
                    f.object = f.object.take().or(object);
                    f
                })
                .collect()
        };
        // Deployments a thread takes at a time: one alone costs less than handing it over.
        let chunks: Vec<&[Deployment]> = self.deployments.chunks(64).collect();
        let mut found = Vec::new();
        parallel::for_each_ordered(&chunks, jobs, 16, evaluate, |f| found.extend(f));
        self.findings.extend(found);
    }

    /// Parses, plans and evaluates one launch.
    pub fn check_launch(
        &mut self,
        launch: Launch,
        file: FileId,
        opts: &Options,
        base_dir: Option<&Path>,
    ) {
        let index = self.launches.len();
        let mut findings = Vec::new();
        let (version, version_source) = self.version(&launch, opts, &mut findings);
        let mut cx = ParseContext {
            sources: &mut self.sources,
            base_dir: base_dir.map(Path::to_path_buf),
        };
        let known = version_source != "latest known";
        let parsed = engine::parse(&launch, known.then_some(&version), &mut cx);
        findings.extend(parsed.findings);
        findings.extend(engine::startup::check(&parsed.args));
        findings.extend(capacity::defaulted(&parsed.args));
        let args = parsed.args;
        let model = model::resolve::for_launch(
            &launch,
            &args,
            &opts.models,
            &mut self.models,
            &mut findings,
        );
        let stages = model
            .as_ref()
            .map(|m| engine::startup::check_layers(&args, m.num_layers));
        findings.extend(stages.flatten());
        let chosen = resolve_gpu(&launch, opts, &mut findings);
        let mut plan = None;
        if let (Some(m), Some(g)) = (&model, &chosen) {
            let inputs = Inputs {
                args: &args,
                model: m,
                gpu: &g.spec,
                gpu_count: g.count,
                at: launch.command,
            };
            match self.plans.plan(&inputs, m) {
                Ok(mut p) => {
                    // The engine plans by its own settings; a role only the input gives (a
                    // wrapper flag, a role label, a name) still picks the rules that apply.
                    if p.role == capacity::Role::Unified {
                        p.role = deployment::role_of(&launch, &args);
                    }
                    let subject = rules::eval::Subject {
                        plan: &p,
                        args: &args,
                        model: m,
                        at: launch.command,
                        gpu: &g.spec,
                        settings: &opts.rules,
                    };
                    findings.extend(rules::evaluate(&subject));
                    plan = Some(p);
                }
                Err(f) => findings.extend(f),
            }
        }
        for f in &mut findings {
            f.launch = Some(index);
            f.object = f.object.take().or_else(|| launch.object.clone());
        }
        self.findings.extend(findings);
        self.launches.push(LaunchOutcome {
            launch,
            file,
            args,
            model,
            gpu_source: chosen.as_ref().map(|c| c.source),
            gpu: chosen.map(|c| c.spec),
            plan,
            version_source,
        });
    }

    /// Moves findings covered by a suppression comment or annotation (with a reason) to
    /// `suppressed`, and adds SUP001/SUP002 for suppressions without a reason or without a use.
    /// Findings of rules configured to `allow` are left alone: they are never reported.
    pub fn apply_suppressions(&mut self, settings: &RuleSettings) {
        let all = suppress::collect(&self.sources);
        let findings = std::mem::take(&mut self.findings);
        let visible = |f: &Finding| {
            rules::find(f.rule).is_some_and(|r| settings.level(r) != rules::Level::Allow)
        };
        let applied = suppress::apply(findings, &all, &self.sources, visible);
        self.findings = applied.kept;
        self.suppressed = applied.suppressed;
    }

    /// The engine version the launch runs: `--engine-version`, else the release its image tag names,
    /// else the latest modelled; the second value says which.
    fn version(
        &self,
        launch: &Launch,
        opts: &Options,
        findings: &mut Vec<Finding>,
    ) -> (Version, &'static str) {
        let (oldest, latest) = engine::supported(launch.engine);
        let from_image = launch
            .engine_version
            .as_ref()
            .and_then(|(v, loc)| Some((Version::parse(v)?, *loc)));
        let given = opts
            .engine_version
            .as_ref()
            .and_then(|v| given_version(v, launch.engine));
        let (v, at, source) = match (given, from_image) {
            (Some(v), _) => (v, launch.command, "--engine-version"),
            (None, Some((v, loc))) => (v, loc, "image tag"),
            (None, None) => return (latest, "latest known"),
        };
        // TensorRT-LLM has no per-version table: its math follows the 1.x sources, so any 1.x
        // release is taken as it is; 5.0.0 or 0.x is not silently modelled as 1.x.
        let outside = match launch.engine {
            Engine::Trtllm => v.major != 1,
            _ => v.release() < oldest || v.release() > latest,
        };
        if outside {
            let used = if v < oldest {
                oldest.clone()
            } else {
                latest.clone()
            };
            let latest = match launch.engine {
                Engine::Trtllm => "1.x".to_string(),
                _ => latest.to_string(),
            };
            findings.push(
                Finding::new("INP005", Some(at))
                    .var("engine", launch.engine.name())
                    .var("version", &v)
                    .var("oldest", &oldest)
                    .var("latest", &latest)
                    .var("used", &used),
            );
            return (used, source);
        }
        (v, source)
    }
}

/// Builds the tables every run reads once (rules, engine flag tables, the model and GPU
/// catalogs). `check` calls it on a spare thread while it reads its first input, when the other
/// core would idle; whichever thread needs a table first waits for it rather than building it twice.
pub fn warm_up() {
    rules::all();
    engine::sglang::table();
    engine::vllm::table();
    drop(model::catalog_ids());
    gpu::catalog::embedded_entry("");
}

/// The GPU: what the input names, else NVML on this node, else the user's default
/// (`gpu::source` says why in that order).
fn resolve_gpu(launch: &Launch, opts: &Options, findings: &mut Vec<Finding>) -> Option<Chosen> {
    let fallbacks = gpu::source::Fallbacks {
        node: opts.node_gpu.as_ref(),
        default: opts.gpu.as_ref().map(|g| (g, opts.gpu_source)),
    };
    gpu::source::choose(&launch.placement, launch.command, fallbacks, findings)
}

/// The release `--engine-version` gives this engine: its own `ENGINE=V`, else a bare version when
/// it lies in this engine's supported range, or in no engine's range (then INP005 says so). A bare
/// `0.5.20` is an SGLang release, never applied to vLLM.
pub fn given_version(v: &EngineVersions, engine: Engine) -> Option<Version> {
    if let Some(named) = v.named(engine.name()) {
        return Some(named.clone());
    }
    let bare = v.bare.as_ref()?;
    let in_range = |e: Engine| {
        let (oldest, latest) = engine::supported(e);
        oldest <= bare.release() && bare.release() <= latest
    };
    let any = [Engine::Sglang, Engine::Vllm, Engine::Trtllm]
        .into_iter()
        .any(in_range);
    (in_range(engine) || !any).then(|| bare.clone())
}
