//! A YAML document that names its engine as a setting's value (`engine: tensorrt_llm`, a
//! container named `vllm`) beside settings that size it (`tensorParallelism: "1"`,
//! `parallelism: {tensor: 2}`, `max_model_len`): an engine's settings even where no entrypoint is
//! written, so a document that gives no launch is not silent about it. Read line by line, as
//! the other unread checks are (the document may be a template that is no YAML yet).

use super::images::{engine_image, EngineImage};
use std::ops::Range;

/// Keys whose value names the engine that runs.
const ENGINE_KEYS: &[&str] = &[
    "engine",
    "backend",
    "inference_engine",
    "inferenceengine",
    "engine_type",
    "serving_engine",
    "runtime",
    "framework",
];

/// Engine names as such values spell them, and the engine's title.
const ENGINE_VALUES: &[(&str, &str)] = &[
    ("vllm", "vLLM"),
    ("sglang", "SGLang"),
    ("tensorrt_llm", "TensorRT-LLM"),
    ("tensorrt-llm", "TensorRT-LLM"),
    ("tensorrtllm", "TensorRT-LLM"),
    ("trtllm", "TensorRT-LLM"),
    ("trt-llm", "TensorRT-LLM"),
];

/// Keys that size an engine besides the engines' own options (`unread::SIZING_OPTIONS`), as
/// platforms spell them, lower case without `_` and `-`.
const PLATFORM_SIZING_KEYS: &[&str] = &[
    "tensorparallelism",
    "tensorparalleldegree",
    "tpsize",
    "pipelineparallelism",
    "pipelineparallelsize",
    "freegpumemoryfraction",
];

/// Whether a key, folded (lower case without `_` and `-`), sizes an engine.
fn sizes(folded: &str) -> bool {
    PLATFORM_SIZING_KEYS.contains(&folded) || super::unread::sizing_option_folded(folded)
}

/// Where the document names its engine as a value, the engine and the key, when it also sizes it.
pub fn named_with_sizing(text: &str) -> Option<(Range<usize>, &'static str, String)> {
    let mut stack: Vec<(usize, &str)> = Vec::new();
    let (mut engine, mut sized) = (None, false);
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let code = line.find(" #").map_or(line, |n| &line[..n]).trim_end();
        let mut indent = code.len() - code.trim_start().len();
        let mut entry = code.trim_start();
        if entry.is_empty() || entry.starts_with('#') || entry.starts_with("---") {
            continue;
        }
        if let Some(rest) = entry.strip_prefix("- ") {
            indent += 2;
            entry = rest;
        }
        let Some((key, value)) = entry.split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']);
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        let parent = stack.last().map_or("", |(_, k)| *k);
        stack.push((indent, key));
        let folded: String = key
            .chars()
            .filter(|c| *c != '_' && *c != '-')
            .collect::<String>()
            .to_ascii_lowercase();
        sized |= sizes(&folded) || (key == "tensor" && parent == "parallelism");
        let names = ENGINE_KEYS.contains(&key.to_ascii_lowercase().as_str())
            || (key == "name" && parent == "containers");
        let v = value.trim().trim_matches(['"', '\'']);
        let hit = ENGINE_VALUES
            .iter()
            .find(|(n, _)| v.eq_ignore_ascii_case(n));
        if let (true, None, Some((_, title))) = (names, &engine, hit) {
            let at = start + line.find(v).unwrap_or(0);
            engine = Some((at..at + v.len(), *title, key.to_string()));
        }
    }
    engine.filter(|_| sized)
}

/// Where a document that is no Kubernetes object and no compose file (a chart's values, a
/// platform's own config) names an engine's image, the image and what it is known to run
/// ([`crate::extract::images`]): `vllm/vllm-openai` images start `vllm serve` (vllm
/// docker/Dockerfile, target `vllm-openai`), so such an image is a vLLM launch even where no
/// command is written; an image named for an engine (`quay.io/opendatahub/vllm`) carries it.
/// Objects and compose services are not counted: their readers run that entrypoint where no
/// command replaces it.
pub fn entrypoint_image(text: &str) -> Option<(Range<usize>, String, EngineImage)> {
    let mut offset = 0;
    let mut found = None;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let code = line.find(" #").map_or(line, |n| &line[..n]).trim_end();
        let top = !code.starts_with([' ', '\t', '-']);
        let Some((key, value)) = code.trim_start().trim_start_matches("- ").split_once(':') else {
            continue;
        };
        let key = key.trim().trim_matches(['"', '\'']);
        if top && ["apiVersion", "kind", "services"].contains(&key) {
            return None;
        }
        let v = value.trim().trim_matches(['"', '\'']);
        let known = ["image", "repository"].contains(&key) && !v.is_empty();
        if let (None, true, Some(kind)) = (&found, known, known.then(|| engine_image(v)).flatten())
        {
            let at = start + line.find(v).unwrap_or(0);
            found = Some((at..at + v.len(), v.to_string(), kind));
        }
    }
    found
}

/// An engine's image beside env that sizes it (`TENSOR_PARALLEL_SIZE=8`, `- name: MAX_MODEL_LEN`):
/// a container that runs the engine through a command kvlint cannot follow (`bash /app/start.sh`
/// from a mounted folder). Where the image is, and what names the engine, for INP006.
pub fn image_with_sizing_env(text: &str) -> Option<(Range<usize>, String)> {
    let (mut image, mut env) = (None, None);
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let code = line.find(" #").map_or(line, |n| &line[..n]).trim();
        let entry = code.strip_prefix("- ").unwrap_or(code).trim();
        let (key, value) = entry.split_once(':').unwrap_or((entry, ""));
        let (key, v) = (
            key.trim().trim_matches(['"', '\'']),
            value.trim().trim_matches(['"', '\'']),
        );
        if let (true, None, Some(kind)) = (key == "image", &image, engine_image(v)) {
            let at = start + line.find(v).unwrap_or(0);
            image = Some((at..at + v.len(), v.to_string(), kind));
        }
        // `- NAME=value` (compose), `- name: NAME` (Kubernetes), `NAME: value` (a map).
        let name = match entry.split_once('=') {
            Some((n, _)) if !n.contains([' ', ':']) => n,
            _ if key == "name" => v,
            _ => key,
        };
        if env.is_none() && super::unread::sizing_env(name) {
            env = Some(name.to_string());
        }
    }
    let ((at, image, kind), env) = (image?, env?);
    let what = format!(
        "{} (the image `{image}`, with `{env}` set for it)",
        kind.engine().title()
    );
    Some((at, what))
}

#[cfg(test)]
mod tests {
    use super::{entrypoint_image, named_with_sizing};

    #[test]
    fn an_engine_image_outside_objects_and_compose_files() {
        let values = "image:\n  repository: ghcr.io/neuralmagic/nm-vllm-openai\n  tag: v0.1.0\nmodelName: m\n";
        let (at, image, _) = entrypoint_image(values).unwrap();
        assert_eq!(
            (&values[at], image.as_str()),
            (
                "ghcr.io/neuralmagic/nm-vllm-openai",
                "ghcr.io/neuralmagic/nm-vllm-openai"
            )
        );
        for text in [
            // Objects and compose services: their readers run the image's entrypoint.
            "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai\n",
            "services:\n  vllm:\n    image: vllm/vllm-openai:latest\n",
            // Other images, and a comment.
            "image:\n  repository: ghcr.io/huggingface/text-generation-inference\n",
            "image: app  # vllm/vllm-openai\n",
        ] {
            assert_eq!(entrypoint_image(text), None, "{text}");
        }
    }

    #[test]
    fn an_engine_named_as_a_value_beside_its_sizing_settings() {
        let nim_cache = "kind: NIMCache\nspec:\n  source:\n    ngc:\n      model:\n        engine: tensorrt_llm\n        tensorParallelism: \"1\"\n";
        let (at, engine, key) = named_with_sizing(nim_cache).unwrap();
        assert_eq!(
            (&nim_cache[at], engine, key.as_str()),
            ("tensorrt_llm", "TensorRT-LLM", "engine")
        );
        let crd = "spec:\n  parallelism:\n    tensor: 2\n  template:\n    spec:\n      containers:\n      - name: vllm\n        resources: {}\n";
        assert_eq!(
            named_with_sizing(crd).map(|(_, e, k)| (e, k)),
            Some(("vLLM", "name".into()))
        );
    }

    #[test]
    fn a_name_or_a_size_alone_is_not_an_engines_settings() {
        // A benchmark client's backend, a Service named vllm, a tensor key elsewhere.
        for text in [
            "backend: vllm\nconcurrency: 8\n",
            "kind: Service\nmetadata:\n  name: vllm\n",
            "spec:\n  containers:\n  - name: app\n  parallelism:\n    tensor: 2\n",
            "model:\n  engine: vllm  # tensorParallelism: 2\n",
        ] {
            assert_eq!(named_with_sizing(text), None, "{text}");
        }
    }
}
