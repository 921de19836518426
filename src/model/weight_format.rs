//! How a checkpoint stores its quantizable linear weights: bytes per weight by module name, from
//! the quantization config's targets and skip lists, as the engines apply them.

use regex_lite::Regex;
use serde_json::Value;

use super::quant::{
    ct_groups, dtype_bits, list, modelopt_algo, quant_method, quark_weight, weight_bits,
};
use super::raw::{as_uint, invalid, quant_config, Cfg, Obj};
use super::{Dtype, ModelError};

/// How the checkpoint stores quantizable linear weights.
pub(super) struct WeightFormat {
    /// Bytes per unquantized weight (the checkpoint dtype).
    pub dense: f64,
    /// Target patterns → bytes per weight, first match wins; empty means no quantization.
    rules: Vec<(Vec<Pattern>, f64)>,
    /// Modules kept unquantized.
    skip: Vec<Pattern>,
    lm_head_quantized: bool,
}

impl WeightFormat {
    pub(super) fn read(c: &Cfg, dtype: Dtype) -> Result<WeightFormat, ModelError> {
        let mut f = WeightFormat {
            dense: dtype.bytes(),
            rules: Vec::new(),
            skip: Vec::new(),
            lm_head_quantized: false,
        };
        let Some(q) = quant_config(c) else {
            return Ok(f);
        };
        let method = quant_method(q);
        let all = |bpw: f64| vec![(vec![Pattern::Any], bpw)];
        match method.as_str() {
            "fp8" | "fbgemm_fp8" => {
                // Block-scaled FP8 adds one fp32 scale per block (DeepSeek `weight_scale_inv`).
                let block = q.get("weight_block_size").and_then(Value::as_array);
                let area: u64 = block.into_iter().flatten().filter_map(as_uint).product();
                f.rules = all(1.0
                    + if block.is_some() && area > 0 {
                        4.0 / area as f64
                    } else {
                        0.0
                    });
                // DeepSeek-V4 `expert_dtype: fp4`: routed experts are 4-bit beside the FP8
                // linears (vLLM `transformers_utils/config.py :: _maybe_resolve_dsv4_expert_dtype`;
                // the fp8 config hands `RoutedExperts` an MXFP4 MoE method, or NVFP4 where
                // `moe_quant_algo` says so): MXFP4 one ue8m0 scale per 32 values, NVFP4 one e4m3
                // scale per `group_size`.
                if c.str("expert_dtype") == Some("fp4") {
                    let nvfp4 = q.get("moe_quant_algo").and_then(Value::as_str) == Some("NVFP4");
                    let group = q.get("group_size").and_then(as_uint).unwrap_or(16).max(1);
                    let scale = if nvfp4 {
                        1.0 / group as f64
                    } else {
                        1.0 / 32.0
                    };
                    let experts = Pattern::Part("mlp.experts".to_string());
                    f.rules.insert(0, (vec![experts], 0.5 + scale));
                }
                f.skip = hf_patterns(c, q, &["modules_to_not_convert", "ignored_layers"])?;
            }
            "awq" | "awq_marlin" | "gptq" | "gptq_marlin" => {
                // Packed int weights + an fp16 scale and a packed zero point per group and column.
                let bits = weight_bits(q, &method) as f64;
                let group = q.get("group_size").and_then(Value::as_i64).unwrap_or(128);
                let per_group = if group > 0 {
                    (2.0 + bits / 8.0) / group as f64
                } else {
                    0.0
                };
                f.rules = all(bits / 8.0 + per_group);
                f.skip = hf_patterns(c, q, &["modules_to_not_convert"])?;
                f.lm_head_quantized = q.get("lm_head").and_then(Value::as_bool) == Some(true);
            }
            "mxfp4" => {
                // OCP MX: 4-bit values and one e8m0 scale byte per 32.
                f.rules = all(0.5 + 1.0 / 32.0);
                f.skip = hf_patterns(c, q, &["modules_to_not_convert"])?;
            }
            "compressed-tensors" => {
                f.rules = ct_rules(c, q)?;
                f.skip = list(q, "ignore")
                    .iter()
                    .map(|s| ct_pattern(c, s))
                    .collect::<Result<_, _>>()?;
            }
            "quark" => {
                let w = quark_weight(q);
                if let Some(w) = w {
                    let bits = w
                        .get("dtype")
                        .and_then(Value::as_str)
                        .map_or(16, dtype_bits);
                    let group = w.get("group_size").and_then(as_uint).unwrap_or(0);
                    let scale = if w.get("scale_format").and_then(Value::as_str) == Some("e8m0") {
                        1.0
                    } else {
                        2.0
                    };
                    f.rules =
                        all(f64::from(bits) / 8.0
                            + if group > 0 { scale / group as f64 } else { 0.0 });
                }
                f.skip = list(q, "exclude")
                    .iter()
                    .map(|s| glob(c, s, false))
                    .collect::<Result<_, _>>()?;
            }
            "modelopt" | "modelopt_fp4" => {
                f.rules = match modelopt_algo(q).as_deref() {
                    Some("MIXED_PRECISION") => modelopt_mixed_rules(q),
                    Some(a) if a.contains("FP8") => all(1.0),
                    // NVFP4: fp8 scale per 16 values.
                    Some(a) if a.contains("NVFP4") => all(0.5 + 1.0 / 16.0),
                    Some(_) => all(0.5 + 2.0 / 128.0),
                    None => Vec::new(),
                };
                let inner = q
                    .get("quantization")
                    .and_then(Value::as_object)
                    .unwrap_or(q);
                f.skip = hf_patterns(c, inner, &["exclude_modules", "ignore"])?;
                // MIXED_PRECISION names `lm_head` among its layers when it quantizes it.
                f.lm_head_quantized = f.rules.iter().any(|(targets, _)| {
                    targets
                        .iter()
                        .any(|t| matches!(t, Pattern::Block(b) if b == "lm_head"))
                });
            }
            "bitsandbytes" => {
                // NF4 with an fp32 absmax per 64 values, or int8 rows.
                let four = q.get("load_in_4bit").and_then(Value::as_bool) == Some(true);
                f.rules = all(if four { 0.5 + 4.0 / 64.0 } else { 1.0 });
                f.skip = hf_patterns(c, q, &["llm_int8_skip_modules"])?;
            }
            // Unknown methods are priced unquantized: more weight bytes, a smaller pool.
            _ => {}
        }
        Ok(f)
    }

    /// Bytes per weight of `module`, a module as the engines build it: a fused one
    /// (`qkv_proj`, see `FUSED`) is looked up through the checkpoint modules it loads from.
    pub(super) fn bytes_per_weight(&self, module: &str) -> f64 {
        if module == "lm_head" && !self.lm_head_quantized {
            return self.dense;
        }
        let shards = shards(module);
        if self.skipped(module, &shards) {
            return self.dense;
        }
        self.scheme(module, &shards).unwrap_or(self.dense)
    }

    /// vLLM 0.23.0 `compressed_tensors/utils.py :: should_ignore_layer` (compressed-tensors
    /// `ignore`) and `utils/quant_utils.py :: is_layer_skipped` (ModelOpt `exclude_modules`, FP8
    /// `ignored_layers`, AWQ and MXFP4 `modules_to_not_convert`), both given the model's
    /// `packed_modules_mapping`: a fused module is skipped when it is listed itself or when its
    /// shards are. Its shards must agree, and vLLM refuses a mix ("requires all to use the same
    /// scheme"); a mix is priced unquantized here, the larger figure.
    fn skipped(&self, module: &str, shards: &[String]) -> bool {
        let listed = |name: &str| self.skip.iter().any(|p| p.matches(name));
        listed(module) || shards.iter().any(|s| listed(s))
    }

    /// The weight scheme `module` falls under, as vLLM 0.23.0 `compressed_tensors/utils.py ::
    /// find_matched_target` picks a config group: the first target naming the module, else the
    /// `Linear` class, else, when every shard of a fused module is named, its first shard's
    /// target (`_match_fused_layer`).
    fn scheme(&self, module: &str, shards: &[String]) -> Option<f64> {
        let group = |hit: &dyn Fn(&Pattern) -> bool| {
            let rule = self
                .rules
                .iter()
                .find(|(targets, _)| targets.iter().any(hit));
            rule.map(|(_, b)| *b)
        };
        let named = |name: &str| group(&|p| !matches!(p, Pattern::Any) && p.matches(name));
        named(module)
            .or_else(|| group(&|p| matches!(p, Pattern::Any)))
            .or_else(|| {
                let each = shards
                    .iter()
                    .map(|s| named(s))
                    .collect::<Option<Vec<_>>>()?;
                each.first().copied()
            })
    }
}

/// The fused modules kvlint prices and the checkpoint modules each is loaded from: the models'
/// `packed_modules_mapping` in vLLM 0.23.0 (`models/llama.py :: LlamaForCausalLM` and most
/// others: `qkv_proj`, `gate_up_proj`; `models/qwen3_5.py :: Qwen3_5ForCausalLMBase` and
/// `Qwen3_5ForConditionalGeneration`: the Gated DeltaNet's `in_proj_qkvz` and `in_proj_ba`;
/// `models/deepseek_v2.py :: DeepseekV2ForCausalLM.__init__`: `fused_qkv_a_proj` with a q LoRA).
/// A checkpoint that stores the fused module itself (Qwen3-Next's `in_proj_qkvz`, Phi-3's
/// `qkv_proj`: those models map the name to itself) is matched by that name.
const FUSED: [(&str, &[&str]); 5] = [
    ("qkv_proj", &["q_proj", "k_proj", "v_proj"]),
    ("gate_up_proj", &["gate_proj", "up_proj"]),
    ("in_proj_qkvz", &["in_proj_qkv", "in_proj_z"]),
    ("in_proj_ba", &["in_proj_b", "in_proj_a"]),
    ("fused_qkv_a_proj", &["q_a_proj", "kv_a_proj_with_mqa"]),
];

/// The checkpoint names of a fused module's shards (`model.layers.0.self_attn.qkv_proj` →
/// its `q_proj`, `k_proj`, `v_proj`); none for a module that is not fused.
fn shards(module: &str) -> Vec<String> {
    let (parent, last) = module.rsplit_once('.').unwrap_or(("", module));
    let Some((_, parts)) = FUSED.iter().find(|(fused, _)| *fused == last) else {
        return Vec::new();
    };
    parts
        .iter()
        .map(|s| match parent {
            "" => s.to_string(),
            _ => format!("{parent}.{s}"),
        })
        .collect()
}

/// compressed-tensors `config_groups`: each group's `targets` and its weight scheme
/// (vLLM `compressed_tensors.py :: CompressedTensorsConfig`).
fn ct_rules(c: &Cfg, q: &Obj) -> Result<Vec<(Vec<Pattern>, f64)>, ModelError> {
    let mut rules = Vec::new();
    for (group, w) in ct_groups(q) {
        let targets = list(group, "targets")
            .iter()
            .map(|t| ct_pattern(c, t))
            .collect::<Result<Vec<_>, _>>()?;
        rules.push((targets, ct_bytes_per_weight(w)));
    }
    Ok(rules)
}

fn ct_bytes_per_weight(w: &Obj) -> f64 {
    let bits = w.get("num_bits").and_then(Value::as_u64).unwrap_or(16) as f64;
    let float = w.get("type").and_then(Value::as_str) == Some("float");
    let symmetric = w.get("symmetric").and_then(Value::as_bool) != Some(false);
    let base = bits / 8.0;
    match w.get("strategy").and_then(Value::as_str) {
        Some("group" | "tensor_group") => {
            let g = w
                .get("group_size")
                .and_then(as_uint)
                .filter(|g| *g > 0)
                .unwrap_or(128) as f64;
            // NVFP4 stores fp8 scales; int groups bf16 scales, plus a zero point when asymmetric.
            let scale = if float && bits <= 4.0 { 1.0 } else { 2.0 };
            base + scale / g + if symmetric { 0.0 } else { base / g }
        }
        Some("block") => {
            let area: u64 = w
                .get("block_structure")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(as_uint)
                .product();
            base + if area > 1 { 4.0 / area as f64 } else { 0.0 }
        }
        _ => base,
    }
}

/// ModelOpt MIXED_PRECISION: each layer its own algorithm. vLLM 0.24.0
/// `modelopt.py :: ModelOptMixedPrecisionConfig` reads the `quantized_layers` map (from
/// `quantization_config`, else from `hf_quant_config.json`: `weight_utils.py ::
/// get_quant_config`) and leaves every layer it does not name unquantized
/// (`get_quant_method`: "Layer not in quantized_layers — leave unquantized"). ModelOpt's
/// `config.json` export writes the same map as `config_groups` with explicit `targets`, which
/// is what kvlint sees when the checkpoint's config.json is all it has.
fn modelopt_mixed_rules(q: &Obj) -> Vec<(Vec<Pattern>, f64)> {
    let inner = q
        .get("quantization")
        .and_then(Value::as_object)
        .unwrap_or(q);
    if let Some(layers) = inner.get("quantized_layers").and_then(Value::as_object) {
        return layers
            .iter()
            .filter_map(|(name, l)| {
                let l = l.as_object()?;
                let algo = l.get("quant_algo")?.as_str()?.to_ascii_uppercase();
                let group = l.get("group_size").and_then(as_uint).unwrap_or(16);
                Some((vec![block(name)], modelopt_algo_bytes(&algo, group)?))
            })
            .collect();
    }
    ct_groups(q)
        .into_iter()
        .filter_map(|(g, w)| {
            let targets = list(g, "targets").iter().map(|t| block(t)).collect();
            Some((targets, modelopt_group_bytes(w)?))
        })
        .collect()
}

/// Bytes per weight of one ModelOpt layer algorithm as vLLM 0.24.0 `modelopt.py` allocates it:
/// `ModelOptFp8LinearMethod` an fp8 weight and one fp32 scale per tensor;
/// `ModelOptNvFp4LinearMethod` (NVFP4, W4A16_NVFP4) packed e2m1 pairs and an fp8 e4m3
/// `weight_scale` per `group_size` inputs. Others are not priced (None: the layer counts dense).
fn modelopt_algo_bytes(algo: &str, group: u64) -> Option<f64> {
    match algo {
        "FP8" => Some(1.0),
        "NVFP4" | "W4A16_NVFP4" if group > 0 => Some(0.5 + 1.0 / group as f64),
        _ => None,
    }
}

/// A `config_groups` weight scheme of a ModelOpt export: 8-bit floats are FP8, 4-bit floats
/// with a `group_size` NVFP4.
fn modelopt_group_bytes(w: &Obj) -> Option<f64> {
    let float = w.get("type").and_then(Value::as_str) == Some("float");
    let group = w.get("group_size").and_then(as_uint).unwrap_or(0);
    match w.get("num_bits").and_then(Value::as_u64) {
        Some(8) if float => modelopt_algo_bytes("FP8", group),
        Some(4) if float => modelopt_algo_bytes("NVFP4", group),
        _ => None,
    }
}

/// A ModelOpt layer name (`Pattern::Block`), in the text model's spelling (`text_model_name`).
fn block(name: &str) -> Pattern {
    Pattern::Block(text_model_name(name))
}

/// A module name or pattern with a multimodal wrapper's `model.language_model.` /
/// `language_model.model.` prefix, or Nemotron-H's `backbone.`, taken to the text model's
/// `model.`, the spelling kvlint prices (vLLM `ModelOptMixedPrecisionConfig.
/// _quantized_layer_prefix_candidates` tries both wrapper spellings;
/// `ModelOptQuantConfigBase.apply_vllm_mapper` maps `exclude_modules`, and the mixed config
/// its `quantized_layers`, through the model's `hf_to_vllm_mapper`: Gemma 4's
/// `model.language_model.` → `language_model.model.`, `models/nemotron_h.py ::
/// NemotronHForCausalLM`'s `backbone` → `model`). Mamba's and Mamba2's `backbone.` is vLLM's
/// module name as well (`models/mamba2.py`), which kvlint spells `model.` all the same.
fn text_model_name(name: &str) -> String {
    [
        "model.language_model.",
        "language_model.model.",
        "backbone.",
    ]
    .iter()
    .find_map(|p| name.strip_prefix(p))
    .map_or_else(|| name.to_string(), |rest| format!("model.{rest}"))
}

/// A module-name pattern from a quantization config.
enum Pattern {
    /// compressed-tensors target `Linear`: every quantizable module.
    Any,
    /// compressed-tensors names: the module itself (any prefix before it).
    Exact(String),
    /// `modules_to_not_convert`-style names: a run of whole dotted components.
    Part(String),
    Re(Regex),
    /// A compressed-tensors regex of a multimodal checkpoint, matched where vLLM matches it: on
    /// the wrapped model's module name, `language_model.` + the text model's name.
    WrappedRe(Regex),
    /// A ModelOpt layer: the module itself, a parent of it (`mlp.experts` for each expert), or a
    /// sibling projection, since kvlint prices some blocks' projections under one name (a
    /// relu² MLP's `up_proj` for up and down) and vLLM requires one algorithm across a fused
    /// module's shards (`_resolve_quant_algo`).
    Block(String),
}

impl Pattern {
    fn matches(&self, name: &str) -> bool {
        match self {
            Pattern::Any => true,
            Pattern::Exact(s) => {
                name == s
                    || name
                        .strip_suffix(s.as_str())
                        .is_some_and(|p| p.ends_with('.'))
            }
            Pattern::Part(s) => name.match_indices(s.as_str()).any(|(i, _)| {
                let end = i + s.len();
                (i == 0 || name[..i].ends_with('.'))
                    && (end == name.len() || name[end..].starts_with('.'))
            }),
            Pattern::Re(r) => r.is_match(name),
            Pattern::WrappedRe(r) => r.is_match(&format!("language_model.{name}")),
            Pattern::Block(b) => {
                let parent = |n: &str| n.rsplit_once('.').map(|(p, _)| p.to_string());
                name == b
                    || name
                        .strip_prefix(b.as_str())
                        .is_some_and(|r| r.starts_with('.'))
                    || (!b.ends_with(".experts")
                        && parent(b).is_some()
                        && parent(b) == parent(name))
            }
        }
    }
}

/// compressed-tensors: `re:` entries are `re.match` regexes, `Linear` is the layer class,
/// anything else a module name (vLLM `compressed_tensors/utils.py :: _is_equal_or_regex_match`).
/// A multimodal checkpoint's names go through the model's `hf_to_vllm_mapper`
/// (`CompressedTensorsConfig.apply_vllm_mapper`), so they are read in the text model's spelling;
/// its regexes are not mapped and meet vLLM's `language_model.model.layers.N` names, so
/// Sehyo/Qwen3.5-35B-A3B-NVFP4's `re:model\.layers\.\d+\.` (meant for the MTP drafter's
/// `model.layers.N`) leaves the language model quantized.
fn ct_pattern(c: &Cfg, s: &str) -> Result<Pattern, ModelError> {
    let wrapped = !std::ptr::eq(c.root, c.text);
    if let Some(re) = s.strip_prefix("re:") {
        let p = regex(c, &format!("^(?:{re})"))?;
        return Ok(match p {
            Pattern::Re(r) if wrapped => Pattern::WrappedRe(r),
            p => p,
        });
    }
    Ok(if s == "Linear" {
        Pattern::Any
    } else {
        Pattern::Exact(text_model_name(s))
    })
}

/// HF-style skip lists: plain names match whole dotted components anywhere in the module name
/// (vLLM `awq.py :: is_layer_skipped_awq`); `*` globs (gpt-oss `model.layers.*.self_attn`)
/// match the module or one of its parents. A multimodal checkpoint's names are read in the text
/// model's spelling (`text_model_name`): nvidia/Gemma-4-26B-A4B-NVFP4 lists
/// `model.language_model.layers.0.self_attn*`, which vLLM keeps unquantized.
fn hf_patterns(c: &Cfg, q: &Obj, keys: &[&str]) -> Result<Vec<Pattern>, ModelError> {
    let mut out = Vec::new();
    for s in keys.iter().flat_map(|k| list(q, k)) {
        let s = text_model_name(&s);
        out.push(if s.contains('*') {
            glob(c, &s, true)?
        } else {
            Pattern::Part(s)
        });
    }
    Ok(out)
}

/// fnmatch-style glob; `parents` also lets it match a parent module.
fn glob(c: &Cfg, s: &str, parents: bool) -> Result<Pattern, ModelError> {
    let body: Vec<String> = s.split('*').map(regex_lite::escape).collect();
    let tail = if parents { r"(\..*)?$" } else { "$" };
    regex(c, &format!("^{}{tail}", body.join(".*")))
}

fn regex(c: &Cfg, re: &str) -> Result<Pattern, ModelError> {
    Regex::new(re).map(Pattern::Re).map_err(|e| {
        invalid(
            c.file,
            format!("bad module pattern {re:?} in quantization_config: {e}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn format(quantization_config: Value) -> WeightFormat {
        let json = json!({ "quantization_config": quantization_config });
        let c = Cfg::new(&json, "config.json").unwrap();
        WeightFormat::read(&c, Dtype::Bf16).unwrap()
    }

    /// DeepSeek-V4's config.json: block-FP8 linears, `expert_dtype: fp4` routed experts (MXFP4,
    /// or NVFP4 where nvidia/DeepSeek-V4-Flash-NVFP4 sets `moe_quant_algo`); shared experts stay
    /// FP8, and without `expert_dtype` the experts are FP8 too (sgl-project's FP8 re-export).
    #[test]
    fn deepseek_v4_fp4_experts_beside_fp8_linears() {
        let read = |json: Value| {
            let c = Cfg::new(&json, "config.json").unwrap();
            WeightFormat::read(&c, Dtype::Bf16).unwrap()
        };
        let fp8 = json!({"quant_method": "fp8", "weight_block_size": [128, 128]});
        let expert = "model.layers.3.mlp.experts.0.gate_proj";
        let shared = "model.layers.3.mlp.shared_experts.gate_proj";
        let block = 1.0 + 4.0 / 16384.0;
        let f = read(json!({"expert_dtype": "fp4", "quantization_config": fp8}));
        // Two e2m1 values a byte and one ue8m0 scale per 32: 0.5 + 1/32.
        assert_eq!(f.bytes_per_weight(expert), 0.53125);
        assert_eq!(f.bytes_per_weight(shared), block);
        assert_eq!(
            f.bytes_per_weight("model.layers.3.self_attn.q_a_proj"),
            block
        );
        let nv = json!({"expert_dtype": "fp4", "quantization_config": {"quant_method": "fp8",
            "moe_quant_algo": "NVFP4", "group_size": 16}});
        assert_eq!(read(nv).bytes_per_weight(expert), 0.5625);
        assert_eq!(
            read(json!({"quantization_config": fp8})).bytes_per_weight(expert),
            block
        );
    }

    /// The shape of nvidia/Qwen3.6-35B-A3B-NVFP4's config.json: FP8 attention, NVFP4 experts,
    /// shared experts and lm_head, everything else (routers, MTP) bf16.
    #[test]
    fn modelopt_mixed_precision_prices_each_layer_by_its_own_group() {
        let f = format(json!({
            "quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "ignore": ["mtp*"],
            "config_groups": {
                "group_0": {"weights": {"num_bits": 8, "type": "float"}, "targets": [
                    "model.language_model.layers.3.self_attn.k_proj",
                    "model.language_model.layers.0.linear_attn.in_proj_qkv"]},
                "group_1": {"weights": {"num_bits": 4, "type": "float", "group_size": 16},
                    "targets": ["lm_head", "model.language_model.layers.0.mlp.experts",
                        "model.language_model.layers.0.mlp.shared_expert.up_proj"]}
            }
        }));
        // A sibling of the listed k_proj, and the fused qkvz kvlint prices for in_proj_qkv.
        assert_eq!(f.bytes_per_weight("model.layers.3.self_attn.q_proj"), 1.0);
        assert_eq!(
            f.bytes_per_weight("model.layers.0.linear_attn.in_proj_qkvz"),
            1.0
        );
        // e2m1 pairs and one e4m3 scale per 16: 0.5 + 1/16.
        assert_eq!(
            f.bytes_per_weight("model.layers.0.mlp.experts.0.gate_proj"),
            0.5625
        );
        assert_eq!(
            f.bytes_per_weight("model.layers.0.mlp.shared_expert.gate_proj"),
            0.5625
        );
        assert_eq!(f.bytes_per_weight("lm_head"), 0.5625);
        // Layers no group names stay bf16, and `experts` does not reach the dense MLP beside it.
        assert_eq!(
            f.bytes_per_weight("model.layers.1.mlp.experts.0.gate_proj"),
            2.0
        );
        assert_eq!(f.bytes_per_weight("model.layers.0.mlp.gate_proj"), 2.0);
        assert_eq!(f.bytes_per_weight("model.layers.7.self_attn.q_proj"), 2.0);
    }

    #[test]
    fn modelopt_mixed_precision_reads_quantized_layers() {
        let f = format(json!({"quantization": {"quant_algo": "MIXED_PRECISION",
        "quantized_layers": {
            "model.layers.0.mlp.experts": {"quant_algo": "NVFP4", "group_size": 32},
            "model.layers.0.self_attn.o_proj": {"quant_algo": "FP8"},
            "model.layers.1.self_attn.o_proj": {"quant_algo": "INT8_SQ"}
        }}}));
        assert_eq!(
            f.bytes_per_weight("model.layers.0.mlp.experts.5.up_proj"),
            0.53125
        );
        assert_eq!(f.bytes_per_weight("model.layers.0.self_attn.q_proj"), 1.0);
        // An algorithm kvlint does not price counts unquantized, the larger figure.
        assert_eq!(f.bytes_per_weight("model.layers.1.self_attn.q_proj"), 2.0);
        assert_eq!(f.bytes_per_weight("lm_head"), 2.0);
    }

    /// Sehyo/Qwen3.5-35B-A3B-NVFP4 (catalog): a multimodal compressed-tensors checkpoint whose
    /// `ignore` names the GDN projections in the checkpoint's spelling and carries the MTP
    /// drafter's `re:model\.layers\.\d+\.`; the experts stay NVFP4.
    #[test]
    fn compressed_tensors_reads_a_multimodal_checkpoint_s_names() {
        let json = json!({"text_config": {"num_hidden_layers": 40}, "quantization_config": {
            "quant_method": "compressed-tensors",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4,
                "type": "float", "strategy": "tensor_group", "group_size": 16}}},
            "ignore": ["model.language_model.layers.0.linear_attn.out_proj",
                "re:model\\.layers\\.\\d+\\.", "re:.*mlp\\.gate$"]}});
        let c = Cfg::new(&json, "config.json").unwrap();
        let f = WeightFormat::read(&c, Dtype::Bf16).unwrap();
        // e2m1 pairs and one e4m3 scale per 16: 0.5 + 1/16.
        assert_eq!(
            f.bytes_per_weight("model.layers.0.mlp.experts.0.gate_proj"),
            0.5625
        );
        assert_eq!(
            f.bytes_per_weight("model.layers.0.linear_attn.out_proj"),
            2.0
        );
        assert_eq!(
            f.bytes_per_weight("model.layers.1.linear_attn.out_proj"),
            0.5625
        );
        assert_eq!(f.bytes_per_weight("model.layers.0.mlp.gate"), 2.0);
        // The same regex in a text-only checkpoint does name its layers.
        let f = format(json["quantization_config"].clone());
        assert_eq!(
            f.bytes_per_weight("model.layers.0.mlp.experts.0.gate_proj"),
            2.0
        );
    }

    /// `prefix.m` for each module `m`.
    fn under(prefix: &str, modules: &[&str]) -> Vec<String> {
        modules.iter().map(|m| format!("{prefix}.{m}")).collect()
    }

    /// Sehyo/Qwen3.5-35B-A3B-NVFP4 lists a Gated DeltaNet's checkpoint modules (`in_proj_qkv`,
    /// `in_proj_z`, `in_proj_b`, `in_proj_a`, `out_proj`) where vLLM builds the fused
    /// `in_proj_qkvz` and `in_proj_ba` (`models/qwen3_5.py` `packed_modules_mapping`): each fused
    /// module is skipped with its shards. Qwen3-Next's checkpoint stores the fused module itself.
    #[test]
    fn fused_modules_are_skipped_through_their_shards() {
        let gdn = "model.layers.0.linear_attn";
        let mut ignore = under(
            gdn,
            &[
                "in_proj_qkv",
                "in_proj_z",
                "in_proj_b",
                "in_proj_a",
                "out_proj",
            ],
        );
        ignore.push("model.layers.1.linear_attn.in_proj_qkvz".to_string());
        ignore.push("model.layers.2.linear_attn.in_proj_qkv".to_string());
        let f = format(json!({"quant_method": "compressed-tensors",
            "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4,
                "type": "float", "strategy": "tensor_group", "group_size": 16}}},
            "ignore": ignore}));
        for m in under(gdn, &["in_proj_qkvz", "in_proj_ba", "out_proj"]) {
            assert_eq!(f.bytes_per_weight(&m), 2.0, "{m}");
        }
        // Layer 1 lists Qwen3-Next's own `in_proj_qkvz`, not its `in_proj_ba`: that one is
        // NVFP4, e2m1 pairs and one e4m3 scale per 16, 0.5 + 1/16.
        let one = "model.layers.1.linear_attn";
        assert_eq!(f.bytes_per_weight(&format!("{one}.in_proj_qkvz")), 2.0);
        assert_eq!(f.bytes_per_weight(&format!("{one}.in_proj_ba")), 0.5625);
        // `in_proj_qkv` without `in_proj_z`: vLLM refuses the mix; kvlint prices it bf16.
        let two = "model.layers.2.linear_attn.in_proj_qkvz";
        assert_eq!(f.bytes_per_weight(two), 2.0);
    }

    /// The same rule for every fused module and skip list: ModelOpt `exclude_modules`
    /// (nvidia/DeepSeek-V3.1-NVFP4 keeps MLA's q_a, kv_a, q_b and kv_b in bf16, not `o_proj`),
    /// FP8 `ignored_layers` (XiaomiMiMo/MiMo-V2.5 keeps `o_proj` alone), AWQ
    /// `modules_to_not_convert`.
    #[test]
    fn qkv_gate_up_and_mla_follow_their_shards() {
        let attn = "model.layers.0.self_attn";
        let shards = ["q_a_proj", "kv_a_proj_with_mqa", "q_b_proj", "kv_b_proj"];
        let exclude = [
            under(attn, &shards),
            under(attn, &["q_proj", "k_proj", "v_proj"]),
        ];
        let f = format(
            json!({"quantization": {"quant_algo": "NVFP4", "group_size": 16,
            "exclude_modules": exclude.concat()}}),
        );
        for m in under(
            attn,
            &["fused_qkv_a_proj", "q_b_proj", "kv_b_proj", "qkv_proj"],
        ) {
            assert_eq!(f.bytes_per_weight(&m), 2.0, "{m}");
        }
        assert_eq!(f.bytes_per_weight(&format!("{attn}.o_proj")), 0.5625);
        let fp8 =
            format(json!({"quant_method": "fp8", "ignored_layers": under(attn, &["o_proj"])}));
        assert_eq!(fp8.bytes_per_weight(&format!("{attn}.o_proj")), 2.0);
        assert_eq!(fp8.bytes_per_weight(&format!("{attn}.qkv_proj")), 1.0);
        // AWQ 4-bit, group 128: 0.5 + (2 + 0.5) / 128 per weight.
        let awq = format(json!({"quant_method": "awq", "bits": 4, "group_size": 128,
            "modules_to_not_convert": ["gate_proj", "up_proj"]}));
        let mlp = "model.layers.3.mlp";
        assert_eq!(awq.bytes_per_weight(&format!("{mlp}.gate_up_proj")), 2.0);
        assert_eq!(
            awq.bytes_per_weight(&format!("{mlp}.down_proj")),
            0.5 + 2.5 / 128.0
        );
    }

    /// compressed-tensors targets: a name beats the `Linear` class, and a fused module takes the
    /// group of its shards when every shard is named (vLLM `find_matched_target`).
    #[test]
    fn compressed_tensors_targets_name_fused_modules_by_their_shards() {
        let f = format(
            json!({"quant_method": "compressed-tensors", "config_groups": {
            "group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "float",
                "strategy": "tensor_group", "group_size": 16}},
            "group_1": {"targets": ["model.layers.0.mlp.down_proj"],
                "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}}),
        );
        assert_eq!(f.bytes_per_weight("model.layers.0.mlp.down_proj"), 1.0);
        assert_eq!(
            f.bytes_per_weight("model.layers.0.mlp.gate_up_proj"),
            0.5625
        );
        let f = format(
            json!({"quant_method": "compressed-tensors", "config_groups": {
            "group_0": {"targets": ["re:.*self_attn\\.(q|k|v|o)_proj$"],
                "weights": {"num_bits": 8, "type": "float", "strategy": "channel"}}}}),
        );
        assert_eq!(f.bytes_per_weight("model.layers.0.self_attn.qkv_proj"), 1.0);
        assert_eq!(f.bytes_per_weight("model.layers.0.self_attn.o_proj"), 1.0);
        assert_eq!(f.bytes_per_weight("model.layers.0.mlp.gate_up_proj"), 2.0);
    }

    /// nvidia/Gemma-4-26B-A4B-NVFP4 names its text layers `model.language_model.layers.N`,
    /// nvidia/Kimi-K2.5-NVFP4 `language_model.model.layers.N`; both are the text model's
    /// `model.layers.N` (vLLM maps `exclude_modules` through `hf_to_vllm_mapper`).
    #[test]
    fn modelopt_skip_globs_read_a_multimodal_wrapper_s_names() {
        let f = format(json!({
            "quant_method": "modelopt", "quant_algo": "NVFP4",
            "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float",
                "group_size": 16}, "targets": ["Linear"]}},
            "ignore": ["lm_head", "model.language_model.layers.0.self_attn*",
                "model.language_model.layers.0.mlp*", "language_model.model.layers.1.self_attn*"]
        }));
        assert_eq!(f.bytes_per_weight("model.layers.0.self_attn.q_proj"), 2.0);
        assert_eq!(f.bytes_per_weight("model.layers.0.mlp.gate_proj"), 2.0);
        assert_eq!(f.bytes_per_weight("model.layers.1.self_attn.q_proj"), 2.0);
        // Gemma 4's experts sit beside the MLP, not in it; layer 10 is not layer 1.
        assert_eq!(
            f.bytes_per_weight("model.layers.0.experts.0.gate_proj"),
            0.5625
        );
        assert_eq!(
            f.bytes_per_weight("model.layers.10.self_attn.q_proj"),
            0.5625
        );
        assert_eq!(f.bytes_per_weight("model.layers.1.mlp.gate_proj"), 0.5625);
    }

    /// nvidia/Gemma-4-26B-A4B-NVFP4 (catalog): its `ignore` list keeps every layer's
    /// attention, dense MLP and router in bf16; only the 128 experts are NVFP4. vLLM 0.20.2 on an
    /// RTX 5090 logged "Model loading took 17.89 GiB" (fixtures/validation/vllm.jsonl,
    /// vllm-99sono-gemma4-26b-a4b-nvfp4-rtx5090-v0202).
    #[test]
    fn gemma4_nvfp4_keeps_attention_and_the_dense_mlp_in_bf16() {
        let g = crate::model::catalog_lookup("nvidia/Gemma-4-26B-A4B-NVFP4").unwrap();
        // Experts: 30 layers × 128 × 3 × 2,816 × 704 = 22,837,985,280 weights × (0.5 + 1/16) B.
        assert_eq!(g.weight_parts.routed_experts, 12_846_366_720);
        // Attention in bf16: 25 sliding layers of (16 + 8 + 8 + 16) × 256 × 2,816 = 34,603,008
        // and 5 full ones of (16 + 2 + 2 + 16) × 512 × 2,816 = 51,904,512 (K is V, but the
        // engines allocate V and load K into it), 1,124,597,760 weights × 2 B.
        assert_eq!(g.weight_parts.attention, 2_249_195_520);
    }
}
