//! The check pipeline: inputs → launches → engine settings → model and GPU → plans → findings.
//! A problem with one launch becomes a finding on that launch; it never hides the others.

use crate::capacity::{self, Inputs, Plan};
use crate::config::RuleSettings;
use crate::deployment::{self, Deployment};
use crate::engine::{self, EngineArgs, ParseContext};
use crate::extract;
use crate::finding::Finding;
use crate::gpu::{self, GpuSpec};
use crate::launch::{Engine, Launch};
use crate::model::{self, Geometry};
use crate::rules;
use crate::source::{FileId, Sources};
use crate::suppress::{self, Suppressed};
use crate::version::{EngineVersions, Version};
use std::path::{Path, PathBuf};

/// Settings of a run that apply to every launch.
#[derive(Debug, Default, Clone)]
pub struct Options {
    /// `--gpu SPEC` (or `--gpu auto`: this node's GPUs).
    pub gpu: Option<gpu::GpuSelection>,
    /// This node's GPUs when NVML answers and no `--gpu` was given: used after the input's labels.
    pub node_gpu: Option<gpu::GpuSelection>,
    /// `--model-config PATH` (a config.json or a model directory).
    pub model_config: Option<PathBuf>,
    /// `--engine-version V` or `ENGINE=V,...`.
    pub engine_version: Option<EngineVersions>,
    /// Rule levels and parameters from `kvlint.toml`.
    pub rules: RuleSettings,
}

/// Everything kvlint learned about one launch.
#[derive(Debug)]
pub struct LaunchOutcome {
    pub launch: Launch,
    pub file: FileId,
    pub args: EngineArgs,
    pub model: Option<Geometry>,
    pub gpu: Option<GpuSpec>,
    pub plan: Option<Plan>,
    /// Where the engine version came from: `--engine-version`, `image tag`, or `latest known`.
    pub version_source: &'static str,
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
        let found = extract::extract(file, &self.sources);
        self.findings.extend(found.findings);
        for launch in found.launches {
            self.check_launch(launch, file, opts, base_dir);
        }
    }

    /// After every file of a run is checked: groups the launches into deployments and runs the
    /// rules that compare launches (prefill/decode pairs, GPUs promised twice).
    pub fn finish(&mut self) {
        self.deployments = deployment::group(&self.launches, &self.sources);
        for d in &self.deployments {
            let mut found = rules::evaluate_deployment(d, &self.launches, &self.sources);
            for f in &mut found {
                let object = f
                    .launch
                    .and_then(|i| self.launches.get(i)?.launch.object.clone());
                f.object = f.object.take().or(object);
            }
            self.findings.extend(found);
        }
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
        let parsed = engine::parse(&launch, Some(&version), &mut cx);
        findings.extend(parsed.findings);
        findings.extend(engine::startup::check(&parsed.args));
        let args = parsed.args;
        let model = resolve_model(&launch, &args, opts, &mut findings);
        let stages = model
            .as_ref()
            .map(|m| engine::startup::check_layers(&args, m.num_layers));
        findings.extend(stages.flatten());
        let gpu = resolve_gpu(&launch, opts, &mut findings);
        let mut plan = None;
        if let (Some(m), Some(g)) = (&model, &gpu) {
            let count = gpu_count(&launch, opts);
            let inputs = Inputs {
                args: &args,
                model: m,
                gpu: g,
                gpu_count: count,
                at: launch.command,
            };
            match capacity::plan(&inputs) {
                Ok(p) => {
                    let subject = rules::eval::Subject {
                        plan: &p,
                        args: &args,
                        model: m,
                        at: launch.command,
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
            gpu,
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

/// The release `--engine-version` gives this engine: its own `ENGINE=V`, else a bare version when
/// it lies in this engine's supported range, or in no engine's range (then INP005 says so). A bare
/// `0.5.20` is an SGLang release, never applied to vLLM.
fn given_version(v: &EngineVersions, engine: Engine) -> Option<Version> {
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

/// The model the launch serves, from `--model-config`, a local directory, or the catalog.
fn resolve_model(
    launch: &Launch,
    args: &EngineArgs,
    opts: &Options,
    findings: &mut Vec<Finding>,
) -> Option<Geometry> {
    let dest = match launch.engine {
        Engine::Sglang => "model_path",
        Engine::Vllm | Engine::Trtllm => "model",
    };
    let setting = args.get(dest);
    let id = setting.and_then(|s| match &s.value {
        engine::SettingValue::Text(t) if s.unresolved.is_empty() => Some(t.clone()),
        _ => None,
    });
    let at = setting.map_or(launch.command, |s| s.value_loc);
    if let Some(path) = &opts.model_config {
        return match load_model_path(path, id.as_deref()) {
            Ok(g) => Some(g),
            Err(e) => {
                findings.push(Finding::new("INP002", Some(at)).var("model", e.to_string()));
                None
            }
        };
    }
    let Some(id) = id else {
        match setting {
            Some(s) if !s.unresolved.is_empty() => {
                findings.extend(capacity::unresolved(args, &[dest]))
            }
            _ => findings
                .push(Finding::new("INP002", Some(at)).var("model", "(the launch names none)")),
        }
        return None;
    };
    let local = Path::new(&id);
    if local.join("config.json").is_file() {
        match model::load_model_dir(local) {
            Ok(g) => return Some(g),
            Err(e) => {
                findings.push(Finding::new("INP002", Some(at)).var("model", format!("{id} ({e})")));
                return None;
            }
        }
    }
    model::catalog_lookup(&id).or_else(|| {
        findings.push(Finding::new("INP002", Some(at)).var("model", &id));
        None
    })
}

/// Loads `--model-config`: a config.json file or a model directory.
pub fn load_model_path(path: &Path, id: Option<&str>) -> Result<Geometry, model::ModelError> {
    let mut g = if path.is_dir() {
        model::load_model_dir(path)?
    } else {
        model::load_config_file(path)?
    };
    if let Some(id) = id {
        g.id = id.to_string();
    }
    Ok(g)
}

/// The GPU: `--gpu`, else what the input says.
fn resolve_gpu(launch: &Launch, opts: &Options, findings: &mut Vec<Finding>) -> Option<GpuSpec> {
    if let Some(sel) = &opts.gpu {
        return Some(sel.spec.clone());
    }
    match &launch.placement.gpu {
        Some((name, loc)) => gpu::lookup(name).cloned().or_else(|| {
            findings.push(
                Finding::new("INP003", Some(*loc))
                    .var("detail", format!(": {name} is not in the catalog")),
            );
            None
        }),
        None if opts.node_gpu.is_some() => opts.node_gpu.as_ref().map(|s| s.spec.clone()),
        None => {
            findings.push(Finding::new("INP003", Some(launch.command)).var(
                "detail",
                " (no --gpu given, the input names none and this machine has no NVIDIA GPU)",
            ));
            None
        }
    }
}

fn gpu_count(launch: &Launch, opts: &Options) -> Option<u32> {
    let p = &launch.placement;
    match (p.gpus_per_pod, p.pods) {
        (Some(g), pods) => Some(g * pods.unwrap_or(1)),
        _ => opts.gpu.as_ref().and_then(|s| s.count),
    }
}
