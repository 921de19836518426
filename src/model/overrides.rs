//! Model config overrides given at launch (SGLang `--json-model-override-args`, vLLM
//! `--hf-overrides`): the engines set each key on the loaded config before they derive the
//! context length, so the geometry kvlint plans with must carry them too.

use serde_json::{json, Value};

use super::config::{rope_positions, rope_scaling, LENGTH_KEYS};
use super::raw::{as_uint, Cfg, Obj};
use super::Geometry;

/// Keys that change neither the KV layout, the weights nor the context length: token ids,
/// the rotary base, generation switches. Any other key kvlint does not apply is refused.
const INERT: &[&str] = &[
    "rope_theta",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "use_cache",
    "output_attentions",
    "output_hidden_states",
    "return_dict",
];

/// How an engine release applies a dict value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Semantics {
    /// `rope_scaling`: `{**current, **value}` (SGLang 0.5.23 utils/hf_transformers/config.py::
    /// get_config), else `setattr` replaces it whole (vLLM config/model.py::
    /// ModelConfig._apply_dict_overrides; SGLang up to 0.5.22).
    pub rope_merge: bool,
    /// A dict for a nested config (`text_config`) updates it (SGLang 0.5.20+, vLLM 0.33
    /// `_update_nested`); else `config.update` puts a plain dict in its place, which kvlint
    /// does not model.
    pub nested_update: bool,
}

/// `g` with `overrides` applied as the engine applies them, or the key (a dotted path) kvlint
/// cannot apply: one that may change the geometry and is not modelled.
pub fn apply(g: &Geometry, overrides: &Obj, how: Semantics) -> Result<Geometry, String> {
    // A VLM's language model is its `text_config`: a top-level key leaves it alone, a nested
    // dict updates it (both engines update a nested PretrainedConfig in place).
    let nested = g.multimodal || g.text_model_type != g.model_type;
    let mut out = g.clone();
    for (key, value) in overrides {
        match (key.as_str(), value) {
            ("text_config" | "llm_config", Value::Object(inner)) if nested && how.nested_update => {
                for (k, v) in inner {
                    set(&mut out, k, v, how.rope_merge).map_err(|k| format!("{key}.{k}"))?;
                }
            }
            (k, _) if INERT.contains(&k) => {}
            (k, v) if !nested => set(&mut out, k, v, how.rope_merge)?,
            _ => return Err(key.clone()),
        }
    }
    if let Some(max_pos) = out.max_position_embeddings() {
        // The full-attention rotary table (and the DSA indexer's) follows the new length.
        let before = g
            .max_position_embeddings()
            .map(|p| rope_positions(p, g.rope_scaling.as_ref()));
        let after = rope_positions(max_pos, out.rope_scaling.as_ref());
        for t in &mut out.rope_tables {
            if Some(t.positions) == before {
                t.positions = after;
            }
        }
    }
    Ok(out)
}

/// One key set on the (text) config.
fn set(g: &mut Geometry, key: &str, value: &Value, merge: bool) -> Result<(), String> {
    if INERT.contains(&key) {
        return Ok(());
    }
    if LENGTH_KEYS.contains(&key) {
        g.length_keys.retain(|(k, _)| k != key);
        match value {
            // `None` is skipped by both engines' key scans.
            Value::Null => {}
            v => g
                .length_keys
                .push((key.to_string(), as_uint(v).ok_or(key)?)),
        }
        return Ok(());
    }
    if !matches!(key, "rope_scaling" | "rope_parameters") {
        return Err(key.to_string());
    }
    let new = match value {
        Value::Null => None,
        Value::Object(v) if merge => {
            let mut merged = current_rope(g);
            merged.extend(v.clone());
            Some(merged)
        }
        Value::Object(v) => Some(v.clone()),
        _ => return Err(key.to_string()),
    };
    g.rope_scaling = match new {
        None => None,
        Some(obj) => {
            let doc = json!({ "rope_scaling": obj });
            let cfg = Cfg::new(&doc, "override").map_err(|_| key.to_string())?;
            rope_scaling(&cfg)
        }
    };
    Ok(())
}

/// The config's rope dict as kvlint holds it, for a merge.
fn current_rope(g: &Geometry) -> Obj {
    let mut o = Obj::new();
    if let Some(r) = &g.rope_scaling {
        o.insert("rope_type".into(), json!(r.rope_type));
        o.insert("factor".into(), json!(r.factor));
        if let Some(orig) = r.original_max_position_embeddings {
            o.insert("original_max_position_embeddings".into(), json!(orig));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{derived_context_length_sglang, derived_max_model_len_vllm};
    use crate::version::Version;

    fn qwen(extra: Value) -> Geometry {
        let mut v = json!({"model_type": "qwen2", "num_hidden_layers": 1, "hidden_size": 64,
            "num_attention_heads": 4, "vocab_size": 10, "max_position_embeddings": 32768});
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        Geometry::from_config_json("t", "t.json", &v).unwrap()
    }

    const REPLACE: Semantics = Semantics {
        rope_merge: false,
        nested_update: true,
    };
    const MERGE: Semantics = Semantics {
        rope_merge: true,
        nested_update: true,
    };

    fn obj(v: Value) -> Obj {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn yarn_override_scales_the_context_per_engine() {
        // Qwen's documented YaRN recipe: factor 4 over 32768 positions.
        let o = obj(json!({"rope_scaling": {"rope_type": "yarn", "factor": 4.0,
            "original_max_position_embeddings": 32768}}));
        let g = apply(&qwen(json!({})), &o, REPLACE).unwrap();
        // vLLM 0.11: original × factor = 131072; 0.33 no longer rescales YaRN.
        assert_eq!(
            derived_max_model_len_vllm(&g, &Version::new(0, 11, 0)),
            131072
        );
        assert_eq!(
            derived_max_model_len_vllm(&g, &Version::new(0, 33, 0)),
            32768
        );
        // SGLang: original_max_position_embeddings present → factor 1.
        assert_eq!(derived_context_length_sglang(&g), 32768);
        // Without it SGLang multiplies: 4 × 32768.
        let o = obj(json!({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}}));
        let g = apply(&qwen(json!({})), &o, REPLACE).unwrap();
        assert_eq!(derived_context_length_sglang(&g), 131072);
    }

    #[test]
    fn merge_keeps_what_the_override_does_not_name() {
        let base = qwen(json!({"rope_scaling": {"rope_type": "yarn", "factor": 2.0,
            "original_max_position_embeddings": 16384}}));
        let o = obj(json!({"rope_scaling": {"factor": 8.0}}));
        // Merge: yarn, factor 8, original 16384 kept → SGLang factor 1: 32768.
        let merged = apply(&base, &o, MERGE).unwrap();
        assert_eq!(derived_context_length_sglang(&merged), 32768);
        // Replace: {"factor": 8} alone, default type → 8 × 32768.
        let replaced = apply(&base, &o, REPLACE).unwrap();
        assert_eq!(derived_context_length_sglang(&replaced), 262144);
    }

    #[test]
    fn length_keys_are_set_and_unknown_keys_refused() {
        let o = obj(json!({"max_position_embeddings": 65536, "eos_token_id": 2}));
        let g = apply(&qwen(json!({})), &o, REPLACE).unwrap();
        assert_eq!(derived_context_length_sglang(&g), 65536);
        assert_eq!(g.rope_tables[0].positions, 65536);
        for bad in [
            json!({"num_hidden_layers": 2}),
            json!({"max_position_embeddings": "65536"}),
            json!({"text_config": {"max_position_embeddings": 1}}),
        ] {
            assert!(
                apply(&qwen(json!({})), &obj(bad.clone()), MERGE).is_err(),
                "{bad}"
            );
        }
    }
}
