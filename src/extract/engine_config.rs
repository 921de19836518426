//! A YAML file that is itself an engine config (what `--config FILE` would load), as a launch.
//!
//! SGLang and vLLM both read a flat mapping of option names to values; which engine a file is for
//! is told by the keys only one of them has. A TensorRT-LLM extra-options file
//! (`extra_llm_api_options`, the wide-EP engine configs) is told by the LLM-API fields only it has,
//! and is read as the `trtllm-serve --extra_llm_api_options FILE` launch it configures.

use crate::launch::{Arg, Engine, Launch, LaunchFile};
use crate::source::{Loc, SourceFile};
use crate::yaml::{Node, Value};

/// Keys only SGLang's `ServerArgs` has (dashes or underscores).
const SGLANG_KEYS: &[&str] = &[
    "model-path",
    "tp-size",
    "dp-size",
    "pp-size",
    "ep-size",
    "mem-fraction-static",
    "context-length",
    "max-running-requests",
    "max-total-tokens",
    "chunked-prefill-size",
    "disaggregation-mode",
    "attention-backend",
    "page-size",
    "cuda-graph-max-bs",
];

/// Keys only vLLM's `EngineArgs` has.
const VLLM_KEYS: &[&str] = &[
    "max-model-len",
    "gpu-memory-utilization",
    "tensor-parallel-size",
    "pipeline-parallel-size",
    "data-parallel-size",
    "max-num-seqs",
    "max-num-batched-tokens",
    "block-size",
    "enforce-eager",
    "kv-cache-memory-bytes",
];

/// `TorchLlmArgs` fields (tensorrt_llm/llmapi/llm_args.py) that neither SGLang nor vLLM has.
const TRTLLM_KEYS: &[&str] = &[
    "kv-cache-config",
    "cuda-graph-config",
    "enable-attention-dp",
    "moe-expert-parallel-size",
    "moe-config",
    "disable-overlap-scheduler",
    "max-seq-len",
    "print-iter-log",
    "attention-dp-config",
    "build-config",
    "pytorch-backend-config",
];

/// The engine a mapping configures, if its keys say so: any TensorRT-LLM-only field makes it
/// TensorRT-LLM's; `model-path` is SGLang's; otherwise the engine with more of its own keys wins.
/// Kubernetes objects (`apiVersion`, `kind`) never match.
pub fn detect(node: &Node) -> Option<Engine> {
    let Value::Map(entries) = &node.value else {
        return None;
    };
    let keys: Vec<String> = entries
        .iter()
        .filter_map(|(k, _)| k.as_str())
        .map(|k| k.replace('_', "-"))
        .collect();
    detect_keys(&keys)
}

/// [`detect`] on a mapping's keys, spelled as flags without their dashes (`max-model-len`).
pub fn detect_keys(keys: &[String]) -> Option<Engine> {
    if keys.iter().any(|k| k == "apiVersion" || k == "kind") {
        return None;
    }
    let count = |table: &[&str]| keys.iter().filter(|k| table.contains(&k.as_str())).count();
    let (sglang, vllm) = (count(SGLANG_KEYS), count(VLLM_KEYS));
    if count(TRTLLM_KEYS) > 0 {
        Some(Engine::Trtllm)
    } else if keys.iter().any(|k| k == "model-path") || (sglang > vllm) {
        Some(Engine::Sglang)
    } else if vllm > 0 {
        Some(Engine::Vllm)
    } else {
        None
    }
}

/// The launch an engine-config document stands for: no command words (an empty span at the start
/// of the mapping) and the mapping's entries as argv tokens.
pub fn launch(src: &SourceFile, node: &Node) -> Option<Result<Launch, String>> {
    let engine = detect(node)?;
    if engine == Engine::Trtllm {
        return Some(Ok(trtllm_launch(src, node)));
    }
    let mut args = match crate::engine::config_file_args(engine, node) {
        Ok(args) => args,
        Err(e) => return Some(Err(e)),
    };
    // A `$NAME` left in a value (a file `envsubst` or a script's heredoc fills) is a value kvlint
    // does not see, not the text itself.
    super::option_map::unresolved_placeholders(engine, &mut args);
    let start = Loc {
        end: node.loc.start,
        ..node.loc
    };
    Some(Ok(Launch::new(engine, start, args)))
}

/// `trtllm-serve --extra_llm_api_options FILE` with FILE this very file, given to the engine as
/// the launch's own copy so its keys keep their spans here.
fn trtllm_launch(src: &SourceFile, node: &Node) -> Launch {
    let at = Loc {
        end: node.loc.start,
        ..node.loc
    };
    let args = vec![
        Arg::new("--extra_llm_api_options", at),
        Arg::new(src.name.clone(), at),
    ];
    let mut launch = Launch::new(Engine::Trtllm, at, args);
    launch.files.push(LaunchFile {
        path: src.name.clone(),
        content: Ok((src.name.clone(), src.text.clone())),
        mapping: None,
    });
    launch
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;
    use crate::yaml::parse_document;

    fn engine_of(text: &str) -> Option<Engine> {
        let mut s = Sources::default();
        let id = s.add("c.yaml", text);
        parse_document(id, s.get(id)).ok().and_then(|n| detect(&n))
    }

    #[test]
    fn keys_tell_the_engine() {
        assert_eq!(engine_of("model_path: x\n"), Some(Engine::Sglang));
        assert_eq!(
            engine_of("tp-size: 2\ncontext-length: 4096\n"),
            Some(Engine::Sglang)
        );
        assert_eq!(
            engine_of("model: x\nmax-model-len: 4096\n"),
            Some(Engine::Vllm)
        );
        assert_eq!(
            engine_of("model: x\ntensor_parallel_size: 2\n"),
            Some(Engine::Vllm)
        );
        assert_eq!(engine_of("model: x\nport: 8000\n"), None);
        assert_eq!(
            engine_of("apiVersion: v1\nkind: Pod\nmodel-path: x\n"),
            None
        );
        assert_eq!(engine_of("- model-path\n"), None);
        // TensorRT-LLM extra options share `tensor_parallel_size` with vLLM, never `kv_cache_config`.
        assert_eq!(
            engine_of("tensor_parallel_size: 8\nenable_attention_dp: true\nkv_cache_config:\n  free_gpu_memory_fraction: 0.8\n"),
            Some(Engine::Trtllm)
        );
    }

    #[test]
    fn a_list_value_gives_the_flag_then_each_item() {
        let mut s = Sources::default();
        let id = s.add(
            "c.yaml",
            "model: m\nmax-model-len: 8\nserved-model-name: [a, b]\n",
        );
        let node = parse_document(id, s.get(id)).expect("valid YAML");
        let Some(Ok(launch)) = launch(s.get(id), &node) else {
            panic!("not a launch")
        };
        let texts: Vec<&str> = launch.args.iter().map(|a| a.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "--model",
                "m",
                "--max-model-len",
                "8",
                "--served-model-name",
                "a",
                "b"
            ]
        );
        assert_eq!(s.text(launch.args[6].loc), "b");
    }
}
