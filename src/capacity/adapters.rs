//! Memory SGLang and vLLM take before they size the KV pool for LoRA slots and for a
//! speculative-decoding draft model: weight-like terms added to the weights, and the draft's
//! own KV bytes per token, which share the pool's budget.

use super::Estimate;
use crate::engine::{EngineArgs, SettingValue};
use crate::finding::Finding;
use crate::launch::Engine;
use crate::model::{catalog_lookup, Geometry};
use crate::version::Version;

/// LoRA slot buffers per rank, with where the numbers came from; `None` without LoRA.
///
/// Both engines allocate, per slot and layer, an A buffer `rank × c × in` and a B buffer
/// `out × rank` for every targeted linear module, at model load (before the pool is profiled).
/// Column-parallel modules (qkv, gate_up; `c` = 3 and 2 stacked slices) split `out` over TP
/// ranks, row-parallel ones (o, down) split `in`:
/// SGLang srt/lora/mem_pool.py::LoRAMemoryPool.get_lora_A_shape / get_lora_B_shape (0.5.23);
/// vLLM lora/layers/base_linear.py::BaseLinearLayerWithLoRA.create_lora_weights (o, down:
/// `(max_loras, 1, rank, input_size_per_partition)` and `(max_loras, 1, output_size, rank)`),
/// column_parallel_linear.py::MergedColumnParallelLinearWithLoRA.create_lora_weights (gate_up,
/// and qkv through MergedQKVParallelLinearWithLoRA: one A `(max_loras, 1, rank, hidden)` and one
/// B `(max_loras, 1, slice_per_partition, rank)` per slice, the K and V slices being
/// `num_kv_heads × head_size` of the rank, at least one head (0.11.2 and 0.33.0 alike).
pub fn lora(args: &EngineArgs, m: &Geometry, tp: u32) -> Option<(Estimate, String)> {
    let lora = Lora::of(args, m)?;
    let per_rank = |targets: &[Module], rank: f64| {
        let dims = Dims::of(m, tp, &lora);
        let per_layer: f64 = targets.iter().map(|t| dims.params(*t)).sum();
        let vocab = lora.vocab.map_or(0.0, |v| v.params(m.hidden_size as f64));
        lora.slots * rank * (per_layer * f64::from(m.num_layers) + vocab) * lora.bytes
            + lora.extra_vocab(m)
    };
    let e = Estimate::range(
        per_rank(&lora.targets.1, lora.rank.1),
        per_rank(&lora.targets.0, lora.rank.0),
        per_rank(&lora.targets.2, lora.rank.2),
    );
    Some((e, lora.how))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Module {
    Qkv,
    O,
    GateUp,
    Down,
}

const ALL: [Module; 4] = [Module::Qkv, Module::O, Module::GateUp, Module::Down];
const ATTENTION: [Module; 2] = [Module::Qkv, Module::O];

/// What a launch asks of LoRA: slots, rank and targeted modules as (low, point, high).
struct Lora {
    slots: f64,
    rank: (f64, f64, f64),
    targets: (Vec<Module>, Vec<Module>, Vec<Module>),
    /// Bytes per buffer element (`--lora-dtype`).
    bytes: f64,
    /// vLLM `--fully-sharded-loras`: column-parallel A split on rank, row-parallel B on `out`.
    fully_sharded: bool,
    /// vLLM: KV slices are whole heads of the rank (replicated when TP exceeds the KV heads).
    kv_heads_per_rank: bool,
    /// vLLM wraps the fused experts: gate_up / down buffers for each local expert.
    per_expert: bool,
    /// vLLM embedding and LM-head buffers, where the model class declares `embedding_modules`.
    vocab: Option<VocabLora>,
    /// vLLM up to 0.11: `--lora-extra-vocab-size` rows per slot (default 256).
    extra_vocab: Option<f64>,
    how: String,
}

/// Vocabulary rows of the embedding's A buffer and of the LM head's B buffer (full vocabulary on
/// every rank), and which of the two are wrapped.
#[derive(Clone, Copy)]
struct VocabLora {
    embed_rows: Option<f64>,
    head_rows: Option<f64>,
}

impl VocabLora {
    /// Elements per slot and unit of rank. vLLM 0.33
    /// lora/layers/vocab_parallel_embedding.py::VocabParallelEmbeddingWithLoRA.create_lora_weights:
    /// A `(max_loras, org_vocab_size, rank)`, B `(max_loras, 1, embedding_dim, rank)`;
    /// logits_processor.py::LogitsProcessorWithLoRA.create_lora_weights: A `(max_loras, 1, rank,
    /// hidden)`, B `(max_loras, 1, vocab_size, rank)`.
    fn params(&self, hidden: f64) -> f64 {
        self.embed_rows.map_or(0.0, |v| v + hidden) + self.head_rows.map_or(0.0, |v| v + hidden)
    }
}

/// Model classes whose `embedding_modules` name `embed_tokens` (or `wte`) and `lm_head` in vLLM
/// 0.33.0 (vllm/model_executor/models/*.py); with no `--lora-target-modules`,
/// lora/utils.py::get_supported_lora_modules adds them, so both are wrapped. Cohere names only
/// `embed_tokens`. Subclasses that inherit the attribute under another name are not listed.
const VLLM_VOCAB_LORA: [&str; 28] = [
    "ApertusForCausalLM",
    "ExaoneForCausalLM",
    "Exaone4ForCausalLM",
    "ExaoneMoeForCausalLM",
    "FalconH1ForCausalLM",
    "GraniteForCausalLM",
    "GraniteMoeForCausalLM",
    "GraniteMoeHybridForCausalLM",
    "GraniteMoeSharedForCausalLM",
    "HyperCLOVAXForCausalLM",
    "JambaForCausalLM",
    "K2HorizonForCausalLM",
    "Lfm2ForCausalLM",
    "Lfm2MoeForCausalLM",
    "LlamaForCausalLM",
    "MiniCPMForCausalLM",
    "EagleMiniCPMForCausalLM",
    "MixtralForCausalLM",
    "MossAudioModel",
    "NemotronForCausalLM",
    "NemotronHForCausalLM",
    "DeciLMForCausalLM",
    "Param2MoEForCausalLM",
    "PhiMoEForCausalLM",
    "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM",
    "SolarForCausalLM",
    "CohereForCausalLM",
];

impl Lora {
    fn of(args: &EngineArgs, m: &Geometry) -> Option<Lora> {
        match args.engine {
            Engine::Vllm => Self::vllm(args, m),
            Engine::Sglang => Self::sglang(args),
            Engine::Trtllm => None,
        }
    }

    /// vllm/config/lora.py::LoRAConfig: `max_loras` 1, `max_lora_rank` 16, `lora_dtype` auto
    /// (the model dtype); every supported module is wrapped unless `--lora-target-modules`
    /// names some.
    fn vllm(args: &EngineArgs, m: &Geometry) -> Option<Lora> {
        if !args.flag("enable_lora") {
            return None;
        }
        let slots = positive(args, "max_loras").unwrap_or(1.0);
        let rank = positive(args, "max_lora_rank").unwrap_or(16.0);
        let targets = named_targets(args).unwrap_or_else(|| ALL.to_vec());
        let old = args.version.release() < Version::new(0, 12, 0);
        let extra_vocab = old.then(|| positive(args, "lora_extra_vocab_size").unwrap_or(256.0));
        let lora_dtype = args.text("lora_dtype").unwrap_or("auto");
        let fp32 = |d: &str| matches!(d, "float32" | "float");
        let bytes =
            if fp32(lora_dtype) || (lora_dtype == "auto" && args.text("dtype").is_some_and(fp32)) {
                4.0
            } else {
                2.0
            };
        Some(Lora {
            slots,
            rank: (rank, rank, rank),
            targets: (targets.clone(), targets.clone(), targets),
            bytes,
            fully_sharded: args.flag("fully_sharded_loras"),
            kv_heads_per_rank: true,
            per_expert: true,
            vocab: vllm_vocab(args, m, extra_vocab.unwrap_or(0.0)),
            extra_vocab,
            how: format!("{slots} LoRA slot(s) of rank {rank} (--max-loras, --max-lora-rank)"),
        })
    }

    /// sglang/srt/arg_groups/fields/lora.py: `max_loras_per_batch` 8; without
    /// `--max-lora-rank` / `--lora-target-modules` both come from the adapters in
    /// `--lora-paths`, which kvlint does not read: a band over common ranks and targets.
    fn sglang(args: &EngineArgs) -> Option<Lora> {
        if !args.flag("enable_lora") && args.get("lora_paths").is_none() {
            return None;
        }
        let slots = positive(args, "max_loras_per_batch").unwrap_or(8.0);
        let given = positive(args, "max_lora_rank");
        let rank = given.map_or((8.0, 16.0, 256.0), |r| (r, r, r));
        let targets = match named_targets(args) {
            Some(t) => (t.clone(), t.clone(), t),
            None => (ATTENTION.to_vec(), ALL.to_vec(), ALL.to_vec()),
        };
        let how = match given {
            Some(r) => format!("{slots} LoRA slot(s) of rank {r} (--max-loras-per-batch, --max-lora-rank)"),
            None => format!("{slots} LoRA slot(s); rank and target modules come from the adapters, which kvlint does not read: rank 8 to 256 assumed"),
        };
        Some(Lora {
            slots,
            rank,
            targets,
            bytes: 2.0, // the model's 16-bit dtype
            fully_sharded: false,
            kv_heads_per_rank: false,
            per_expert: false,
            vocab: None,
            extra_vocab: None,
            how,
        })
    }

    fn extra_vocab(&self, m: &Geometry) -> f64 {
        // vLLM 0.11.2 embeddings_tensors `(max_loras, lora_extra_vocab_size, hidden)` of the
        // embedding (vocal_parallel_embedding.py) and of the logits processor, model dtype.
        self.extra_vocab.map_or(0.0, |rows| {
            self.slots * rows * m.hidden_size as f64 * 2.0 * self.bytes
        })
    }
}

/// The embedding and LM-head buffers vLLM makes for this model, if any. Up to 0.11 the
/// embedding's A also holds the extra vocabulary and the head's B is padded to 256 rows
/// (0.11.2 vocal_parallel_embedding.py / logits_processor.py create_lora_weights).
fn vllm_vocab(args: &EngineArgs, m: &Geometry, extra: f64) -> Option<VocabLora> {
    let names = lora_names(args);
    let class = m.architectures.first().map(String::as_str).unwrap_or("");
    let declared = VLLM_VOCAB_LORA.contains(&class);
    let wrapped = |name: &str| {
        declared
            && match &names {
                None => name != "lm_head" || class != "CohereForCausalLM",
                Some(n) => n.iter().any(|x| x == name),
            }
    };
    let vocab = m.vocab_size as f64;
    let embed = (wrapped("embed_tokens") || wrapped("wte")).then_some(vocab + extra);
    let head_rows = if extra > 0.0 {
        ((vocab + extra) / 256.0).ceil() * 256.0
    } else {
        vocab
    };
    let head = wrapped("lm_head").then_some(head_rows);
    (embed.is_some() || head.is_some()).then_some(VocabLora {
        embed_rows: embed,
        head_rows: head,
    })
}

fn positive(args: &EngineArgs, dest: &str) -> Option<f64> {
    args.int(dest).filter(|v| *v > 0).map(|v| v as f64)
}

fn lora_names(args: &EngineArgs) -> Option<Vec<String>> {
    match &args.get("lora_target_modules")?.value {
        SettingValue::List(l) => Some(l.clone()),
        SettingValue::Text(t) => Some(vec![t.clone()]),
        _ => None,
    }
}

/// `--lora-target-modules` as the packed modules the buffers are made for; `all` (SGLang) is
/// every one.
fn named_targets(args: &EngineArgs) -> Option<Vec<Module>> {
    let mut out: Vec<Module> = Vec::new();
    for n in lora_names(args)? {
        let m: &[Module] = match n.as_str() {
            "all" => &ALL,
            "q_proj" | "k_proj" | "v_proj" | "qkv_proj" => &[Module::Qkv],
            "o_proj" => &[Module::O],
            "gate_proj" | "up_proj" | "gate_up_proj" => &[Module::GateUp],
            "down_proj" => &[Module::Down],
            _ => &[],
        };
        out.extend(
            m.iter()
                .filter(|x| !out.contains(x))
                .copied()
                .collect::<Vec<_>>(),
        );
    }
    (!out.is_empty()).then_some(out)
}

/// Module widths on one rank.
struct Dims {
    hidden: f64,
    q: f64,
    /// K (or V) slice width on one rank.
    kv_rank: f64,
    inter: f64,
    /// Expert copies of the MLP buffers (1 for dense models).
    experts: f64,
    tp: f64,
    fully_sharded: bool,
}

impl Dims {
    fn of(m: &Geometry, tp: u32, lora: &Lora) -> Dims {
        let bytes = if m.params > 0 {
            (m.weight_bytes as f64 / m.params as f64).max(1.0)
        } else {
            2.0
        };
        let tp_f = f64::from(tp.max(1));
        let kv_heads = f64::from(m.num_kv_heads);
        // vLLM QKVParallelLinear: `num_kv_heads = max(1, total_num_kv_heads // tp_size)`.
        let kv_rank = if lora.kv_heads_per_rank {
            (kv_heads / tp_f).floor().max(1.0) * f64::from(m.head_dim)
        } else {
            kv_heads * f64::from(m.head_dim) / tp_f
        };
        let experts = match m.experts {
            Some(e) if lora.per_expert => e.count as f64,
            _ => 1.0,
        };
        Dims {
            hidden: m.hidden_size as f64,
            q: f64::from(m.num_attention_heads) * f64::from(m.head_dim),
            kv_rank,
            inter: mlp_width(m, bytes),
            experts,
            tp: tp_f,
            fully_sharded: lora.fully_sharded,
        }
    }

    /// A and B elements of one module per slot and unit of rank. With `fully_sharded_loras`
    /// the column-parallel A and the row-parallel B are split too (vLLM 0.33
    /// base_linear.py / column_parallel_linear.py `divide(..., tp_size)`).
    fn params(&self, module: Module) -> f64 {
        let (h, tp) = (self.hidden, self.tp);
        let a = if self.fully_sharded { tp } else { 1.0 };
        match module {
            Module::Qkv => 3.0 * h / a + self.q / tp + 2.0 * self.kv_rank,
            Module::O => self.q / tp + h / a,
            // vLLM lora/layers/fused_moe.py::FusedMoEWithLoRA._create_lora_a_weights /
            // _create_lora_b_weights: w13 A `(max_loras, local_experts, rank, hidden)` and B
            // `(.., local_experts, intermediate_per_partition, rank)` per slice (2), w2 A
            // `(.., local_experts, rank, intermediate_per_partition)` and B `(.., hidden, rank)`.
            Module::GateUp => self.experts * (2.0 * h / a + 2.0 * self.inter / tp),
            Module::Down => self.experts * (self.inter / tp + h / a),
        }
    }
}

/// The dense MLP width: the routed experts' width for MoE models, else what the layers' weight
/// bytes leave after attention (gate, up and down: 3 × hidden × width per layer).
fn mlp_width(m: &Geometry, bytes_per_param: f64) -> f64 {
    if let Some(e) = m.experts {
        return e.intermediate as f64;
    }
    let p = &m.weight_parts;
    let mlp = p.layers.saturating_sub(p.attention) as f64 / bytes_per_param;
    mlp / f64::from(m.num_layers.max(1)) / (3.0 * m.hidden_size.max(1) as f64)
}

/// A draft model's memory per rank: weights, and KV bytes per token that share the budget.
pub struct Draft {
    pub weights: f64,
    pub kv_per_token: f64,
    pub how: String,
}

/// vLLM `--speculative-config` (vllm/config/speculative.py::SpeculativeConfig): n-gram and
/// suffix methods load nothing; MTP methods run the target's own MTP layers; any other method
/// loads `model`, whose attention layers join the KV cache spec (V1
/// gpu_model_runner.py::get_kv_cache_spec covers the drafter's layers too). The draft runs at
/// `draft_tensor_parallel_size`, else the target's TP. An unknown draft model is INP002.
pub fn vllm_draft(
    args: &EngineArgs,
    m: &Geometry,
    tp: u32,
    kv_elem: f64,
) -> Result<Option<Draft>, Vec<Finding>> {
    let Some(s) = args
        .get("speculative_config")
        .filter(|s| s.unresolved.is_empty())
    else {
        return Ok(None);
    };
    let SettingValue::Text(text) = &s.value else {
        return Ok(None);
    };
    let Ok(cfg) = serde_json::from_str::<serde_json::Value>(text) else {
        return Ok(None); // argparse's json.loads: the parse already refused it
    };
    let method = cfg.get("method").and_then(|v| v.as_str()).unwrap_or("");
    let model = cfg.get("model").and_then(|v| v.as_str());
    if matches!(method, "ngram" | "ngram_gpu" | "suffix") || (method.is_empty() && model.is_none())
    {
        return Ok(None);
    }
    let dtp = cfg
        .get("draft_tensor_parallel_size")
        .and_then(serde_json::Value::as_u64)
        .and_then(|v| u32::try_from(v).ok())
        .unwrap_or(tp);
    if method.ends_with("mtp") || model.is_none() {
        return Ok(mtp(m, tp, kv_elem));
    }
    separate(model.unwrap_or_default(), m, dtp, kv_elem, s.loc()).map(Some)
}

/// SGLang `--speculative-draft-model-path` when it names a model other than the target (EAGLE
/// heads, standalone drafts); `None` keeps the target's own MTP layers.
pub fn sglang_draft(
    args: &EngineArgs,
    m: &Geometry,
    tp: u32,
    kv_elem: f64,
) -> Result<Option<Draft>, Vec<Finding>> {
    let Some(s) = args
        .get("speculative_draft_model_path")
        .filter(|s| s.unresolved.is_empty())
    else {
        return Ok(None);
    };
    match &s.value {
        SettingValue::Text(path)
            if *path != m.id && args.get("speculative_algorithm").is_some() =>
        {
            separate(path, m, tp, kv_elem, s.loc()).map(Some)
        }
        _ => Ok(None),
    }
}

fn mtp(m: &Geometry, tp: u32, kv_elem: f64) -> Option<Draft> {
    (m.nextn_layers > 0).then(|| Draft {
        weights: m.nextn_weight_bytes as f64 / f64::from(tp.max(1)),
        kv_per_token: kv_per_rank(m, tp, kv_elem) * f64::from(m.nextn_layers)
            / f64::from(m.num_layers.max(1)),
        how: format!("{} MTP layer(s) of the target", m.nextn_layers),
    })
}

fn separate(
    id: &str,
    target: &Geometry,
    tp: u32,
    kv_elem: f64,
    at: crate::source::Loc,
) -> Result<Draft, Vec<Finding>> {
    let Some(d) = catalog_lookup(id) else {
        return Err(vec![Finding::new("INP002", Some(at))
            .var("model", format!("{id} (the draft model of {})", target.id))
            .var(
                "tried",
                " (draft models are looked up in the embedded catalog)",
            )
            .var("suggest", "")]);
    };
    Ok(Draft {
        weights: d.weight_bytes as f64 / f64::from(tp.max(1)),
        kv_per_token: kv_per_rank(&d, tp, kv_elem),
        how: format!("draft model {} ({} layers)", d.id, d.num_layers),
    })
}

/// KV bytes per token of a whole model on one rank: heads split over TP (at least one per
/// rank), an MLA latent on every rank.
fn kv_per_rank(g: &Geometry, tp: u32, kv_elem: f64) -> f64 {
    let split = if g.mla.is_some() {
        1
    } else {
        tp.clamp(1, g.num_kv_heads.max(1))
    };
    g.kv_bytes_per_token() as f64 / 2.0 * kv_elem / f64::from(split)
}
