//! Capacity plans: how many tokens an engine's KV pool will hold on the GPUs it runs on.
//! One file per engine mirrors that engine's own sizing code, per version; this file holds
//! what they share: the plan, its band and assumptions, and the inputs.

mod adapters;
mod links;
mod memo;
mod overrides;
pub mod releases;
pub mod sglang;
pub mod trtllm;
pub mod vllm;
mod weights;

use crate::engine::EngineArgs;
use crate::finding::Finding;
use crate::gpu::GpuSpec;
use crate::launch::Engine;
use crate::model::Geometry;
use crate::source::Loc;
use serde::Serialize;

pub(crate) use links::{switch_fabric, PCIE_ONLY};
pub use memo::Memo;
use weights::online_quant_bytes;
pub use weights::{
    dtype_weights, part_scale, rope_tables, unsplit_share, weights_per_rank_counted,
    weights_per_rank_with_headroom, Headroom, COUNTED_EXCESS, COUNTED_HEADROOM,
};

/// Which half of a deployment a launch serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Prefill and decode in one server.
    Unified,
    Prefill,
    Decode,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Unified => "unified",
            Role::Prefill => "prefill",
            Role::Decode => "decode",
        }
    }
}

/// A quantity the engine measures at start-up, so kvlint can only estimate it: a point value
/// and the range it is believed to lie in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub point: f64,
    pub low: f64,
    pub high: f64,
}

impl Estimate {
    pub fn exact(v: f64) -> Self {
        Estimate {
            point: v,
            low: v,
            high: v,
        }
    }
    /// `v` with a relative uncertainty of `rel` either way.
    pub fn rel(v: f64, rel: f64) -> Self {
        Estimate {
            point: v,
            low: v * (1.0 - rel),
            high: v * (1.0 + rel),
        }
    }
    pub fn range(point: f64, low: f64, high: f64) -> Self {
        Estimate {
            point,
            low: low.min(point),
            high: high.max(point),
        }
    }
}

/// One estimated or defaulted term of a plan and where its value came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assumption {
    pub term: String,
    pub value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
    pub source: String,
}

/// Where the context window a launch advertises comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum ContextSource {
    /// Set by a flag at this place.
    Flag(Loc),
    /// Derived from the model's config.json.
    Model,
    /// vLLM `--max-model-len auto`: the engine fits it to the pool.
    Auto(Loc),
}

/// The KV-pool plan of one launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    pub engine: Engine,
    pub engine_version: String,
    pub role: Role,
    pub model: String,
    pub gpu: String,
    pub gpu_count: u32,
    pub tp: u32,
    pub pp: u32,
    pub dp: u32,
    pub context_length: u64,
    #[serde(skip)]
    pub context_source: ContextSource,
    /// Largest context the model's config allows (rope scaling included).
    pub model_max_context: u64,
    pub kv_cache_dtype: String,
    pub page_size: u32,
    /// KV bytes per token on one GPU rank.
    pub kv_bytes_per_token: u64,
    /// The number the engine logs at start-up (SGLang `#tokens`, vLLM `GPU KV cache size`).
    pub pool_tokens: u64,
    pub pool_tokens_low: u64,
    pub pool_tokens_high: u64,
    /// Tokens one request can hold: what the advertised context is checked against.
    pub usable_tokens: u64,
    pub usable_tokens_low: u64,
    pub usable_tokens_high: u64,
    /// KV bytes per rank (may be negative when the weights do not fit).
    pub budget_bytes: i64,
    /// Weight bytes held by one rank.
    pub weights_bytes: u64,
    /// The memory fraction in force (`--mem-fraction-static` / `--gpu-memory-utilization`).
    pub memory_fraction: f64,
    #[serde(skip)]
    pub memory_fraction_loc: Option<Loc>,
    /// The flag that sets the fraction, as the engine spells it.
    pub memory_fraction_flag: &'static str,
    /// Fraction at which even the low end of the band holds the context (None: no fraction does).
    pub needed_fraction: Option<f64>,
    /// Largest context the low end of the band holds.
    pub max_context_fit: u64,
    pub assumptions: Vec<Assumption>,
}

/// What a plan is made from.
pub struct Inputs<'a> {
    pub args: &'a EngineArgs,
    pub model: &'a Geometry,
    pub gpu: &'a GpuSpec,
    /// GPUs the launch gets, when the input says (else TP × PP × DP is assumed).
    pub gpu_count: Option<u32>,
    /// The launch's source location, for findings without a flag to point at.
    pub at: Loc,
}

/// Builds the plan for a launch, or the findings that say why none can be made. A launch whose
/// release is unknown gets a band over every release it could run (`releases::widen`).
pub fn plan(inp: &Inputs) -> Result<Plan, Vec<Finding>> {
    let overridden = overrides::geometry(inp.args, inp.model)?;
    let with = overridden.as_ref().map(|model| Inputs {
        model,
        args: inp.args,
        gpu: inp.gpu,
        gpu_count: inp.gpu_count,
        at: inp.at,
    });
    let inp = with.as_ref().unwrap_or(inp);
    let point = plan_at(inp)?;
    Ok(match inp.args.could_run.len() {
        0 | 1 => point,
        _ => releases::widen(inp, plan_at, point),
    })
}

/// The plan at the launch's one release.
fn plan_at(inp: &Inputs) -> Result<Plan, Vec<Finding>> {
    if inp.model.compressed.is_some() && inp.args.engine == Engine::Trtllm {
        return Err(vec![compressed_unmodelled(inp)]);
    }
    if inp.model.recurrent.is_some() && inp.args.engine == Engine::Trtllm {
        return Err(vec![recurrent_unmodelled(inp)]);
    }
    if let Some(f) = state_unregistered(inp).or_else(|| attention_free(inp)) {
        return Err(vec![f]);
    }
    match inp.args.engine {
        Engine::Sglang => sglang::plan(inp),
        Engine::Vllm => vllm::plan(inp),
        Engine::Trtllm => trtllm::plan(inp),
    }
}

/// INP008 at the launch's model argument: `why` kvlint cannot plan this model's KV layout here,
/// and what it would `need` to.
fn layout_unmodelled(inp: &Inputs, why: impl Into<String>, need: impl Into<String>) -> Finding {
    let m = inp.model;
    let at = inp.args.get("model").or_else(|| inp.args.get("model_path"));
    Finding::new("INP008", Some(at.map_or(inp.at, |s| s.loc())))
        .var("model", &m.id)
        .var(
            "architecture",
            m.architectures.first().map_or("", String::as_str),
        )
        .var("why", why.into())
        .var("need", need.into())
        .label("KV layout not modelled")
}

/// DeepSeek-V4's compressed pools are modelled for SGLang (capacity/sglang/dsv4.rs) and vLLM
/// (capacity/vllm/dsv4.rs): TensorRT-LLM's plan would read it as plain attention.
fn compressed_unmodelled(inp: &Inputs) -> Finding {
    layout_unmodelled(
        inp,
        "kvlint models its compressed-attention pools for SGLang and vLLM only, not for TensorRT-LLM",
        "TensorRT-LLM's DeepSeek-V4 KV cache manager sizing",
    )
}

/// The Mamba2 / Mamba1 / short-conv / KDA / lightning state (`model::Recurrent`) is sized for
/// SGLang and vLLM only: TensorRT-LLM's plan would leave its state pool out.
fn recurrent_unmodelled(inp: &Inputs) -> Finding {
    layout_unmodelled(
        inp,
        "kvlint sizes its recurrent-state pool for SGLang and vLLM only, not for TensorRT-LLM",
        "TensorRT-LLM's mamba cache manager sizing",
    )
}

/// A hybrid whose architecture this release does not register (Zamba2 and Jamba on SGLang,
/// Bamba on vLLM from 0.24): the engine's Transformers fallback keeps no recurrent state, so no
/// plan of its state pool can stand. The architecture table (model/architectures.rs) says which
/// releases register it.
fn state_unregistered(inp: &Inputs) -> Option<Finding> {
    let m = inp.model;
    let engine = match inp.args.engine {
        Engine::Sglang => "sglang",
        Engine::Vllm => "vllm",
        Engine::Trtllm => return None,
    };
    let arch = m.architectures.first()?;
    if !m.has_state()
        || crate::model::architectures::registered(arch, engine, &inp.args.version) != Some(false)
    {
        return None;
    }
    let name = if engine == "sglang" { "SGLang" } else { "vLLM" };
    let where_registered: Vec<String> = crate::model::architectures::table()
        .get(arch)
        .map(|r| {
            r.engines
                .iter()
                .map(|(e, s)| format!("{e} {}", s.releases))
                .collect()
        })
        .unwrap_or_default();
    Some(layout_unmodelled(
        inp,
        format!(
            "{name} {} does not register it, and a Transformers fallback keeps no recurrent state",
            inp.args.version
        ),
        format!(
            "an engine release that registers it ({})",
            where_registered.join(", ")
        ),
    ))
}

/// A model with no attention layer at all (the pure Mamba models, even where kvlint.toml
/// asserts a layout for them) has no KV pool to set against its context.
fn attention_free(inp: &Inputs) -> Option<Finding> {
    let m = inp.model;
    if m.layers
        .iter()
        .any(|l| *l != crate::model::LayerKind::NoAttention)
    {
        return None;
    }
    Some(layout_unmodelled(
        inp,
        "it has no attention layer, so it keeps no KV cache to size",
        "a check of the state pool's request slots in place of pool tokens",
    ))
}

/// Records assumptions as a plan is built.
#[derive(Default)]
pub struct Notes(pub Vec<Assumption>);

impl Notes {
    pub fn exact(&mut self, term: &str, value: f64, source: impl Into<String>) {
        self.0.push(Assumption {
            term: term.into(),
            value,
            low: None,
            high: None,
            source: source.into(),
        });
    }
    pub fn estimate(&mut self, term: &str, e: Estimate, source: impl Into<String>) {
        let band = e.low != e.high;
        self.0.push(Assumption {
            term: term.into(),
            value: e.point,
            low: band.then_some(e.low),
            high: band.then_some(e.high),
            source: source.into(),
        });
    }
}

/// Integer settings a plan holds in 32 bits: GPU-rank counts (`ranks`, whose product is the
/// world size) and token counts per block or page (`sizes`). The engines read them as Python ints,
/// so no value wraps there; one that does not fit here is one no engine starts with (a process
/// per rank, and one block of 2³² tokens is larger than any GPU's memory). CFG004 then, never
/// a wrapped or defaulted number.
pub fn check_ints(args: &EngineArgs, ranks: &[&str], sizes: &[&str]) -> Result<(), Vec<Finding>> {
    let too_big = |dest: &&str| {
        let s = args.get(dest)?;
        let v = match s.value {
            crate::engine::SettingValue::Int(v) => v,
            _ => return None,
        };
        u32::try_from(v).is_err().then_some((s, v))
    };
    let mut out: Vec<Finding> = ranks
        .iter()
        .chain(sizes)
        .filter_map(too_big)
        .filter(|(_, v)| *v > 0) // 0 and below: engine::startup's positive check says so
        .map(|(s, _)| {
            out_of_range(
                s,
                "at most 4294967295: no engine starts with more ranks or a larger block than that",
            )
        })
        .collect();
    if out.is_empty() {
        let world = ranks
            .iter()
            .filter_map(|d| args.int(d).filter(|v| *v > 0))
            .try_fold(1u32, |w, v| w.checked_mul(u32::try_from(v).ok()?));
        let first = ranks.iter().find_map(|d| args.get(d));
        if let (None, Some(s)) = (world, first) {
            out.push(out_of_range(
                s,
                "a world size (the product of the parallel sizes) of at most 4294967295 GPUs",
            ));
        }
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(out)
    }
}

fn out_of_range(s: &crate::engine::Setting, expected: &str) -> Finding {
    Finding::new("CFG004", Some(s.loc()))
        .var("flag", format!("--{}", s.dest.replace('_', "-")))
        .var("value", crate::engine::value_text(&s.value))
        .var("expected", expected)
}

/// A positive integer setting, else `default`.
pub fn int_or(args: &EngineArgs, dest: &str, default: u32) -> u32 {
    args.int(dest)
        .and_then(|v| u32::try_from(v).ok())
        .filter(|v| *v > 0)
        .unwrap_or(default)
}

/// Rounds down to a multiple of `page` (the engines align pools to whole pages).
pub fn page_floor(tokens: u64, page: u32) -> u64 {
    let page = u64::from(page.max(1));
    tokens / page * page
}

/// Findings for a setting the math needs whose value is a variable nobody resolved: these stop
/// the plan.
pub fn unresolved(args: &EngineArgs, dests: &[&str]) -> Vec<Finding> {
    needed_unknown(args, dests)
        .filter(|s| !s.defaulted)
        .map(unknown_value)
        .collect()
}

/// INP004 for each setting the pool math needs that holds a caller's default: the plan uses the
/// default, and the finding says the caller decides (a default is never a verdict's ground: the
/// compose or script caller may set 1,048,576 where the file says 32,768).
pub fn defaulted(args: &EngineArgs) -> Vec<Finding> {
    let needed = match args.engine {
        Engine::Sglang => sglang::NEEDED,
        Engine::Vllm => vllm::NEEDED,
        Engine::Trtllm => trtllm::NEEDED,
    };
    needed_unknown(args, needed)
        .filter(|s| s.defaulted)
        .map(|s| {
            unknown_value(s).label(format!(
                "planned with {}, what runs when the caller sets nothing",
                crate::engine::value_text(&s.value)
            ))
        })
        .collect()
}

fn needed_unknown<'a>(
    args: &'a EngineArgs,
    dests: &'a [&str],
) -> impl Iterator<Item = &'a crate::engine::Setting> {
    dests
        .iter()
        .filter_map(|d| args.get(d))
        .filter(|s| !s.unresolved.is_empty())
}

fn unknown_value(s: &crate::engine::Setting) -> Finding {
    let flag = match s.dest.strip_prefix("env:") {
        Some(var) => var.to_string(),
        None => format!("--{}", s.dest.replace('_', "-")),
    };
    Finding::new("INP004", Some(s.value_loc))
        .var("flag", flag)
        .var("vars", s.unresolved.join(", "))
        .label("value not known before deploy")
}

/// Bytes per KV element for a KV-cache dtype name shared by the engines.
pub fn kv_dtype_bytes(name: &str) -> Option<f64> {
    match name {
        "bf16" | "bfloat16" | "float16" | "fp16" | "half" => Some(2.0),
        "float32" | "fp32" => Some(4.0),
        "fp8"
        | "fp8_e4m3"
        | "fp8_e5m2"
        | "fp8_inc"
        | "mxfp8"
        | "int8_per_token_head"
        | "fp8_per_token_head"
        | "fp8_ds_mla" => Some(1.0),
        _ => None,
    }
}

/// Bytes per parameter of unquantized weights as loaded: `--dtype` (`float32`/`float`, or a 16-bit
/// type), else the checkpoint's dtype with float32 downcast to bfloat16
/// (vllm/config/model.py::_resolve_auto_dtype "Downcast for float32 models"; sglang
/// srt/configs/model_config.py::_get_and_verify_dtype does the same).
pub fn model_dtype_bytes(args: &EngineArgs, m: &Geometry) -> f64 {
    match args.text("dtype") {
        Some("float32" | "float") => 4.0,
        Some("float16" | "half" | "bfloat16") => 2.0,
        _ if m.dtype == crate::model::Dtype::F32 => 2.0,
        _ => m.dtype.bytes().max(2.0), // quantized checkpoints compute in 16 bits
    }
}

/// Terms of the math (besides TensorRT-LLM's, `trtllm::FITTED_ON`) that are sized from logged
/// data rather than from an engine's code, with the data; the accuracy report lists them.
pub const FITTED_ON: &[&str] = &[
    "weights headroom over a 16- or 8-bit checkpoint's parameter count and an AWQ/GPTQ or Quark \
     4-bit one's layout, +3 % (capacity::COUNTED_HEADROOM): logged weights 0–2.4 % over the \
     count in 36 vLLM startups, 0.05–0.8 % in 4 SGLang ones, 2.9 % for TensorRT-LLM's \
     DeepSeek-R1 FP8 ranks; AWQ and Quark MXFP4 0.6–1.6 % (Gemma 4 and GLM-5.1 on SGLang, \
     Qwen3 14B/32B on vLLM); the low side −0.5 %, where none logs more than 0.02 % under",
    "the same headroom on vLLM and SGLang bounded at 1 % + 0.25 GiB, tighter above 12.5 GiB a \
     rank (capacity::COUNTED_EXCESS): counted 16- or 8-bit ranks of 7.5–214 GiB log at most \
     0.33 GiB over (GLM-5 FP8 TP 8 on SGLang, 0.37 %), GLM-5.1 MXFP4 0.59 GiB of 52.5 and \
     1.26 GiB of 198; a model class whose tower the config does not describe keeps +3 %",
    "SGLang weights headroom over another declared 4-bit layout, +5 % (sglang::budget::\
     WEIGHTS_HEADROOM): logged weights −1.7 % to +3.3 % of the estimate (Kimi K2.5 \
     compressed-tensors, DeepSeek-R1 NVFP4; 0.5.8–0.5.9)",
    "SGLang free-memory baseline on NVIDIA (device context and communicators below CUDA's \
     total), 0.7 GiB (0.35–0.95) on one card or a PCIe group, 1.8 GiB (1.3–3.1) in an NVSwitch \
     TP group (sglang::budget::baseline): public logs' 'Load weight begin. avail mem' read \
     0.51–0.82 GiB below the total on one card (L40S, A100 40GB, RTX 5090, H100, B200, RTX 3090 \
     under WSL2), 0.38–0.71 GiB in PCIe TP groups (A100 PCIe, L4, RTX 3090, RTX 4090), \
     1.71–3.01 GiB in H100, H200 and B200 TP 4–16 groups",
    "vLLM weights headroom over a declared 4-bit layout its loader converts (NVFP4, \
     compressed-tensors, MXFP4), +3 % on CUDA, +10 % on ROCm (vllm::declared_headroom): logged \
     weights +0.2 % to +1.7 % over the estimate in seven NVIDIA launches (0.19–0.23) and +0.3 % \
     for gpt-oss-20b on five cards (0.12), +8.1 % for gpt-oss-20b on one R9700 (0.13, where ROCm \
     counts the allocator's cached blocks)",
    "vLLM profile non-KV memory besides the NCCL buffers, 0.8–1.3× kvlint's estimate (+0.3 GiB) \
     on one GPU or a TP group, 0.6–2.0× on one PCIe-only card, 0.6–1.6× under a pipeline \
     (vllm::non_kv_spread): utilization × total − logged weights − logged KV is 0.93–1.07× the \
     estimate on H100 SXM (17 logs, 0.16–0.19), 0.88–1.30× on one A100 PCIe/L40S/RTX 6000 Ada, \
     1.18–1.23× at TP 4 on RTX PRO 6000 (PCIe, no NCCL buffers in the point), about 2× in one \
     low-confidence L4 log, 0.55× at PP 2",
    "vLLM host-memory growth during the profile run on a unified-memory part (GB10), 3.82 GiB in \
     the point (vllm::UNIFIED_GROWTH_MEDIAN_GIB): the median excess of a public DGX Spark log's \
     non-KV memory over kvlint's discrete-card estimate, over the six vLLM GB10 records \
     (1.45–8.59 GiB; they are tuned-on); the band's low end allows the largest public reading, \
     31.6 GiB",
];

/// Builders for capacity unit tests: models and settings written out by hand from public facts.
#[cfg(test)]
pub(crate) mod testing;
