use crate::engine::{EngineArgs, Setting, SettingValue};
use crate::launch::Engine;
use crate::model::{
    Dsa, Dtype, Geometry, LayerKind, Mla, Quantization, RoutedExperts, WeightsSource,
};
use crate::source::{FileId, Loc};
use crate::version::Version;

pub fn dense(layers: u32, heads: u32, kv_heads: u32, head_dim: u32) -> Geometry {
    Geometry {
        id: "test/dense".into(),
        source: "hand-written".into(),
        model_source: None,
        architectures: vec!["LlamaForCausalLM".into()],
        model_type: "llama".into(),
        text_model_type: "llama".into(),
        num_layers: layers,
        hidden_size: u64::from(heads * head_dim),
        num_attention_heads: heads,
        num_kv_heads: kv_heads,
        head_dim,
        v_head_dim: head_dim,
        mla: None,
        dsa: None,
        layers: vec![LayerKind::Full; layers as usize],
        swa_heads: None,
        linear: None,
        compressed: None,
        nas: None,
        recurrent: None,
        nextn_layers: 0,
        kv_shared_layers: 0,
        length_keys: vec![("max_position_embeddings".into(), 131072)],
        rope_scaling: None,
        dtype: Dtype::Bf16,
        quantization: None,
        vocab_size: 128256,
        params: 8_000_000_000,
        nextn_params: 0,
        nextn_weight_bytes: 0,
        weight_bytes: 16_000_000_000,
        weight_bytes_source: WeightsSource::ParamCount,
        weight_parts: Default::default(),
        rope_tables: Vec::new(),
        multimodal: false,
        vision: None,
        moe: false,
        experts: None,
        intermediate: u64::from(heads * head_dim) * 7 / 2,
    }
}

/// DeepSeek-V3 geometry: 61 layers, MLA 512 + 64.
pub fn deepseek_v3() -> Geometry {
    let mut g = dense(61, 128, 128, 128);
    g.architectures = vec!["DeepseekV3ForCausalLM".into()];
    g.mla = Some(Mla {
        kv_lora_rank: 512,
        qk_rope_head_dim: 64,
    });
    g.nextn_layers = 1;
    g.experts = Some(RoutedExperts {
        count: 256,
        intermediate: 2048,
        top_k: None,
    });
    g
}

/// DeepSeek-V3.2: DeepSeek-V3 plus a 128-wide indexer on every layer.
pub fn deepseek_v32() -> Geometry {
    let mut g = deepseek_v3();
    g.dsa = Some(Dsa {
        index_head_dim: 128,
        index_topk: 2048,
        indexer_layers: 61,
    });
    g
}

pub fn args(engine: Engine, version: &str, pairs: &[(&str, SettingValue)]) -> EngineArgs {
    let loc = Loc::new(FileId(0), 0..0);
    let settings = pairs
        .iter()
        .map(|(d, v)| {
            let s = Setting {
                dest: d.to_string(),
                value: v.clone(),
                flag_loc: loc,
                value_loc: loc,
                unresolved: vec![],
                defaulted: false,
            };
            (d.to_string(), s)
        })
        .collect();
    EngineArgs {
        engine,
        version: Version::parse(version).unwrap(),
        settings,
        could_run: Vec::new(),
    }
}

/// gpt-oss-20b's MoE shape: hidden 2880, 32 experts of width 2880, 4 per token, MXFP4.
pub fn gpt_oss(routed_bytes: u64) -> Geometry {
    let mut m = dense(24, 64, 8, 45);
    m.moe = true;
    m.experts = Some(RoutedExperts {
        count: 32,
        intermediate: 2880,
        top_k: Some(4),
    });
    m.quantization = Some(Quantization {
        method: "mxfp4".into(),
        weight_bits: 4,
        kv_cache_fp8: false,
        group_size: Some(32),
    });
    m.weight_parts.routed_experts = routed_bytes;
    m
}
