//! Loading a model's geometry: `config.json` read into a [`Geometry`] with its parameter count,
//! from a file, a model directory, or parsed JSON.

use std::path::Path;

use serde_json::Value;

use super::raw::{as_uint, invalid, quant_config, Cfg};
use super::{config, params, Geometry, ModelError, WeightsSource};

impl Geometry {
    /// Reads a Hugging Face `config.json` (already parsed). `source` names the file or catalog
    /// entry and appears in errors.
    pub fn from_config_json(id: &str, source: &str, json: &Value) -> Result<Geometry, ModelError> {
        let c = Cfg::new(json, source)?;
        let mut g = config::base_geometry(&c, id, source)?;
        let counts = params::count(&g, &c)?;
        g.params = counts.params;
        g.nextn_params = counts.nextn_params;
        g.weight_bytes = counts.weight_bytes;
        g.nextn_weight_bytes = counts.nextn_weight_bytes;
        g.weight_parts = counts.parts;
        g.rope_tables = config::rope_tables(&c, &g);
        Ok(g)
    }
}

fn read_json(path: &Path) -> Result<Value, ModelError> {
    let shown = path.display().to_string();
    let text = crate::input::read_regular(path)?;
    serde_json::from_str(&text).map_err(|source| ModelError::Json {
        path: shown,
        source,
    })
}

/// Reads a `config.json` file; the id is the file path.
pub fn load_config_file(path: &Path) -> Result<Geometry, ModelError> {
    let shown = path.display().to_string();
    Geometry::from_config_json(&shown, &shown, &read_json(path)?)
}

/// Reads a local model directory: `config.json`, with the ModelOpt `hf_quant_config.json` as its
/// quantization config when config.json states none (vLLM `get_quant_config` reads that file),
/// and the measured weight size from `model.safetensors.index.json` `metadata.total_size` when
/// present. The MTP layers' estimated bytes are taken out of the measured total, since engines
/// load them only for speculative decoding.
pub fn load_model_dir(path: &Path) -> Result<Geometry, ModelError> {
    let config = path.join("config.json");
    let shown = config.display().to_string();
    let mut json = read_json(&config)?;
    let quant = path.join("hf_quant_config.json");
    let mut source = shown.clone();
    if quant.is_file() && Cfg::new(&json, &shown).is_ok_and(|c| quant_config(&c).is_none()) {
        if let Some(root) = json.as_object_mut() {
            root.insert("quantization_config".into(), read_json(&quant)?);
            source = format!("{shown} + {}", quant.display());
        }
    }
    let mut g = Geometry::from_config_json(&shown, &source, &json)?;
    g.id = path.display().to_string();
    let index = path.join("model.safetensors.index.json");
    if index.is_file() {
        let json = read_json(&index)?;
        let total = json.pointer("/metadata/total_size").and_then(as_uint);
        let total = total.ok_or_else(|| {
            invalid(
                &index.display().to_string(),
                "missing `metadata.total_size`",
            )
        })?;
        g.weight_bytes = total.saturating_sub(g.nextn_weight_bytes);
        g.weight_bytes_source = WeightsSource::SafetensorsIndex;
        g.source = format!("{} + {}", g.source, index.display());
    }
    Ok(g)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn model_dir_prefers_the_safetensors_index() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.json"), json!({"model_type": "llama", "num_hidden_layers": 4, "hidden_size": 1024, "num_attention_heads": 16, "vocab_size": 1000}).to_string()).unwrap();
        let g = load_model_dir(dir.path()).unwrap();
        assert_eq!(g.weight_bytes_source, WeightsSource::ParamCount);
        std::fs::write(
            dir.path().join("model.safetensors.index.json"),
            r#"{"metadata": {"total_size": 123456}}"#,
        )
        .unwrap();
        let g = load_model_dir(dir.path()).unwrap();
        assert_eq!(
            (g.weight_bytes, g.weight_bytes_source),
            (123456, WeightsSource::SafetensorsIndex)
        );
        std::fs::write(dir.path().join("model.safetensors.index.json"), "{").unwrap();
        assert!(load_model_dir(dir.path())
            .unwrap_err()
            .to_string()
            .contains("model.safetensors.index.json"));
        std::fs::remove_file(dir.path().join("model.safetensors.index.json")).unwrap();
        // ModelOpt's separate quantization file counts when config.json states none.
        std::fs::write(
            dir.path().join("hf_quant_config.json"),
            r#"{"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}"#,
        )
        .unwrap();
        let q = load_model_dir(dir.path()).unwrap().quantization.unwrap();
        assert_eq!(
            (q.method.as_str(), q.weight_bits, q.kv_cache_fp8),
            ("modelopt", 8, true)
        );
        assert!(load_config_file(&dir.path().join("missing.json"))
            .unwrap_err()
            .to_string()
            .contains("missing.json"));
    }
}
