//! `kvlint plan`: the layouts that hold a context, ranked, each with its launch line.

use super::{exit, options, Failure, Hardware, Run, UsageError};
use crate::capacity::Role;
use crate::engine;
use crate::gpu::{self, GpuSource};
use crate::launch::Engine;
use crate::plan::{self, explore, Request, NODE_GPUS};
use crate::report::plan as print;
use crate::version::{EngineVersions, Version};
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The model: a Hugging Face id the catalog, the local cache or the Hub knows.
    #[arg(long, value_name = "MODEL", required_unless_present = "launch")]
    pub model: Option<String>,
    /// GPU type to plan on, repeatable (`h200`, `H100-80GB`); a count (`h200x16`) sets
    /// `--max-gpus` when that is not given. With `--launch`: the GPU of launches whose input names none.
    #[arg(long, value_name = "SPEC", required_unless_present = "launch")]
    pub gpu: Vec<String>,
    #[arg(long, value_enum, default_value_t = EngineChoice::All)]
    pub engine: EngineChoice,
    /// Engine release, per engine (`sglang=0.5.23,vllm=0.19.0`) or bare (`0.5.23`). Default: the
    /// latest release kvlint models, per engine.
    #[arg(long, value_name = "V")]
    pub engine_version: Option<String>,
    /// The context one request must hold, in tokens. Default: the model's own limit.
    #[arg(long, value_name = "N")]
    pub context: Option<u64>,
    #[arg(long, value_enum, default_value_t = RoleChoice::Unified)]
    pub role: RoleChoice,
    /// Most GPUs a layout may take. Default: one node, 8 (or the count `--gpu` gives).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub max_gpus: Option<u32>,
    /// KV cache dtypes to try besides the engine's default (`fp8_e4m3`, `fp8`; `auto` is the
    /// default). Default: FP8 where the GPU computes in FP8 (compute capability 8.9 and up).
    #[arg(long, value_name = "D")]
    pub kv_cache_dtype: Vec<String>,
    /// Memory fractions to try besides the engine's default (`--mem-fraction-static`,
    /// `--gpu-memory-utilization`, `--kv_cache_free_gpu_memory_fraction`).
    #[arg(long, value_name = "F", value_parser = fraction)]
    pub memory_fraction: Vec<f64>,
    #[arg(long, value_enum, default_value_t = PlanFormat::Human)]
    pub format: PlanFormat,
    /// Explore around each launch in FILE (any input `check` reads): the longest context its
    /// layout holds, the smallest change that makes it fit, and the layouts of its model and GPU
    /// that fit.
    #[arg(long, value_name = "FILE", conflicts_with = "model")]
    pub launch: Option<PathBuf>,
    /// The model's config.json, or a model directory. Overrides the embedded catalog.
    #[arg(long, value_name = "PATH")]
    pub model_config: Option<PathBuf>,
    /// Never ask the Hugging Face Hub for a model's config.json.
    #[arg(long)]
    pub offline: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    Sglang,
    Vllm,
    Trtllm,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleChoice {
    Prefill,
    Decode,
    Unified,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    Human,
    Json,
    Markdown,
}

fn fraction(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
        _ => Err(format!("{s:?} is not a fraction in (0, 1]")),
    }
}

/// The engines to plan, each at the release `--engine-version` gives it (as `check` reads that
/// flag), else the latest modelled.
fn engines(a: &PlanArgs) -> Result<Vec<(Engine, Version)>, UsageError> {
    let given = match &a.engine_version {
        Some(v) => Some(
            EngineVersions::parse(v).map_err(|e| UsageError(format!("--engine-version: {e}")))?,
        ),
        None => None,
    };
    let chosen = match a.engine {
        EngineChoice::Sglang => vec![Engine::Sglang],
        EngineChoice::Vllm => vec![Engine::Vllm],
        EngineChoice::Trtllm => vec![Engine::Trtllm],
        EngineChoice::All => vec![Engine::Sglang, Engine::Vllm, Engine::Trtllm],
    };
    Ok(chosen
        .into_iter()
        .map(|e| {
            let v = given
                .as_ref()
                .and_then(|g| crate::pipeline::given_version(g, e))
                .unwrap_or_else(|| engine::supported(e).1);
            (e, v)
        })
        .collect())
}

fn hardware(a: &PlanArgs) -> Hardware {
    Hardware {
        gpu: a.gpu.first().cloned(),
        gpu_source: GpuSource::Flag,
        model_config: a.model_config.clone(),
        engine_version: a.engine_version.clone(),
        offline: a.offline,
    }
}

pub(super) fn run(a: PlanArgs) -> Run {
    let opts = options(&hardware(&a), None)?;
    if let Some(file) = &a.launch {
        let base = Request {
            model: String::new(),
            gpus: Vec::new(),
            engines: Vec::new(),
            context: a.context,
            role: Role::Unified,
            max_gpus: a.max_gpus.unwrap_or(NODE_GPUS),
            kv_cache_dtypes: a.kv_cache_dtype.clone(),
            memory_fractions: a.memory_fraction.clone(),
        };
        let found = explore::explore(file, &base, &opts).map_err(|e| UsageError(e.to_string()))?;
        match a.format {
            PlanFormat::Json => println!("{:#}", print::json::explore(&found)),
            PlanFormat::Human => print!("{}", print::human::explore(&found)),
            PlanFormat::Markdown => print!("{}", print::markdown::explore(&found)),
        }
        return Ok(match found.iter().all(|l| l.fits()) {
            true => exit::CLEAN,
            false => exit::FINDINGS,
        });
    }
    let mut gpus = Vec::new();
    let mut counted = None;
    for spec in &a.gpu {
        let sel = gpu::parse_spec(spec).map_err(|e| UsageError(e.to_string()))?;
        counted = counted.max(sel.count);
        gpus.push(sel.spec);
    }
    let req = Request {
        model: a.model.clone().unwrap_or_default(),
        gpus,
        engines: engines(&a)?,
        context: a.context,
        role: match a.role {
            RoleChoice::Prefill => Role::Prefill,
            RoleChoice::Decode => Role::Decode,
            RoleChoice::Unified => Role::Unified,
        },
        max_gpus: a.max_gpus.or(counted).unwrap_or(NODE_GPUS),
        kv_cache_dtypes: a.kv_cache_dtype.clone(),
        memory_fractions: a.memory_fraction.clone(),
    };
    let report = plan::plan(&req, &opts).map_err(|e| Failure::Usage(UsageError(e.0)))?;
    match a.format {
        PlanFormat::Json => println!("{:#}", print::json::render(&report)),
        PlanFormat::Human => print!("{}", print::human::render(&report)),
        PlanFormat::Markdown => print!("{}", print::markdown::render(&report)),
    }
    Ok(match report.fits() {
        true => exit::CLEAN,
        false => exit::FINDINGS,
    })
}
