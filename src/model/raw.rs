//! The parsed `config.json`: the top-level and text-model objects and typed reads of their
//! fields. Geometry reading (`config`), quantization (`quant`) and parameter counting (`params`)
//! sit above it.

use serde_json::{Map, Value};

use super::ModelError;

pub(crate) type Obj = Map<String, Value>;

/// The top-level config and the text-model config (the same object for text-only models).
pub(crate) struct Cfg<'a> {
    pub root: &'a Obj,
    pub text: &'a Obj,
    pub file: &'a str,
}

impl<'a> Cfg<'a> {
    pub fn new(json: &'a Value, file: &'a str) -> Result<Self, ModelError> {
        let root = json
            .as_object()
            .ok_or_else(|| invalid(file, "config.json is not a JSON object"))?;
        // VLMs nest the language model: `text_config` (HF), `llm_config` (InternVL).
        let text = ["text_config", "llm_config"]
            .iter()
            .find_map(|k| root.get(*k).and_then(Value::as_object))
            .unwrap_or(root);
        Ok(Cfg { root, text, file })
    }

    /// A text-config value, falling back to the top level.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        self.text
            .get(key)
            .filter(|v| !v.is_null())
            .or_else(|| self.root.get(key).filter(|v| !v.is_null()))
    }

    /// A non-negative integer at `key`; `Ok(None)` when absent or null.
    pub fn uint(&self, key: &str) -> Result<Option<u64>, ModelError> {
        self.get(key)
            .map(|v| as_uint(v).ok_or_else(|| self.bad(key, v)))
            .transpose()
    }

    /// The first present key of `keys`.
    pub fn first_uint(&self, keys: &[&str]) -> Result<Option<u64>, ModelError> {
        for k in keys {
            if let Some(v) = self.uint(k)? {
                return Ok(Some(v));
            }
        }
        Ok(None)
    }

    pub fn uint_or(&self, key: &str, default: u64) -> Result<u64, ModelError> {
        Ok(self.uint(key)?.unwrap_or(default))
    }

    /// `intermediate_size`, which Gemma 3n states per layer (MatFormer; vLLM and SGLang
    /// `gemma3n.py` build layer i from entry i): a list counts as its mean, rounded up, so the
    /// per-layer sum the parameter count takes is never short.
    pub fn intermediate_size(&self) -> Result<u64, ModelError> {
        const KEY: &str = "intermediate_size";
        match self.get(KEY) {
            Some(Value::Array(sizes)) if !sizes.is_empty() => {
                let mut sum = 0u64;
                for v in sizes {
                    sum += as_uint(v).ok_or_else(|| self.bad(KEY, v))?;
                }
                Ok(sum.div_ceil(sizes.len() as u64))
            }
            _ => self.uint_or(KEY, 0),
        }
    }

    pub fn required(&self, keys: &[&str]) -> Result<u64, ModelError> {
        self.first_uint(keys)?
            .ok_or_else(|| invalid(self.file, format!("missing `{}`", keys[0])))
    }

    pub fn u32(&self, key: &str, v: u64) -> Result<u32, ModelError> {
        u32::try_from(v).map_err(|_| invalid(self.file, format!("`{key}` = {v} is out of range")))
    }

    pub fn str(&self, key: &str) -> Option<&'a str> {
        self.get(key).and_then(Value::as_str)
    }

    pub fn flag(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(Value::as_bool)
    }

    fn bad(&self, key: &str, v: &Value) -> ModelError {
        invalid(
            self.file,
            format!("`{key}` should be a non-negative integer, found {v}"),
        )
    }
}

pub(crate) fn invalid(file: &str, cause: impl Into<String>) -> ModelError {
    ModelError::Invalid {
        file: file.to_string(),
        cause: cause.into(),
    }
}

/// Integers, and floats that hold an integer (some exporters write `4096.0`).
pub(crate) fn as_uint(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1e19)
            .map(|f| f as u64)
    })
}

/// The `quantization_config` of the text model, else of the top level.
pub(crate) fn quant_config<'a>(c: &Cfg<'a>) -> Option<&'a Obj> {
    ["quantization_config", "compression_config"]
        .iter()
        .find_map(|k| {
            c.text
                .get(*k)
                .or_else(|| c.root.get(*k))
                .and_then(Value::as_object)
        })
}

/// Routed experts per MoE layer (`n_routed_experts`, `num_experts`, `num_local_experts`).
pub(crate) fn num_experts(c: &Cfg) -> Result<u64, ModelError> {
    Ok(
        c.first_uint(&["n_routed_experts", "num_experts", "num_local_experts"])?
            .unwrap_or(0),
    )
}
