//! Model geometry: what an engine needs from `config.json` to size the KV cache and the weights.
//! Sources, in the order [`resolve`] tries them: `--model-config` and kvlint.toml `[models]`, a
//! local model directory, the Hugging Face cache, the Hub, the embedded catalog.

use serde::Serialize;

pub mod architectures;
mod cache;
mod catalog;
mod compressed;
mod config;
mod context;
mod hub;
mod layers;
mod load;
mod memo;
mod mixers;
mod nas;
mod overrides;
mod params;
mod quant;
mod raw;
pub mod resolve;
mod state;
mod weight_format;

pub use cache::HubCache;
pub use catalog::{catalog_ids, catalog_lookup, catalog_rows, suggestions, CatalogRow};
pub use compressed::Compressed;
pub use context::{derived_context_length_sglang, derived_max_model_len_vllm};
pub use hub::Hub;
pub use load::{load_config_file, load_model_dir};
pub use memo::Memo;
pub use nas::{Block as NasBlock, Nas};
pub use overrides::{apply as apply_overrides, Semantics};
pub use resolve::{ModelSource, ModelTable, Resolver};
pub use state::{Reader, Recurrent, StateElems, StateShape};

/// Why a model's geometry could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error(transparent)]
    Read(#[from] crate::input::InputError),
    #[error("{path} is not valid JSON: {source}")]
    Json {
        path: String,
        source: serde_json::Error,
    },
    #[error("{file}: {cause}")]
    Invalid { file: String, cause: String },
}

/// Storage type of weights or KV elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    F32,
    Bf16,
    F16,
    Fp8,
    Fp4,
}

impl Dtype {
    pub fn bytes(self) -> f64 {
        match self {
            Dtype::F32 => 4.0,
            Dtype::Bf16 | Dtype::F16 => 2.0,
            Dtype::Fp8 => 1.0,
            Dtype::Fp4 => 0.5,
        }
    }
}

/// Multi-head latent attention (DeepSeek V2/V3, Kimi K2, GLM-5): one latent per token and layer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mla {
    pub kv_lora_rank: u32,
    pub qk_rope_head_dim: u32,
}

/// DeepSeek sparse attention indexer (DeepSeek-V3.2, GLM-5.x).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dsa {
    pub index_head_dim: u32,
    pub index_topk: u32,
    /// Layers with their own indexer keys (`indexer_types[i] != "shared"`).
    pub indexer_layers: u32,
}

/// What one decoder layer does with past tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LayerKind {
    /// Attends to every past token: KV grows with the context.
    Full,
    /// Sliding-window attention over the last `window` tokens.
    Sliding { window: u32 },
    /// Chunked local attention (Llama 4).
    Chunked { size: u32 },
    /// Linear attention / SSM (Gated DeltaNet, Mamba): a fixed state per request.
    Linear,
    /// No attention module (Nemotron-NAS no-op blocks): vLLM keeps no KV for it, SGLang still
    /// sizes its pool for it (`nas.rs`).
    NoAttention,
}

/// KV head layout of sliding-window layers where it differs from the full layers (Gemma 4).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SwaHeads {
    pub num_kv_heads: u32,
    pub head_dim: u32,
    pub v_head_dim: u32,
}

/// Gated DeltaNet / Mamba state geometry (Qwen3-Next).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinearAttn {
    pub num_key_heads: u32,
    pub num_value_heads: u32,
    pub key_head_dim: u32,
    pub value_head_dim: u32,
    pub conv_kernel: u32,
}

/// RoPE scaling as config.json states it (`rope_scaling` or `rope_parameters`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RopeScaling {
    pub rope_type: String,
    pub factor: f64,
    pub original_max_position_embeddings: Option<u64>,
}

/// Weight quantization as the checkpoint declares it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quantization {
    /// `fp8`, `compressed-tensors`, `awq`, `gptq`, `mxfp4`, `quark`, `modelopt`, ...
    pub method: String,
    /// Bits per quantized weight (4 or 8), scales excluded.
    pub weight_bits: u32,
    /// Checkpoint says the KV cache is FP8 (ModelOpt `kv_cache_quant_algo`, compressed-tensors `kv_cache_scheme`).
    pub kv_cache_fp8: bool,
    /// Weights per scale when the config fixes the 4-bit layout (0: one scale per output
    /// channel); None when it leaves the layout to the loader.
    #[serde(skip)]
    pub group_size: Option<u32>,
}

/// A rotary cos/sin table that the attention layers precompute at load time for every
/// position the model allows (`RotaryEmbedding._compute_cos_sin_cache` in SGLang and vLLM):
/// `positions` rows of `width` values, whole on every rank.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RopeTable {
    pub positions: u64,
    pub width: u64,
}

/// Weight bytes of the parts that an engine does not split evenly over its TP ranks, computed
/// from config.json (all ranks together; MTP layers excluded).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WeightParts {
    /// Modules both engines replicate on every TP rank: MLA latent down-projections, DSA
    /// indexer projections, MoE routers, and their norms.
    pub replicated: u64,
    /// The input token embedding.
    pub embedding: u64,
    /// Decoder layers (attention, indexer, MLP, norms).
    pub layers: u64,
    /// The attention share of `layers`.
    pub attention: u64,
    /// The routed experts' share of `layers` (MoE): the only weights every engine splits over all
    /// ranks (expert parallelism) even where it replicates the rest.
    pub routed_experts: u64,
    /// Bytes of each decoder layer where layers differ in size (Nemotron-NAS), for the heaviest
    /// pipeline stage; empty where `layers` splits evenly.
    #[serde(skip)]
    pub layer_bytes: Vec<u64>,
}

/// Where the weight byte count came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WeightsSource {
    /// `model.safetensors.index.json` `metadata.total_size`: measured.
    SafetensorsIndex,
    /// Computed from the parameter count and the dtype or quantization: estimated.
    ParamCount,
}

/// A VLM's vision encoder size (`vision_config`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VisionTower {
    pub layers: u32,
    pub hidden: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Geometry {
    /// Hugging Face id or path the geometry was read for.
    pub id: String,
    /// Where the facts come from (file path, or the catalog entry's public source).
    pub source: String,
    /// Which resolution step found the geometry (set by [`resolve`]).
    pub model_source: Option<ModelSource>,
    pub architectures: Vec<String>,
    pub model_type: String,
    /// `model_type` of the language model (`text_config` of a VLM), else `model_type`.
    pub text_model_type: String,
    /// Decoder layers of the text model (`num_hidden_layers`).
    pub num_layers: u32,
    pub hidden_size: u64,
    pub num_attention_heads: u32,
    /// Total KV heads, read in the engines' alias order (`n_head_kv`, `num_kv_heads`,
    /// `num_key_value_heads`, `multi_query_group_num`, `num_attention_groups`, else attention heads).
    pub num_kv_heads: u32,
    /// `head_dim`, else `hidden_size / num_attention_heads`.
    pub head_dim: u32,
    /// `v_head_dim` for non-MLA models, else `head_dim`.
    pub v_head_dim: u32,
    pub mla: Option<Mla>,
    pub dsa: Option<Dsa>,
    /// One entry per decoder layer.
    pub layers: Vec<LayerKind>,
    pub swa_heads: Option<SwaHeads>,
    pub linear: Option<LinearAttn>,
    /// Mamba2, Mamba1, short-convolution, KDA or lightning-attention state (`state.rs`).
    pub recurrent: Option<Recurrent>,
    /// DeepSeek-V4 compressed attention (`compress_ratios`).
    pub compressed: Option<Compressed>,
    /// Nemotron-NAS per-layer blocks (`block_configs`).
    pub nas: Option<Nas>,
    /// MTP / NextN layers (`num_nextn_predict_layers`).
    pub nextn_layers: u32,
    /// Trailing decoder layers that attend over an earlier layer's KV instead of their own
    /// (Gemma 3n / Gemma 4 `num_kv_shared_layers`); whether an engine skips their cache is its own.
    pub kv_shared_layers: u32,
    /// Context-length keys present in the text config, in file order (`max_position_embeddings`, ...).
    pub length_keys: Vec<(String, u64)>,
    pub rope_scaling: Option<RopeScaling>,
    pub dtype: Dtype,
    pub quantization: Option<Quantization>,
    pub vocab_size: u64,
    /// Total parameters computed from the config (all experts counted).
    pub params: u64,
    /// Parameters of the MTP / NextN layers, not in `params`: engines load them only with
    /// speculative decoding.
    pub nextn_params: u64,
    /// Bytes of all weights on disk (all ranks together).
    pub weight_bytes: u64,
    /// Bytes of the MTP / NextN layers, not in `weight_bytes`.
    pub nextn_weight_bytes: u64,
    pub weight_bytes_source: WeightsSource,
    pub weight_parts: WeightParts,
    /// One entry per distinct rotary setup (full layers, sliding layers, DSA indexer).
    pub rope_tables: Vec<RopeTable>,
    /// Has a vision tower (VLM).
    pub multimodal: bool,
    /// Depth and width of the vision tower, which SGLang's VLM memory heuristic reads.
    pub vision: Option<VisionTower>,
    pub moe: bool,
    /// Shape of the routed experts of an MoE model, which sizes engines' expert workspaces.
    pub experts: Option<RoutedExperts>,
    /// The dense MLP's width (`intermediate_size`, averaged where a list gives one per layer);
    /// 0 when the config gives none.
    pub intermediate: u64,
}

/// Routed experts per MoE layer (`n_routed_experts` / `num_experts` / `num_local_experts`), the
/// width of each (`moe_intermediate_size`, else `intermediate_size`) and how many each token is
/// routed to (`num_experts_per_tok` and its spellings), where the config says.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RoutedExperts {
    pub count: u64,
    pub intermediate: u64,
    pub top_k: Option<u64>,
}

impl Geometry {
    pub fn max_position_embeddings(&self) -> Option<u64> {
        self.length_keys
            .iter()
            .find(|(k, _)| k == "max_position_embeddings")
            .map(|(_, v)| *v)
    }
    /// KV bytes per token of the whole model at 16-bit KV (the engines' default for BF16 and
    /// FP16 checkpoints), before any TP split: the MLA latent plus its rope key per layer, else K
    /// and V heads per attention layer. Sliding and chunked layers count as full (what an engine
    /// allocates without a hybrid pool); linear-attention and no-attention layers hold no
    /// per-token KV; the DSA indexer keys are left out.
    pub fn kv_bytes_per_token(&self) -> u64 {
        let attention = self
            .layers
            .iter()
            .filter(|l| !matches!(l, LayerKind::Linear | LayerKind::NoAttention));
        let per_layer = |kind: &LayerKind| -> u64 {
            match (&self.mla, kind, &self.swa_heads) {
                (Some(m), _, _) => u64::from(m.kv_lora_rank + m.qk_rope_head_dim),
                (None, LayerKind::Sliding { .. } | LayerKind::Chunked { .. }, Some(s)) => {
                    u64::from(s.num_kv_heads) * u64::from(s.head_dim + s.v_head_dim)
                }
                _ => u64::from(self.num_kv_heads) * u64::from(self.head_dim + self.v_head_dim),
            }
        };
        attention.map(per_layer).sum::<u64>() * 2
    }

    /// Layers that keep a per-request state: the recurrent layers, else the `Linear` (Gated
    /// DeltaNet) layers.
    pub fn state_layers(&self) -> u32 {
        self.recurrent.as_ref().map_or_else(
            || {
                self.layers
                    .iter()
                    .filter(|l| **l == LayerKind::Linear)
                    .count() as u32
            },
            |r| r.layers,
        )
    }

    /// A hybrid model: some layers keep a per-request state instead of (or beside) KV.
    pub fn has_state(&self) -> bool {
        self.linear.is_some() || self.recurrent.is_some()
    }

    pub fn full_layers(&self) -> u32 {
        self.layers
            .iter()
            .filter(|l| matches!(l, LayerKind::Full))
            .count() as u32
    }
}
