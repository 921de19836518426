//! Values argparse accepts but the engine refuses when it starts (or turns into garbage pools):
//! each is a CFG004 finding that names the engine's own check.

use super::{EngineArgs, Setting, SettingValue};
use crate::finding::Finding;
use crate::launch::Engine;
use crate::version::Version;

/// A check: dest, what the engine requires, where it checks, and the test on the value.
struct Rule {
    dest: &'static str,
    expected: &'static str,
    ok: fn(f64) -> bool,
}

const FRACTION: &str = "a fraction in (0, 1]";
const POSITIVE: &str = "a positive integer";

fn fraction(v: f64) -> bool {
    v > 0.0 && v <= 1.0
}

fn positive(v: f64) -> bool {
    v >= 1.0
}

/// SGLang: ServerArgs.__post_init__ sizes the pool as `mem_fraction_static` of free memory
/// (sglang/srt/model_executor/model_runner.py::profile_max_num_token) and splits the model over
/// tp × pp × dp ranks; a page or context of 0 divides by zero (mem_cache/memory_pool.py).
const SGLANG: &[Rule] = &[
    Rule {
        dest: "mem_fraction_static",
        expected: FRACTION,
        ok: fraction,
    },
    Rule {
        dest: "context_length",
        expected: POSITIVE,
        ok: positive,
    },
    Rule {
        dest: "tp_size",
        expected: POSITIVE,
        ok: positive,
    },
    Rule {
        dest: "pp_size",
        expected: POSITIVE,
        ok: positive,
    },
    Rule {
        dest: "dp_size",
        expected: POSITIVE,
        ok: positive,
    },
    Rule {
        dest: "page_size",
        expected: POSITIVE,
        ok: positive,
    },
];

/// vLLM: pydantic constraints of vllm/config/cache.py::CacheConfig
/// (`gpu_memory_utilization: Field(gt=0, le=1)`, `block_size: Field(gt=0)`) and
/// vllm/config/parallel.py::ParallelConfig (`*_parallel_size: Field(ge=1)`); a
/// `max_model_len` of 0 leaves no room for a single token (config/model.py).
const VLLM: &[Rule] = &[
    Rule {
        dest: "gpu_memory_utilization",
        expected: FRACTION,
        ok: fraction,
    },
    Rule {
        dest: "max_model_len",
        expected: POSITIVE,
        ok: positive,
    },
    Rule {
        dest: "tensor_parallel_size",
        expected: POSITIVE,
        ok: positive,
    },
    Rule {
        dest: "pipeline_parallel_size",
        expected: POSITIVE,
        ok: positive,
    },
    Rule {
        dest: "data_parallel_size",
        expected: POSITIVE,
        ok: positive,
    },
    Rule {
        dest: "block_size",
        expected: POSITIVE,
        ok: positive,
    },
];

/// TensorRT-LLM: tensorrt_llm/llmapi/llm_args.py::KvCacheConfig validates
/// `free_gpu_memory_fraction` to (0, 1]; `tensor_parallel_size`/`pipeline_parallel_size` ≥ 1.
const TRTLLM: &[Rule] = &[
    Rule {
        dest: "kv_cache_config.free_gpu_memory_fraction",
        expected: FRACTION,
        ok: fraction,
    },
    Rule {
        dest: "tensor_parallel_size",
        expected: POSITIVE,
        ok: positive,
    },
    Rule {
        dest: "pipeline_parallel_size",
        expected: POSITIVE,
        ok: positive,
    },
];

/// vllm/config/cache.py::CacheDType (0.33.0): from 0.33 `--kv-cache-dtype` is a plain string
/// for argparse and CacheConfig._validate_cache_dtype refuses anything else (`bf16`, `FP8`).
const VLLM_KV_DTYPES: &[&str] = &[
    "auto",
    "float16",
    "bfloat16",
    "fp8",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_inc",
    "fp8_ds_mla",
    "nvfp4_ds_mla",
    "turboquant_k8v4",
    "turboquant_4bit_nc",
    "turboquant_k3v4_nc",
    "turboquant_3bit_nc",
    "octave_k3v4",
    "octave_k3v3",
    "octave_k3v3_compact",
    "ultraquant_4bit",
    "int4_per_token_head",
    "int8_per_token_head",
    "fp8_per_token_head",
    "nvfp4",
    "nvfp4_4over6",
];

/// CFG004 for every value the engine would refuse at startup.
pub fn check(args: &EngineArgs) -> Vec<Finding> {
    let rules = match args.engine {
        Engine::Sglang => SGLANG,
        Engine::Vllm => VLLM,
        Engine::Trtllm => TRTLLM,
    };
    let mut out: Vec<Finding> = rules
        .iter()
        .filter_map(|r| {
            let s = args.get(r.dest)?;
            let v = number(s)?;
            (!(r.ok)(v)).then(|| refused(s, r.dest, r.expected.to_string()))
        })
        .collect();
    let kv = args
        .get("kv_cache_dtype")
        .filter(|s| s.unresolved.is_empty());
    let new_vllm = args.engine == Engine::Vllm && args.version.release() >= Version::new(0, 33, 0);
    if let (Some(s), true) = (kv, new_vllm) {
        let known = args
            .text("kv_cache_dtype")
            .is_some_and(|t| VLLM_KV_DTYPES.contains(&t));
        if !known {
            let expected = format!("one of {}", VLLM_KV_DTYPES.join(", "));
            out.push(refused(s, "kv_cache_dtype", expected));
        }
    }
    out
}

fn number(s: &Setting) -> Option<f64> {
    match s.value {
        SettingValue::Int(i) => Some(i as f64),
        SettingValue::Float(f) => Some(f),
        _ => None,
    }
}

fn refused(s: &Setting, dest: &str, expected: String) -> Finding {
    Finding::new("CFG004", Some(s.loc()))
        .var("flag", written(dest))
        .var("value", super::value_text(&s.value))
        .var(
            "expected",
            format!("{expected} (the engine refuses it at startup)"),
        )
}

/// The option as the engines' help spells it (TRT-LLM's engine YAML keys stay dotted).
fn written(dest: &str) -> String {
    if dest.contains('.') {
        dest.to_string()
    } else {
        format!("--{}", dest.replace('_', "-"))
    }
}

/// More pipeline stages than decoder layers leaves stages without a layer: both engines split
/// layers with `get_pp_indices` (vllm/distributed/utils.py, sglang/srt/distributed/utils.py),
/// which cannot give every stage one.
pub fn check_layers(args: &EngineArgs, layers: u32) -> Option<Finding> {
    let dest = match args.engine {
        Engine::Sglang => "pp_size",
        Engine::Vllm | Engine::Trtllm => "pipeline_parallel_size",
    };
    let s = args.get(dest)?;
    let pp = number(s)?;
    (layers > 0 && pp > f64::from(layers)).then(|| {
        let expected = format!("at most {layers}, the model's decoder layers");
        refused(s, dest, expected)
    })
}
