//! Parameter count and weight bytes computed from `config.json`.
//!
//! The count walks the decoder layer by layer (attention or linear attention, DSA indexer,
//! dense MLP or routed + shared experts), adds embeddings and an untied `lm_head`, and, for
//! VLMs, an approximate vision tower. MTP / NextN layers are counted apart: engines load them
//! only with speculative decoding. Each quantizable matrix is priced by the checkpoint's
//! quantization under the module's name as the engines build it (`qkv_proj`, `o_proj`; a fused
//! module is matched through its checkpoint shards, see `weight_format`); embeddings, norms,
//! routers and vision towers stay in the checkpoint dtype.

use serde_json::Value;

use super::raw::{as_uint, num_experts, Cfg};
use super::weight_format::WeightFormat;
use super::{Geometry, LayerKind, ModelError, NasBlock, Recurrent, WeightParts};

pub(crate) struct Counts {
    pub params: u64,
    pub nextn_params: u64,
    pub weight_bytes: u64,
    pub nextn_weight_bytes: u64,
    pub parts: WeightParts,
}

pub(crate) fn count(g: &Geometry, c: &Cfg) -> Result<Counts, ModelError> {
    let fmt = WeightFormat::read(c, g.dtype)?;
    let shape = Shape::read(c, g)?;
    let mut main = Tally::new(&fmt);
    shape.embeddings(c, &mut main)?;
    let mut layer_bytes = Vec::new();
    for (i, kind) in g.layers.iter().enumerate() {
        match g.nas.as_ref().and_then(|n| n.blocks.get(i)) {
            Some(b) => layer_bytes.push(shape.nas_layer(i as u64, b, &mut main).ceil() as u64),
            None => shape.layer(i as u64, *kind, &mut main),
        }
    }
    main.dense(vision_params(c, g.hidden_size)?);
    let mut mtp = Tally::new(&fmt);
    for j in 0..u64::from(g.nextn_layers) {
        let h = g.hidden_size;
        // DeepSeek MTP module: a decoder layer plus `eh_proj` (2h → h) and three norms; it
        // shares the target's embedding and head (SGLang `deepseek_nextn.py`).
        shape.layer(u64::from(g.num_layers) + j, LayerKind::Full, &mut mtp);
        mtp.dense(2 * h * h + 3 * h);
    }
    Ok(Counts {
        params: main.params,
        nextn_params: mtp.params,
        weight_bytes: main.bytes.ceil() as u64,
        nextn_weight_bytes: mtp.bytes.ceil() as u64,
        parts: WeightParts {
            replicated: main.replicated.ceil() as u64,
            embedding: main.embedding.ceil() as u64,
            layers: main.layers.ceil() as u64,
            attention: main.attention.ceil() as u64,
            routed_experts: main.routed_experts.ceil() as u64,
            layer_bytes,
        },
    })
}

struct Tally<'f> {
    fmt: &'f WeightFormat,
    params: u64,
    bytes: f64,
    /// Bytes of modules every TP rank holds whole (see `WeightParts::replicated`).
    replicated: f64,
    embedding: f64,
    layers: f64,
    attention: f64,
    routed_experts: f64,
}

impl<'f> Tally<'f> {
    fn new(fmt: &'f WeightFormat) -> Self {
        Tally {
            fmt,
            params: 0,
            bytes: 0.0,
            replicated: 0.0,
            embedding: 0.0,
            layers: 0.0,
            attention: 0.0,
            routed_experts: 0.0,
        }
    }
    /// Bytes that the calls in `f` add.
    fn measure(&mut self, f: impl FnOnce(&mut Self)) -> f64 {
        let before = self.bytes;
        f(self);
        self.bytes - before
    }
    /// A module that the engines replicate on every TP rank instead of splitting it.
    fn replicated(&mut self, f: impl FnOnce(&mut Self)) {
        self.replicated += self.measure(f);
    }
    /// Weights that stay in the checkpoint dtype (norms, routers, embeddings, vision).
    fn dense(&mut self, n: u64) {
        self.params += n;
        self.bytes += n as f64 * self.fmt.dense;
    }
    /// A linear layer's weights, quantized unless the checkpoint skips `module`.
    fn linear(&mut self, module: &str, n: u64) {
        self.params += n;
        self.bytes += n as f64 * self.fmt.bytes_per_weight(module);
    }
    /// A gated MLP under `prefix`: the fused `gate_up_proj` (h → 2 × inter) and `down_proj`.
    fn gated_mlp(&mut self, prefix: &str, h: u64, inter: u64) {
        self.linear(&format!("{prefix}.gate_up_proj"), 2 * h * inter);
        self.linear(&format!("{prefix}.down_proj"), h * inter);
    }
}

/// The text model's shape, as far as the parameter count needs it.
struct Shape {
    h: u64,
    heads: u64,
    kv: u64,
    head_dim: u64,
    v_head_dim: u64,
    swa: Option<(u64, u64, u64)>,
    mla: Option<MlaDims>,
    indexer: Option<Indexer>,
    linear: Option<(u64, u64, u64, u64, u64)>,
    /// Qwen3-Next gated attention doubles `q_proj`.
    gated_q: bool,
    attn_bias: bool,
    mlp: Mlp,
    recurrent: Option<Recurrent>,
    /// Falcon-H1: a Mamba2 mixer beside the attention of every layer.
    mixer_everywhere: bool,
    /// Nemotron-H: each layer is one block ('M', '*', 'E' or '-'), see `nemotron_layer`.
    blocks: Option<Vec<char>>,
    /// Nemotron-H's MLP width and shared-expert width (relu² MLPs: up and down only).
    nemotron_inter: (u64, u64),
    /// Nemotron-H's `moe_latent_size`: routed experts work in that width between two
    /// replicated projections (vLLM `nemotron_h.py :: fc1_latent_proj`, `fc2_latent_proj`).
    moe_latent: Option<u64>,
    /// Zamba2's shared blocks (see `zamba2_layer`).
    zamba2: Option<Zamba2>,
    /// Plamo2: four norms per layer and its own Mamba mixer (`mixers::plamo2`).
    plamo2: bool,
}

/// vLLM `zamba2.py`: `num_mem_blocks` shared attention + MLP blocks, cycled over the hybrid
/// layers, each hybrid layer with a LoRA on the MLP (and on q, k, v when
/// `use_shared_attention_adapter`) of rank `adapter_rank`.
struct Zamba2 {
    inter: u64,
    rank: u64,
    attn_adapter: bool,
    /// The first `num_mem_blocks` hybrid layers, where the shared blocks are counted.
    shared_on: Vec<u64>,
}

struct MlaDims {
    q_lora: u64,
    kv_lora: u64,
    nope: u64,
    rope: u64,
    v: u64,
}

struct Indexer {
    heads: u64,
    dim: u64,
    q_in: u64,
    /// `indexer_types`: layers marked "shared" reuse another layer's top-k and hold no indexer.
    shared: Vec<bool>,
}

struct Mlp {
    experts: u64,
    dense_inter: u64,
    /// Llama 4 dense layers use `intermediate_size_mlp`.
    dense_inter_nonmoe: u64,
    expert_inter: u64,
    shared_inter: u64,
    shared_gate: bool,
    shared_name: &'static str,
    /// Gemma 4 MoE layers keep a dense MLP next to the experts.
    dense_with_moe: bool,
    first_dense: u64,
    freq: u64,
    sparse_step: u64,
    only_dense: Vec<u64>,
    layer_types: Option<Vec<bool>>,
    /// Jamba: experts where `i % expert_layer_period == expert_layer_offset`.
    period: Option<(u64, u64)>,
}

/// Whether the attention's q projection also emits the output gate: vLLM's and SGLang's
/// `Qwen3NextAttention`, which Qwen3-Next and Qwen3.5/3.6 share (vLLM 0.23.0
/// `models/qwen3_5.py` builds it; `models/qwen3_next.py :: Qwen3NextAttention.__init__` sizes
/// `qkv_proj` with `num_heads × (1 + attn_output_gate)`, `attn_output_gate` defaulting to true).
fn gated_q(c: &Cfg, model_type: &str) -> bool {
    let next_attention = ["qwen3_next", "qwen3_5"]
        .iter()
        .any(|t| model_type.starts_with(t));
    next_attention && c.flag("attn_output_gate") != Some(false)
}

impl Shape {
    fn read(c: &Cfg, g: &Geometry) -> Result<Shape, ModelError> {
        let mla = match &g.mla {
            Some(m) => Some(MlaDims {
                q_lora: c.uint_or("q_lora_rank", 0)?,
                kv_lora: u64::from(m.kv_lora_rank),
                rope: u64::from(m.qk_rope_head_dim),
                nope: u64::from(g.head_dim - m.qk_rope_head_dim.min(g.head_dim)),
                v: u64::from(g.v_head_dim),
            }),
            None => None,
        };
        let indexer = match &g.dsa {
            Some(d) => Some(Indexer {
                heads: c.uint_or("index_n_heads", 64)?,
                dim: u64::from(d.index_head_dim),
                q_in: c
                    .uint("q_lora_rank")?
                    .filter(|r| *r > 0)
                    .unwrap_or(g.hidden_size),
                shared: str_list(c, "indexer_types")
                    .map(|l| l.iter().map(|t| t == "shared").collect())
                    .unwrap_or_default(),
            }),
            None => None,
        };
        let linear = g.linear.as_ref().map(|l| {
            let u = u64::from;
            (
                u(l.num_key_heads),
                u(l.num_value_heads),
                u(l.key_head_dim),
                u(l.value_head_dim),
                u(l.conv_kernel),
            )
        });
        let model_type = c.str("model_type").unwrap_or(&g.model_type);
        Ok(Shape {
            h: g.hidden_size,
            heads: u64::from(g.num_attention_heads),
            kv: u64::from(g.num_kv_heads),
            head_dim: u64::from(g.head_dim),
            v_head_dim: u64::from(g.v_head_dim),
            swa: g.swa_heads.as_ref().map(|s| {
                (
                    u64::from(s.num_kv_heads),
                    u64::from(s.head_dim),
                    u64::from(s.v_head_dim),
                )
            }),
            mla,
            indexer,
            linear,
            gated_q: gated_q(c, model_type),
            attn_bias: c.flag("attention_bias") == Some(true),
            mlp: Mlp::read(c, model_type)?,
            recurrent: g.recurrent.clone(),
            mixer_everywhere: model_type == "falcon_h1",
            blocks: (model_type == "nemotron_h")
                .then(|| super::state::nemotron_h_pattern(c, g.num_layers).ok())
                .flatten(),
            nemotron_inter: (
                c.intermediate_size()?,
                c.uint_or("moe_shared_expert_intermediate_size", 0)?,
            ),
            moe_latent: c.uint("moe_latent_size")?,
            plamo2: model_type == "plamo2",
            zamba2: match model_type {
                "zamba2" => Some(Zamba2 {
                    shared_on: (0..g.layers.len() as u64)
                        .filter(|i| g.layers[*i as usize] == LayerKind::Full)
                        .take(c.uint_or("num_mem_blocks", 1)?.max(1) as usize)
                        .collect(),
                    inter: c.uint_or("intermediate_size", 4 * g.hidden_size)?,
                    rank: c.uint_or("adapter_rank", 128)?,
                    attn_adapter: c.flag("use_shared_attention_adapter") == Some(true),
                }),
                _ => None,
            },
        })
    }

    fn embeddings(&self, c: &Cfg, t: &mut Tally) -> Result<(), ModelError> {
        let vocab = c.required(&["vocab_size", "padded_vocab_size"])?;
        let model_type = c.str("model_type").unwrap_or_default();
        // transformers defaults: Gemma ties the head to the embedding, the others do not;
        // vLLM `zamba2.py` always ties it (`lm_head.tie_weights`).
        let tied = self.zamba2.is_some()
            || c.flag("tie_word_embeddings")
                .unwrap_or(model_type.starts_with("gemma"));
        t.embedding += t.measure(|t| t.dense(vocab * self.h));
        if !tied {
            t.linear("lm_head", vocab * self.h);
        }
        // Gemma 3n / 4 per-layer input embeddings and their projection.
        let per_layer = c.uint_or("hidden_size_per_layer_input", 0)?;
        if per_layer > 0 {
            let layers = c.uint_or("num_hidden_layers", 0)?;
            let v = c.uint_or("vocab_size_per_layer_input", vocab)?;
            t.embedding += t.measure(|t| t.dense(v * layers * per_layer));
            t.dense(self.h * layers * per_layer);
        }
        t.dense(self.h); // final norm
        Ok(())
    }

    fn layer(&self, i: u64, kind: LayerKind, t: &mut Tally) {
        let p = format!("model.layers.{i}");
        if let Some(block) = self.blocks.as_ref().and_then(|b| b.get(i as usize)) {
            let bytes = t.measure(|t| self.nemotron_layer(&p, *block, t));
            t.layers += bytes;
            return;
        }
        if let (Some(z), Some(r)) = (&self.zamba2, &self.recurrent) {
            let bytes = t.measure(|t| self.zamba2_layer((i, &p), z, r, kind, t));
            t.layers += bytes;
            return;
        }
        let bytes = t.measure(|t| {
            // input and post-attention norms; Plamo2 norms before and after mixer and MLP
            t.dense(if self.plamo2 { 4 } else { 2 } * self.h);
            let attn = t.measure(|t| match (kind, &self.linear, &self.mla, &self.recurrent) {
                (LayerKind::Linear, Some(l), _, _) => self.linear_attn(&p, *l, t),
                (LayerKind::Linear, None, _, Some(r)) => self.mixer(&format!("{p}.mamba"), r, t),
                (_, _, Some(m), _) => self.mla_attn(&p, m, t),
                (_, _, _, r) => {
                    self.attn(&format!("{p}.self_attn"), kind, t);
                    if let Some(r) = r.as_ref().filter(|_| self.mixer_everywhere) {
                        self.mixer(&format!("{p}.mamba"), r, t);
                    }
                }
            });
            t.attention += attn;
            self.indexer(&p, i, t);
            self.mlp.layer(&p, i, self.h, t);
        });
        t.layers += bytes;
    }

    /// A Nemotron-NAS layer: attention with its own KV heads and an MLP of its own width, each
    /// with its norm, and neither when its block is a no-op (vLLM and SGLang nemotron_nas.py ::
    /// DeciLMDecoderLayer.__init__).
    fn nas_layer(&self, i: u64, b: &NasBlock, t: &mut Tally) -> f64 {
        let (p, h) = (format!("model.layers.{i}"), self.h);
        let bytes = t.measure(|t| {
            if let Some(kv) = b.kv_heads {
                t.dense(h); // input_layernorm
                let (q, kv) = (self.heads * self.head_dim, u64::from(kv) * self.head_dim);
                let attn = t.measure(|t| {
                    t.linear(&format!("{p}.self_attn.qkv_proj"), h * q + 2 * h * kv);
                    t.linear(&format!("{p}.self_attn.o_proj"), q * h);
                    t.dense(if self.attn_bias { q + 2 * kv } else { 0 });
                });
                t.attention += attn;
            }
            if let Some(inter) = b.ffn {
                t.dense(h); // post_attention_layernorm
                t.gated_mlp(&format!("{p}.mlp"), h, inter);
            }
        });
        t.layers += bytes;
        bytes
    }

    /// A recurrent mixer under `block` (`model.layers.N.mamba`).
    fn mixer(&self, block: &str, r: &Recurrent, t: &mut Tally) {
        let w = if self.plamo2 {
            super::mixers::plamo2(r, self.h)
        } else {
            super::mixers::mixer(r, self.h)
        };
        t.linear(&format!("{block}.in_proj"), w.input);
        t.linear(&format!("{block}.out_proj"), w.output);
        t.dense(w.small);
    }

    /// One Nemotron-H block with its norm (vLLM / SGLang `nemotron_h.py`: a layer holds one
    /// mixer or one MLP): Mamba2, attention, relu² MoE (router, routed and shared experts, up
    /// and down only) or relu² MLP, each named `model.layers.N.mixer` as vLLM 0.23.0 builds it
    /// (`NemotronHMambaDecoderLayer`, `NemotronHAttentionDecoderLayer`: `mixer.in_proj`,
    /// `mixer.qkv_proj`), where the checkpoint's `backbone.layers.N.mixer.*` lists land.
    fn nemotron_layer(&self, p: &str, block: char, t: &mut Tally) {
        let (h, mixer) = (self.h, format!("{p}.mixer"));
        t.dense(h);
        match (block, &self.recurrent) {
            ('M', Some(r)) => self.mixer(&mixer, r, t),
            ('*', _) => t.attention += t.measure(|t| self.attn(&mixer, LayerKind::Full, t)),
            ('E', _) => {
                let m = &self.mlp;
                t.replicated(|t| t.dense(h * m.experts + m.experts));
                let width = self.moe_latent.unwrap_or(h);
                if let Some(latent) = self.moe_latent {
                    let name = format!("{mixer}.fc1_latent_proj");
                    t.replicated(|t| t.linear(&name, 2 * h * latent));
                }
                t.routed_experts += t.measure(|t| {
                    t.linear(
                        &format!("{mixer}.experts.0.up_proj"),
                        m.experts * 2 * width * m.expert_inter,
                    )
                });
                t.linear(
                    &format!("{mixer}.shared_experts.up_proj"),
                    2 * h * self.nemotron_inter.1,
                );
            }
            _ => t.linear(&format!("{mixer}.up_proj"), 2 * h * self.nemotron_inter.0),
        }
    }

    /// One Zamba2 layer (vLLM `zamba2.py`): a norm and a Mamba2 mixer; a hybrid layer adds its
    /// replicated `linear` (h → h) and its LoRAs (h → rank → 2 × inter on the MLP; 2h → rank →
    /// 2h on q, k and v). The shared blocks (a 2h norm, MHA over 2h with `o_proj` back to h, a
    /// norm and a GELU-gated MLP) are counted once, on the first hybrid layers
    /// (`Zamba2Model.__init__` cycles `num_mem_blocks` of them).
    fn zamba2_layer(
        &self,
        (i, p): (u64, &str),
        z: &Zamba2,
        r: &Recurrent,
        kind: LayerKind,
        t: &mut Tally,
    ) {
        let h = self.h;
        t.dense(h);
        self.mixer(&format!("{p}.mamba"), r, t);
        if kind != LayerKind::Full {
            return;
        }
        t.replicated(|t| t.linear(&format!("{p}.linear"), h * h));
        t.linear(
            &format!("{p}.gate_up_proj_adapter"),
            z.rank * (h + 2 * z.inter),
        );
        if z.attn_adapter {
            t.linear(&format!("{p}.linear_q_adapter"), 3 * z.rank * 4 * h);
        }
        if z.shared_on.contains(&i) {
            t.dense(3 * h);
            t.attention += t.measure(|t| {
                let name = format!("{p}.shared_transformer.self_attn.qkv_proj");
                t.linear(&name, 2 * h * 6 * h + 2 * h * h)
            });
            t.linear(
                &format!("{p}.shared_transformer.feed_forward"),
                3 * h * z.inter,
            );
        }
    }

    /// Attention under `block`. Gemma 4's `attention_k_eq_v` layers store no `v_proj`, but every
    /// engine builds the whole `qkv_proj` and loads K into its V part too, so V is priced: vLLM
    /// 0.23.0 `models/gemma4.py :: Gemma4Attention.__init__` and `Gemma4ForCausalLM.load_weights`,
    /// SGLang 0.5.23 `models/gemma4_causal.py :: load_weights` (`should_dup_k_to_v`), TensorRT-LLM
    /// `_torch/models/modeling_gemma4.py :: Gemma4Attention` ("duplicates k_proj→v_proj").
    fn attn(&self, block: &str, kind: LayerKind, t: &mut Tally) {
        let sliding = matches!(kind, LayerKind::Sliding { .. } | LayerKind::Chunked { .. });
        let (kv, hd, vhd) = match self.swa {
            Some(s) if sliding => s,
            _ => (self.kv, self.head_dim, self.v_head_dim),
        };
        let q_out = self.heads * hd * if self.gated_q { 2 } else { 1 };
        let bias = if self.attn_bias {
            q_out + kv * (hd + vhd)
        } else {
            0
        };
        let name = |module: &str| format!("{block}.{module}");
        t.linear(&name("qkv_proj"), self.h * (q_out + kv * (hd + vhd)));
        t.linear(&name("o_proj"), self.heads * vhd * self.h);
        t.dense(bias);
    }

    /// DeepSeek MLA. The down-projections to the latent (vLLM's `fused_qkv_a_proj` of `q_a_proj`
    /// and `kv_a_proj_with_mqa`, or the latter alone without a q LoRA) are ReplicatedLinear in
    /// SGLang (models/deepseek_v2.py :: DeepseekV2AttentionMLA.__init__) and vLLM
    /// (`MergedColumnParallelLinear(disable_tp=True)`); `q_b_proj`, `kv_b_proj` and `o_proj` split.
    fn mla_attn(&self, p: &str, m: &MlaDims, t: &mut Tally) {
        let (h, heads) = (self.h, self.heads);
        let name = |module: &str| format!("{p}.self_attn.{module}");
        let (down, q_up, q_in) = if m.q_lora > 0 {
            ("fused_qkv_a_proj", "q_b_proj", m.q_lora)
        } else {
            ("kv_a_proj_with_mqa", "q_proj", h)
        };
        t.replicated(|t| {
            t.dense(m.q_lora + m.kv_lora); // q_a_layernorm, kv_a_layernorm
            t.linear(&name(down), h * (m.q_lora + m.kv_lora + m.rope));
        });
        t.linear(&name(q_up), q_in * heads * (m.nope + m.rope));
        t.linear(&name("kv_b_proj"), m.kv_lora * heads * (m.nope + m.v));
        t.linear(&name("o_proj"), heads * m.v * h);
    }

    /// Gated DeltaNet (Qwen3-Next `Qwen3NextGatedDeltaNet`, vLLM 0.23.0
    /// `layers/mamba/gdn/qwen_gdn_linear_attn.py :: QwenGatedDeltaNetAttention`): the fused
    /// `in_proj_qkvz` and `in_proj_ba` projections, a depthwise conv over q, k, v, per-head
    /// `A_log` and `dt_bias`, a norm, and `out_proj`.
    fn linear_attn(
        &self,
        p: &str,
        (nk, nv, dk, dv, kernel): (u64, u64, u64, u64, u64),
        t: &mut Tally,
    ) {
        let (key, value) = (nk * dk, nv * dv);
        let p = format!("{p}.linear_attn");
        t.linear(&format!("{p}.in_proj_qkvz"), self.h * (2 * key + 2 * value));
        t.linear(&format!("{p}.in_proj_ba"), self.h * 2 * nv);
        t.linear(&format!("{p}.out_proj"), value * self.h);
        t.dense((2 * key + value) * kernel + 2 * nv + dv);
    }

    fn indexer(&self, p: &str, i: u64, t: &mut Tally) {
        let Some(ix) = &self.indexer else { return };
        if ix.shared.get(i as usize).copied().unwrap_or(false) {
            return;
        }
        // DeepSeek-V3.2 `Indexer`: wq_b, wk, k_norm, weights_proj, all ReplicatedLinear
        // (SGLang layers/attention/nsa/nsa_indexer.py :: Indexer.__init__).
        t.replicated(|t| {
            t.linear(
                &format!("{p}.self_attn.indexer.wq_b"),
                ix.q_in * ix.heads * ix.dim + self.h * ix.dim,
            );
            t.dense(2 * ix.dim + self.h * ix.heads);
        });
    }
}

impl Mlp {
    fn read(c: &Cfg, model_type: &str) -> Result<Mlp, ModelError> {
        let experts = num_experts(c)?;
        let inter = c.intermediate_size()?;
        let expert_inter = c
            .first_uint(&["moe_intermediate_size", "expert_intermediate_size"])?
            .unwrap_or(inter);
        let n_shared = c.uint_or("n_shared_experts", 0)?;
        let shared_size = c.uint_or("shared_expert_intermediate_size", 0)?;
        let llama4 = model_type.starts_with("llama4");
        let (shared_inter, shared_gate) = if n_shared > 0 {
            (n_shared * expert_inter, false)
        } else if shared_size > 0 {
            (shared_size, true)
        } else if llama4 {
            (inter, false)
        } else {
            (0, false)
        };
        let only_dense = c.get("mlp_only_layers").and_then(Value::as_array);
        Ok(Mlp {
            experts,
            dense_inter: inter,
            dense_inter_nonmoe: c.uint("intermediate_size_mlp")?.unwrap_or(inter),
            expert_inter,
            shared_inter,
            shared_gate,
            shared_name: if n_shared > 0 {
                "shared_experts"
            } else {
                "shared_expert"
            },
            dense_with_moe: c.flag("enable_moe_block") == Some(true),
            first_dense: c.uint_or("first_k_dense_replace", 0)?,
            freq: match c.get("moe_layer_freq") {
                Some(Value::Array(_)) => 1,
                _ => c.uint_or("moe_layer_freq", 1)?.max(1),
            },
            sparse_step: c
                .first_uint(&["decoder_sparse_step", "interleave_moe_layer_step"])?
                .unwrap_or(1)
                .max(1),
            only_dense: only_dense
                .into_iter()
                .flatten()
                .filter_map(as_uint)
                .collect(),
            layer_types: str_list(c, "mlp_layer_types")
                .map(|l| l.iter().map(|t| t != "dense").collect())
                .or_else(|| per_layer_moe(c)),
            period: match c.uint("expert_layer_period")? {
                Some(p) => Some((p.max(1), c.uint_or("expert_layer_offset", 0)?)),
                None => None,
            },
        })
    }

    /// Which layers route to experts: DeepSeek `first_k_dense_replace` / `moe_layer_freq`,
    /// Qwen MoE `mlp_only_layers` / `decoder_sparse_step`, Llama 4 `interleave_moe_layer_step`,
    /// GLM-5.2 `mlp_layer_types`.
    fn is_moe(&self, i: u64) -> bool {
        if self.experts == 0 {
            return false;
        }
        if let Some(sparse) = self.layer_types.as_ref().and_then(|l| l.get(i as usize)) {
            return *sparse;
        }
        if let Some((period, offset)) = self.period {
            return i % period == offset;
        }
        i >= self.first_dense
            && i.is_multiple_of(self.freq)
            && !self.only_dense.contains(&i)
            && (i + 1).is_multiple_of(self.sparse_step)
    }

    fn layer(&self, p: &str, i: u64, h: u64, t: &mut Tally) {
        if !self.is_moe(i) {
            t.gated_mlp(&format!("{p}.mlp"), h, self.dense_inter_nonmoe);
            return;
        }
        if self.dense_with_moe {
            t.gated_mlp(&format!("{p}.mlp"), h, self.dense_inter);
        }
        // The router is replicated (SGLang deepseek_v2.py :: MoEGate, ReplicatedLinear elsewhere).
        t.replicated(|t| t.dense(h * self.experts));
        // Gemma 4 keeps its experts beside the dense MLP, not inside it (the checkpoint's
        // `layers.N.experts.gate_up_proj`; vLLM `gemma4.py :: Gemma4DecoderLayer` builds them
        // under `moe`), so a skip list naming `layers.N.mlp*` leaves them quantized.
        let experts = if self.dense_with_moe {
            format!("{p}.experts.0.gate_proj")
        } else {
            format!("{p}.mlp.experts.0.gate_proj")
        };
        let routed = t.measure(|t| t.linear(&experts, self.experts * 3 * h * self.expert_inter));
        t.routed_experts += routed;
        if self.shared_inter > 0 {
            t.gated_mlp(
                &format!("{p}.mlp.{}", self.shared_name),
                h,
                self.shared_inter,
            );
            t.dense(if self.shared_gate { h } else { 0 });
        }
    }
}

/// A list-valued `moe_layer_freq`: one entry per layer, non-zero where the layer routes to
/// experts (vLLM and SGLang `mimo_v2.py :: is_moe_layer`, SGLang `minimax_m3.py ::
/// _is_layer_sparse`).
fn per_layer_moe(c: &Cfg) -> Option<Vec<bool>> {
    let list = c.get("moe_layer_freq")?.as_array()?;
    Some(list.iter().map(|v| as_uint(v).unwrap_or(1) != 0).collect())
}

fn str_list(c: &Cfg, key: &str) -> Option<Vec<String>> {
    let list = c.get(key)?.as_array()?;
    Some(
        list.iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect(),
    )
}

/// Approximate vision tower + projector of a VLM from `vision_config` (ViT blocks:
/// 4·d² attention + 2 or 3·d·i MLP, a patch embedding, and a merger to the text width).
/// An estimate: towers differ in detail, and they are a few percent of the model at most.
fn vision_params(c: &Cfg, text_hidden: u64) -> Result<u64, ModelError> {
    let Some(v) = c.root.get("vision_config").and_then(Value::as_object) else {
        return Ok(0);
    };
    let get = |keys: &[&str]| keys.iter().find_map(|k| v.get(*k).and_then(as_uint));
    let (Some(d), Some(layers)) = (
        get(&["hidden_size", "vt_hidden_size", "embed_dim", "width"]),
        get(&[
            "num_hidden_layers",
            "depth",
            "vt_num_hidden_layers",
            "layers",
        ]),
    ) else {
        return Ok(0);
    };
    let inter = get(&["intermediate_size", "vt_intermediate_size"]).unwrap_or(4 * d);
    // SwiGLU towers (Qwen-VL, Pixtral) and Gemma 4's gate_up MLP (SGLang
    // models/gemma4_vision.py :: ClippableGateUpParallelLinear) have three MLP matrices.
    let gated = v
        .get("hidden_act")
        .and_then(Value::as_str)
        .is_some_and(|a| a == "silu")
        || v.get("model_type").and_then(Value::as_str) == Some("gemma4_vision");
    let block = 4 * d * d + if gated { 3 } else { 2 } * d * inter + 4 * d;
    let patch = get(&["patch_size"]).unwrap_or(14);
    let temporal = get(&["temporal_patch_size"]).unwrap_or(1);
    let merge = get(&["spatial_merge_size"])
        .or_else(|| c.root.get("spatial_merge_size").and_then(as_uint))
        .or_else(|| {
            v.get("merge_kernel_size")
                .and_then(Value::as_array)
                .and_then(|a| a.first())
                .and_then(as_uint)
        })
        .unwrap_or(1);
    let merged = d * merge * merge;
    Ok(layers * block + 3 * patch * patch * temporal * d + merged * merged + merged * text_hidden)
}

#[cfg(test)]
#[path = "params_tests.rs"]
mod tests;
