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

use crate::engine::EngineArgs;
use crate::finding::Finding;
use crate::gpu::GpuSpec;
use crate::launch::Engine;
use crate::model::Geometry;
use crate::source::Loc;
use crate::units::GIB;
use serde::Serialize;

pub(crate) use links::{switch_fabric, PCIE_ONLY};
pub use memo::Memo;

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

/// The weight bytes per rank `--dtype` adds (or removes) when an unquantized checkpoint is
/// loaded at another width than it is stored in; quantized weights keep their width.
pub fn dtype_weights(
    args: &EngineArgs,
    m: &Geometry,
    online_quant: Option<&str>,
    ranks: u32,
) -> Option<(Estimate, String)> {
    if m.quantization.is_some() || online_quant.is_some() {
        return None;
    }
    let (stored, loaded) = (m.dtype.bytes(), model_dtype_bytes(args, m));
    if stored == loaded || stored < 2.0 {
        return None;
    }
    let extra = m.weight_bytes as f64 / f64::from(ranks.max(1)) * (loaded / stored - 1.0);
    let why = format!(
        "unquantized weights loaded at {loaded} bytes per parameter (stored at {stored}; --dtype {})",
        args.text("dtype").unwrap_or("auto")
    );
    Some((Estimate::exact(extra), why))
}

/// Bytes of weights a rank holds (`weights`), with the headroom per class of an engine whose
/// logged weights bound it: `declared` over a 4-bit checkpoint priced in the layout its config
/// declares (`group_size`) that the loader converts, `counted` over a 16- or 8-bit checkpoint's
/// parameter count and a 4-bit layout the loader allocates as priced (SGLang:
/// `sglang::budget::WEIGHTS_HEADROOM`, both fitted to the logged weights); online quantization
/// keeps +10 % and an undeclared 4-bit layout +30 %.
pub fn weights_per_rank_with_headroom(
    model: &Geometry,
    online_quant: Option<&str>,
    tp_pp: (u32, u32),
    engine_extras: impl IntoIterator<Item = (Estimate, String)>,
    notes: &mut Notes,
    headroom: Headroom,
) -> Estimate {
    weights(model, online_quant, tp_pp, engine_extras, notes, headroom)
}

/// How far the logged weights may run over an estimate (fractions over a declared 4-bit layout
/// and over a count), and whether the launch builds every module the count holds: a multimodal
/// count includes the vision tower, which some launches skip.
#[derive(Clone, Copy, Debug)]
pub struct Headroom {
    pub declared: f64,
    pub counted: f64,
    pub tower_built: bool,
}

/// Terms of the math (besides TensorRT-LLM's, `trtllm::FITTED_ON`) that are sized from logged
/// data rather than from an engine's code, with the data; the accuracy report lists them.
pub const FITTED_ON: &[&str] = &[
    "weights headroom over a 16- or 8-bit checkpoint's parameter count and an AWQ/GPTQ or Quark \
     4-bit one's layout, +3 % (capacity::COUNTED_HEADROOM): logged weights 0–2.4 % over the \
     count in 36 vLLM startups, 0.05–0.8 % in 4 SGLang ones, 2.9 % for TensorRT-LLM's \
     DeepSeek-R1 FP8 ranks; AWQ and Quark MXFP4 0.6–1.6 % (Gemma 4 and GLM-5.1 on SGLang, \
     Qwen3 14B/32B on vLLM)",
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
     compressed-tensors, MXFP4), +5 % on CUDA, +10 % on ROCm (vllm::declared_headroom): logged \
     weights +0.2 % to +1.7 % over the estimate in seven NVIDIA launches (0.19–0.23), +8.1 % for \
     gpt-oss-20b on one R9700 (0.13, where ROCm counts the allocator's cached blocks)",
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

/// Headroom over a 16- or 8-bit checkpoint's parameter count, fitted to the logged weights (the
/// accuracy report lists it): the count misses the vocabulary padding and small buffers; the
/// logged weights of such startups run 0–2.4 % over it on vLLM (36 logs), 0.05–0.8 % on SGLang
/// (Qwen3-8B, Qwen3-32B, GLM-5 FP8), 2.9 % on TensorRT-LLM's DeepSeek-R1 FP8 ranks.
pub const COUNTED_HEADROOM: f64 = 0.03;

/// `weights_per_rank` for engines whose logged weights match a 16- or 8-bit checkpoint's
/// parameter count: +3 % headroom instead of +10 %. vLLM and TensorRT-LLM load such a checkpoint
/// at the dtype config.json gives; the count misses only the embedding's padding to 64 rows per
/// rank (vLLM `VocabParallelEmbedding`, DEFAULT_VOCAB_PADDING_SIZE) and small buffers. The logged
/// weights of 36 such vLLM startups run 0–2.4 % over the count, TensorRT-LLM's DeepSeek-R1 FP8
/// ranks 2.9 %. Fitted to data: `COUNTED_HEADROOM`.
pub fn weights_per_rank_counted(
    model: &Geometry,
    online_quant: Option<&str>,
    tp_pp: (u32, u32),
    engine_extras: impl IntoIterator<Item = (Estimate, String)>,
    notes: &mut Notes,
) -> Estimate {
    weights(
        model,
        online_quant,
        tp_pp,
        engine_extras,
        notes,
        // TensorRT-LLM's multimodal launches are not modelled apart: the tower may be skipped.
        Headroom {
            declared: 0.10,
            counted: COUNTED_HEADROOM,
            tower_built: false,
        },
    )
}

/// Bytes of weights a rank holds: the checkpoint (or its online-quantized form) split over
/// TP × PP, plus the modules every TP rank holds whole (`WeightParts::replicated`), plus what
/// the engine's own model code adds (`engine_extras`, bytes per rank with their reasons). A
/// 4-bit checkpoint whose config fixes the layout (`Quantization::group_size`) is priced per
/// weight with its scales and zero points as the engines allocate them (AWQ/GPTQ packed int32
/// values, fp16 scales and packed zeros per group; MXFP4 one e8m0 scale per 32, NVFP4 one fp8
/// scale per 16); over every engine's 4-bit records the logged weights run at most 8.4 % over
/// the estimate (DeepSeek-R1 NVFP4 on SGLang 0.5.9) and
/// 9.2 % for gpt-oss-20b on vLLM, whose padding `mxfp4_padding` adds to the high end. A 4-bit
/// checkpoint whose config leaves the layout to the loader (bitsandbytes, unknown methods)
/// keeps +30 %.
fn weights(
    model: &Geometry,
    online_quant: Option<&str>,
    (tp, pp): (u32, u32),
    engine_extras: impl IntoIterator<Item = (Estimate, String)>,
    notes: &mut Notes,
    headroom: Headroom,
) -> Estimate {
    use crate::model::WeightsSource;
    let four_bit = model
        .quantization
        .as_ref()
        .is_some_and(|q| q.weight_bits <= 4);
    let declared_layout = model
        .quantization
        .as_ref()
        .is_some_and(|q| q.group_size.is_some());
    let bytes = model.weight_bytes as f64;
    let (total, high, counted, how) = match online_quant.and_then(|q| online_quant_bytes(model, q)) {
        Some(bytes) => (
            bytes,
            0.10,
            false,
            "online quantization of the checkpoint's parameters",
        ),
        None => match model.weight_bytes_source {
            WeightsSource::SafetensorsIndex => (
                bytes,
                0.03,
                false,
                "model.safetensors.index.json total_size",
            ),
            WeightsSource::ParamCount if four_bit && declared_layout && allocated_as_priced(model) => (
                bytes,
                headroom.counted,
                true,
                "parameter count from config.json at 4 bits in the layout its quantization_config declares, which the loader allocates as priced",
            ),
            WeightsSource::ParamCount if four_bit && declared_layout => (
                bytes,
                headroom.declared,
                false,
                "parameter count from config.json at 4 bits in the layout its quantization_config declares",
            ),
            WeightsSource::ParamCount if four_bit => (
                bytes,
                0.30,
                false,
                "parameter count from config.json at 4 bits",
            ),
            WeightsSource::ParamCount => (
                bytes,
                headroom.counted,
                true,
                "parameter count from config.json × dtype/quantization",
            ),
        },
    };
    let (tp, pp) = (f64::from(tp.max(1)), f64::from(pp.max(1)));
    let replicated = unsplit_share(
        model.weight_parts.replicated as f64 * part_scale(model, online_quant),
        tp,
        pp,
    );
    let per = total / (tp * pp) + replicated;
    let pad = match online_quant {
        None => mxfp4_padding(model, tp, pp),
        _ => 0.0,
    };
    // What the count may hold that the engine does not build: a vision tower a text-only launch
    // skips, modules its model class drops. A checkpoint counted from its config whose launch
    // builds every counted tensor (text-only, or its tower built) never logs under the count
    // (−0.02 % at worst over 30 vLLM and SGLang startups), so it keeps −1 %; the rest −2 % (a
    // multimodal Qwen3.6 logged 0.9 % under on vLLM).
    let under = if counted && (!model.multimodal || headroom.tower_built) {
        0.99
    } else {
        0.98
    };
    let mut e = Estimate::range(per, per * under, per * (1.0 + high) + pad);
    let ranks = tp * pp;
    let mut how = match ranks as u64 {
        1 => format!("{how}, on one rank"),
        n => format!("{how}, split over {n} ranks"),
    };
    if replicated >= GIB / 100.0 {
        how += &format!(
            ", plus {:.2} GiB of modules every TP rank holds whole (MLA down-projections, indexers, routers)",
            replicated / GIB
        );
    }
    for (x, why) in engine_extras {
        e = Estimate::range(e.point + x.point, e.low + x.low, e.high + x.high);
        let sign = if x.point < 0.0 { "less" } else { "plus" };
        how += &format!(", {sign} {:.2} GiB: {why}", x.point.abs() / GIB);
    }
    notes.estimate("weights_bytes_per_rank", e, how);
    e
}

/// A 4-bit checkpoint whose weights the loaders allocate exactly as kvlint prices them
/// (`model::weight_format`), with nothing of a conversion left when the free memory is read:
/// - AWQ/GPTQ: packed int32 values, an fp16 scale and a packed zero point per group and column
///   (SGLang `layers/quantization/awq/schemes/awq_marlin.py :: AWQMarlinLinearScheme.
///   create_weights`, vLLM `quantization/awq_marlin.py :: AWQMarlinLinearMethod.create_weights`);
///   the Marlin repack replaces each with a tensor of the same size and adds a per-layer
///   workspace of a few KiB (SGLang `hardware_backend/gpu/quantization/awq_kernels.py ::
///   AWQMarlinLinearKernel.process_weights_after_loading`);
/// - Quark MXFP4: packed uint8 values and one e8m0 scale per 32 (`quark/schemes/
///   quark_w4a4_mxfp4.py :: QuarkW4A4MXFP4.create_weights`); the MoE's ROCm shuffle of values
///   and scales swaps in tensors of the same shape (`quark_w4a4_mxfp4_moe.py ::
///   QuarkW4A4MXFp4MoE.process_weights_after_loading`).
///
/// SGLang reads the free memory after emptying the allocator's cache (`utils/common.py ::
/// get_available_gpu_memory`), so the replaced tensors do not count. Such a checkpoint gets the
/// headroom of a counted 16- or 8-bit one: its logged weights run 0.6–1.6 % over the estimate
/// (Gemma 4 AWQ and GLM-5.1 MXFP4 on SGLang 0.5.10–0.5.12, Qwen3-14B/32B AWQ on vLLM). The
/// other 4-bit formats keep the engine's own headroom: their loaders convert (NVFP4 scale
/// swizzling, compressed-tensors' MoE repacks) and their logs run up to 3.3 % over.
fn allocated_as_priced(model: &Geometry) -> bool {
    model.quantization.as_ref().is_some_and(|q| {
        matches!(
            q.method.as_str(),
            "awq" | "awq_marlin" | "gptq" | "gptq_marlin" | "quark"
        )
    })
}

/// Bytes per rank an MXFP4 (`quant_method: mxfp4`, gpt-oss) MoE may gain from the kernels'
/// tile padding, for the band's high end: vLLM `fused_moe/layer.py ::
/// maybe_roundup_hidden_size` rounds the hidden size up to 128 or 256 and `mxfp4.py ::
/// Mxfp4MoEMethod.create_weights` the per-rank intermediate size to 64, 128 or 256, by backend
/// (SGLang `layers/quantization/mxfp4.py` likewise); the bound takes 256 for both.
fn mxfp4_padding(model: &Geometry, tp: f64, pp: f64) -> f64 {
    let (Some(q), Some(ex)) = (&model.quantization, &model.experts) else {
        return 0.0;
    };
    let per_rank = (ex.intermediate as f64 / tp).ceil();
    if q.method != "mxfp4" || per_rank <= 0.0 || model.hidden_size == 0 {
        return 0.0;
    }
    let up = |x: f64| (x / 256.0).ceil() * 256.0 / x;
    let grow = up(model.hidden_size as f64) * up(per_rank) - 1.0;
    model.weight_parts.routed_experts as f64 / (tp * pp) * grow
}

/// What a rank holds beyond its even share of `bytes` when the module is whole on every TP rank
/// of its pipeline stage.
pub fn unsplit_share(bytes: f64, tp: f64, pp: f64) -> f64 {
    bytes / pp * (1.0 - 1.0 / tp)
}

/// The rotary tables every rank builds at load, at `elem` bytes per value, as a weights term:
/// both engines measure them with the weights. Negligible for most models; gigabytes for a
/// model that allows millions of positions (Llama 4 Scout: 10M × 128).
pub fn rope_tables(model: &Geometry, elem: f64) -> Option<(Estimate, String)> {
    let values: u64 = model
        .rope_tables
        .iter()
        .map(|t| t.positions * t.width)
        .sum();
    let bytes = values as f64 * elem;
    (bytes >= GIB / 100.0).then(|| {
        (
            Estimate::exact(bytes),
            format!(
                "rotary cos/sin tables for {} positions",
                model
                    .rope_tables
                    .iter()
                    .map(|t| t.positions)
                    .max()
                    .unwrap_or(0)
            ),
        )
    })
}

/// Factor from the checkpoint's bytes of a `WeightParts` entry to its bytes once loaded:
/// online quantization shrinks the linear layers along with the whole model.
pub fn part_scale(model: &Geometry, online_quant: Option<&str>) -> f64 {
    match online_quant.and_then(|q| online_quant_bytes(model, q)) {
        Some(bytes) if model.weight_bytes > 0 => bytes / model.weight_bytes as f64,
        _ => 1.0,
    }
}

/// Weight bytes after `--quantization fp8`-style online quantization of a 16-bit checkpoint:
/// linear layers go to 8 bits, embeddings and the LM head stay in 16 bits.
fn online_quant_bytes(model: &Geometry, method: &str) -> Option<f64> {
    let bits = match method {
        "fp8" | "fbgemm_fp8" | "modelopt" | "ptpc_fp8" => 8.0,
        _ => return None,
    };
    if model.quantization.is_some() {
        return None; // already quantized: the checkpoint's bytes stand
    }
    let embed = (model.vocab_size * model.hidden_size) as f64 * 2.0;
    let linear = (model.params as f64 - embed).max(0.0);
    Some(linear * bits / 8.0 + embed * 2.0)
}

/// Builders for capacity unit tests: models and settings written out by hand from public facts.
#[cfg(test)]
pub(crate) mod testing;
