//! Weight and KV-cache quantization as the checkpoint's `quantization_config` declares it.

use serde_json::Value;

use super::raw::{quant_config, Cfg, Obj};
use super::Quantization;

pub(crate) fn quantization(c: &Cfg) -> Option<Quantization> {
    let q = quant_config(c)?;
    let method = quant_method(q);
    let weight_bits = weight_bits(q, &method);
    Some(Quantization {
        kv_cache_fp8: kv_cache_fp8(q),
        group_size: group_size(q, &method),
        method,
        weight_bits,
    })
}

/// Weights per scale as the config fixes them (0: per output channel), read the way
/// `weight_format.rs` prices them: AWQ/GPTQ `group_size` (-1 per channel), OCP MXFP4 32,
/// NVFP4 16, compressed-tensors `strategy` group/channel, Quark's weight `group_size`.
/// None where the layout is the loader's choice (bitsandbytes, unknown methods).
fn group_size(q: &Obj, method: &str) -> Option<u32> {
    let own = |o: &Obj| o.get("group_size").and_then(Value::as_i64);
    let sized = |g: i64| u32::try_from(g.max(0)).ok();
    match method {
        "awq" | "awq_marlin" | "gptq" | "gptq_marlin" => own(q).and_then(sized),
        "mxfp4" => Some(32),
        "compressed-tensors" => {
            let groups = ct_groups(q);
            let (_, w) = groups.first()?;
            match w.get("strategy").and_then(Value::as_str) {
                Some("group" | "tensor_group") => own(w).and_then(sized),
                Some("channel") => Some(0),
                _ => None,
            }
        }
        "quark" => quark_weight(q).and_then(own).and_then(sized),
        "modelopt" | "modelopt_fp4" => match modelopt_algo(q).as_deref() {
            Some("MIXED_PRECISION") => mixed_layers(q)
                .into_iter()
                .filter(|(bits, _)| *bits == 4)
                .find_map(|(_, group)| group),
            Some(a) if a.contains("NVFP4") => Some(16),
            Some(_) => q
                .get("quantization")
                .and_then(Value::as_object)
                .map_or_else(|| own(q), own)
                .and_then(sized),
            None => None,
        },
        _ => None,
    }
}

/// ModelOpt `kv_cache_quant_algo: FP8`, compressed-tensors `kv_cache_scheme` with 8-bit floats,
/// Quark `kv_cache_quant_config` (vLLM `ModelConfig._verify_quantization` and the methods'
/// `get_cache_scale` paths).
fn kv_cache_fp8(q: &Obj) -> bool {
    let modelopt = q
        .get("quantization")
        .and_then(Value::as_object)
        .unwrap_or(q);
    if let Some(algo) = modelopt.get("kv_cache_quant_algo").and_then(Value::as_str) {
        return algo.eq_ignore_ascii_case("fp8");
    }
    if let Some(s) = q.get("kv_cache_scheme").and_then(Value::as_object) {
        let bits = s.get("num_bits").and_then(Value::as_u64);
        return bits == Some(8) && s.get("type").and_then(Value::as_str) == Some("float");
    }
    q.get("kv_cache_quant_config")
        .and_then(Value::as_object)
        .is_some_and(|kv| {
            kv.values().any(|v| {
                v.pointer("/output_tensors/dtype")
                    .and_then(Value::as_str)
                    .is_some_and(|d| d.starts_with("fp8"))
            })
        })
}

/// `quant_method`, lower-cased; ModelOpt configs may omit it.
pub(crate) fn quant_method(q: &Obj) -> String {
    if let Some(m) = q.get("quant_method").and_then(Value::as_str) {
        return m.to_ascii_lowercase();
    }
    if q.contains_key("quant_algo") || q.get("quantization").is_some_and(Value::is_object) {
        return "modelopt".into();
    }
    if q.contains_key("load_in_4bit") || q.contains_key("load_in_8bit") {
        return "bitsandbytes".into();
    }
    "unknown".into()
}

/// Bits per quantized weight, scales excluded; 16 when the method is unknown.
pub(crate) fn weight_bits(q: &Obj, method: &str) -> u32 {
    let bits = |v: Option<&Value>| v.and_then(Value::as_u64).map(|b| b as u32);
    match method {
        "fp8" | "fbgemm_fp8" => 8,
        "mxfp4" => 4,
        "awq" | "awq_marlin" | "gptq" | "gptq_marlin" => bits(q.get("bits")).unwrap_or(4),
        "compressed-tensors" => ct_groups(q)
            .first()
            .and_then(|(_, w)| bits(w.get("num_bits")))
            .unwrap_or(16),
        "quark" => quark_weight(q)
            .and_then(|w| w.get("dtype"))
            .and_then(Value::as_str)
            .map_or(16, dtype_bits),
        "modelopt" | "modelopt_fp4" => match modelopt_algo(q).as_deref() {
            Some("MIXED_PRECISION") => mixed_layers(q)
                .into_iter()
                .map(|(bits, _)| bits)
                .min()
                .unwrap_or(16),
            Some(a) if a.contains("FP8") => 8,
            Some(_) => 4,
            None => 16,
        },
        "bitsandbytes" => {
            if q.get("load_in_4bit").and_then(Value::as_bool) == Some(true) {
                4
            } else {
                8
            }
        }
        _ => 16,
    }
}

/// Weight bits and group size of each layer a ModelOpt MIXED_PRECISION checkpoint quantizes:
/// its `quantized_layers` (NVFP4 group size 16 unless stated, as vLLM 0.24.0 `modelopt.py ::
/// ModelOptMixedPrecisionConfig._from_config` takes it) or, in a config.json export, its
/// `config_groups` weight schemes. Algorithms kvlint does not price are left out.
fn mixed_layers(q: &Obj) -> Vec<(u32, Option<u32>)> {
    let inner = q
        .get("quantization")
        .and_then(Value::as_object)
        .unwrap_or(q);
    let group = |o: &Obj| {
        o.get("group_size")
            .and_then(Value::as_u64)
            .and_then(|g| u32::try_from(g).ok())
    };
    if let Some(layers) = inner.get("quantized_layers").and_then(Value::as_object) {
        let algo = |l: &Obj| l.get("quant_algo")?.as_str().map(str::to_ascii_uppercase);
        return layers
            .values()
            .filter_map(Value::as_object)
            .filter_map(|l| match algo(l)?.as_str() {
                "FP8" => Some((8, None)),
                "NVFP4" | "W4A16_NVFP4" => Some((4, group(l).or(Some(16)))),
                _ => None,
            })
            .collect();
    }
    ct_groups(q)
        .into_iter()
        .filter(|(_, w)| w.get("type").and_then(Value::as_str) == Some("float"))
        .filter_map(|(_, w)| match w.get("num_bits").and_then(Value::as_u64) {
            Some(8) => Some((8, None)),
            Some(4) => Some((4, group(w))),
            _ => None,
        })
        .collect()
}

pub(crate) fn quark_weight(q: &Obj) -> Option<&Obj> {
    q.get("global_quant_config")?.get("weight")?.as_object()
}

pub(crate) fn dtype_bits(d: &str) -> u32 {
    if d.contains('4') {
        4
    } else if d.contains('8') {
        8
    } else {
        16
    }
}

pub(crate) fn modelopt_algo(q: &Obj) -> Option<String> {
    let q = q
        .get("quantization")
        .and_then(Value::as_object)
        .unwrap_or(q);
    q.get("quant_algo")
        .and_then(Value::as_str)
        .map(str::to_ascii_uppercase)
}

pub(crate) fn ct_groups(q: &Obj) -> Vec<(&Obj, &Obj)> {
    let Some(groups) = q.get("config_groups").and_then(Value::as_object) else {
        return Vec::new();
    };
    groups
        .values()
        .filter_map(Value::as_object)
        .filter_map(|g| g.get("weights").and_then(Value::as_object).map(|w| (g, w)))
        .collect()
}

pub(crate) fn list(q: &Obj, key: &str) -> Vec<String> {
    let items = q.get(key).and_then(Value::as_array).into_iter().flatten();
    items
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn group(q: Value) -> Option<u32> {
        let q = q.as_object().unwrap();
        group_size(q, &quant_method(q))
    }

    #[test]
    fn group_size_is_what_the_config_fixes() {
        assert_eq!(
            group(json!({"quant_method": "awq", "bits": 4, "group_size": 128})),
            Some(128)
        );
        assert_eq!(
            group(json!({"quant_method": "gptq", "bits": 4, "group_size": -1})),
            Some(0)
        );
        assert_eq!(group(json!({"quant_method": "gptq", "bits": 4})), None);
        assert_eq!(group(json!({"quant_method": "mxfp4"})), Some(32));
        assert_eq!(group(json!({"quant_algo": "NVFP4"})), Some(16));
        assert_eq!(
            group(
                json!({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights":
                {"num_bits": 4, "strategy": "group", "group_size": 32}}}})
            ),
            Some(32)
        );
        assert_eq!(
            group(
                json!({"quant_method": "quark", "global_quant_config": {"weight":
                {"dtype": "fp4", "group_size": 32}}})
            ),
            Some(32)
        );
        assert_eq!(group(json!({"load_in_4bit": true})), None);
    }

    fn bits(q: Value) -> u32 {
        let q = q.as_object().unwrap();
        weight_bits(q, &quant_method(q))
    }

    #[test]
    fn modelopt_mixed_precision_takes_its_narrowest_layer() {
        let groups = |w: Value| {
            json!({"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "config_groups": {
                "a": {"weights": {"num_bits": 8, "type": "float"}, "targets": ["x"]},
                "b": {"weights": w, "targets": ["y"]}}})
        };
        let nvfp4 = groups(json!({"num_bits": 4, "type": "float", "group_size": 16}));
        assert_eq!((bits(nvfp4.clone()), group(nvfp4)), (4, Some(16)));
        let fp8 = groups(json!({"num_bits": 8, "type": "float"}));
        assert_eq!((bits(fp8.clone()), group(fp8)), (8, None));
        let layers = json!({"quantization": {"quant_algo": "MIXED_PRECISION", "quantized_layers": {
            "e": {"quant_algo": "NVFP4"}, "a": {"quant_algo": "FP8"}}}});
        assert_eq!((bits(layers.clone()), group(layers)), (4, Some(16)));
        let unknown = json!({"quant_algo": "MIXED_PRECISION", "quantized_layers": {
            "a": {"quant_algo": "W4A8_AWQ"}}});
        assert_eq!(bits(unknown), 16);
    }
}
