//! A YAML document that names its engine as a setting's value (`engine: tensorrt_llm`,
//! `engine: {type: vllm}`, a container named `vllm`): an engine's settings even where no
//! entrypoint is written, so a document that gives no launch is not silent about it. Read line by
//! line, as the other unread checks are (the document may be a template that is no YAML yet).

use super::images::{engine_image, EngineImage};
use crate::launch::Engine;
use std::ops::Range;

/// Keys whose value names the engine that runs and nothing else (`engine`, `inferenceEngine`),
/// folded: lower case without `_` and `-`.
const ENGINE_KEYS: &[&str] = &[
    "engine",
    "enginetype",
    "enginename",
    "inferenceengine",
    "servingengine",
];

/// Keys whose value may name an engine or something else (a benchmark client's `backend`, an AI
/// gateway's provider `type`), folded.
const MAYBE_ENGINE_KEYS: &[&str] = &[
    "backend",
    "inferencebackend",
    "servingbackend",
    "runtime",
    "servingruntime",
    "framework",
    "type",
];

/// Keys under which values are labels, selectors or annotations, which name things but configure
/// nothing (`labels: {framework: vllm}`), folded.
const NOT_SETTINGS: &[&str] = &[
    "labels",
    "annotations",
    "selector",
    "matchlabels",
    "nodeselector",
    "commonlabels",
    "commonannotations",
    "podlabels",
    "podannotations",
];

/// Engine names folded (lower case without `-`, `_`, `.` and spaces: `TensorRT-LLM`, `trt_llm`,
/// `vLLM`), and the engine.
const ENGINE_VALUES: &[(&str, Engine)] = &[
    ("vllm", Engine::Vllm),
    ("sglang", Engine::Sglang),
    ("tensorrtllm", Engine::Trtllm),
    ("trtllm", Engine::Trtllm),
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

/// A key or value lower case without `_` and `-` (`maxModelLen` → `maxmodellen`).
fn fold(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '_' | '-'))
        .collect::<String>()
        .to_ascii_lowercase()
}

/// Whether values under `key` are labels, selectors or annotations.
pub fn not_settings(key: &str) -> bool {
    NOT_SETTINGS.contains(&fold(key).as_str())
}

/// Whether a key, folded, sizes an engine.
fn sizes(folded: &str) -> bool {
    PLATFORM_SIZING_KEYS.contains(&folded) || super::unread::sizing_option_folded(folded)
}

/// Whether a key as written (`tpSize`, `tensor_parallel_size`) sizes an engine.
pub fn sizes_engine(key: &str) -> bool {
    sizes(&fold(key))
}

/// An engine named as a setting's value: where the value is, the engine's title, the key (with
/// its parent for `type` and `name`: `engine.type`), and whether settings beside it size it.
#[derive(Debug, PartialEq)]
pub struct Named {
    pub at: Range<usize>,
    pub engine: &'static str,
    pub key: String,
    pub sized: bool,
}

/// How surely a key names the engine that runs, and so what else the document must hold.
#[derive(Clone, Copy)]
enum Naming {
    /// `engine: vllm`, `engine: {type: vllm}`: the engine, whatever else the document holds.
    Engine,
    /// `backend: vllm`, `type: vllm`: an engine in a Kubernetes object's own fields (a controller
    /// runs it) or beside settings that size it; a client's target (a benchmark's `backend`, also
    /// in a config file a ConfigMap holds as text) otherwise.
    Maybe { embedded: bool },
    /// A container named `vllm`: the engine only beside settings that size it.
    Container,
}

impl Naming {
    /// Whether the naming says what runs, given whether the document sizes an engine and is a
    /// Kubernetes object.
    fn holds(self, sized: bool, object: bool) -> bool {
        match self {
            Naming::Engine => true,
            Naming::Maybe { embedded } => sized || (object && !embedded),
            Naming::Container => sized,
        }
    }
}

/// A line's indent (a list item's `- ` counted in) and its entry, outside comments; none for a
/// blank line, a comment or a document separator.
fn line_entry(line: &str) -> Option<(usize, &str)> {
    let code = line.find(" #").map_or(line, |n| &line[..n]).trim_end();
    let indent = code.len() - code.trim_start().len();
    let entry = code.trim_start();
    if entry.is_empty() || entry.starts_with('#') || entry.starts_with("---") {
        return None;
    }
    Some(match entry.strip_prefix("- ") {
        Some(rest) => (indent + 2, rest),
        None => (indent, entry),
    })
}

/// One `key: value` of a line: its key, and its value as a slice of the line.
struct Entry<'t> {
    key: &'t str,
    value: &'t str,
}

/// Where `part` (a slice of `whole`) starts in it.
fn offset(whole: &str, part: &str) -> usize {
    part.as_ptr() as usize - whole.as_ptr() as usize
}

/// A `key: value` pair, quotes taken off both (and a JSON member's trailing comma).
fn pair(text: &str) -> Option<Entry<'_>> {
    let (key, value) = text.split_once(':')?;
    let value = value.trim().trim_end_matches(',').trim_end();
    Some(Entry {
        key: key.trim().trim_matches(['"', '\'']),
        value: value.trim_matches(['"', '\'']),
    })
}

/// The entry a line holds, and each pair of a flow mapping that is its value (`engine: {type:
/// vllm, contextLength: 8192}`), which are its children.
fn entries(entry: &str) -> Option<(Entry<'_>, Vec<Entry<'_>>)> {
    let own = pair(entry)?;
    let flow = own
        .value
        .strip_prefix('{')
        .and_then(|v| v.strip_suffix('}'));
    let children = flow.into_iter().flat_map(|f| f.split(',')).filter_map(pair);
    Some((own, children.collect()))
}

/// Whether a value starts a block scalar (`|`, `>-`, `|2`): the lines under it are text.
fn starts_block(value: &str) -> bool {
    let rest = value.strip_prefix(['|', '>']);
    rest.is_some_and(|r| r.chars().all(|c| matches!(c, '+' | '-' | '0'..='9')))
}

/// How `key` (under `parent`) names an engine, if it may.
fn naming(key: &str, parent: &str) -> Option<Naming> {
    let (key, parent) = (fold(key), fold(parent));
    let by = |k: &str| {
        if ENGINE_KEYS.contains(&k) {
            Some(Naming::Engine)
        } else {
            let maybe = Naming::Maybe { embedded: false };
            MAYBE_ENGINE_KEYS.contains(&k).then_some(maybe)
        }
    };
    match key.as_str() {
        // `engine: {type: vllm}`, `backend: {name: sglang}`: the parent says what the value is.
        "type" | "name" if by(&parent).is_some() => by(&parent),
        "name" if parent == "containers" => Some(Naming::Container),
        _ => by(&key),
    }
}

/// The engine a value names, by its folded spelling.
fn engine_of(value: &str) -> Option<Engine> {
    let folded: String = fold(value)
        .chars()
        .filter(|c| !matches!(c, '.' | ' '))
        .collect();
    ENGINE_VALUES
        .iter()
        .find(|(n, _)| *n == folded)
        .map(|(_, engine)| *engine)
}

/// The engine a mapping's entry `key: value` (under `parent`, the key of the mapping that holds
/// it) names as what runs, given whether the settings beside it size an engine: the same
/// judgement [`named_as_value`] makes of a line, for a mapping already parsed (`framework:
/// sglang` beside `tpSize`; `engine: {type: vllm}`, passed as `type` under `engine`).
pub fn entry_names(key: &str, parent: &str, value: &str, sized: bool) -> Option<Engine> {
    let how = naming(key, parent)?;
    how.holds(sized, false).then(|| engine_of(value)).flatten()
}

/// Where the document names its engine as a setting's value, when that names what runs: a key
/// that only names engines (`engine`, `inferenceEngine`) always; one that may name other things
/// (`backend`, `type`) in a Kubernetes object or beside settings that size the engine; a
/// container's name beside such settings. Labels, selectors and annotations configure nothing.
pub fn named_as_value(text: &str) -> Option<Named> {
    let mut stack: Vec<(usize, &str)> = Vec::new();
    let mut hits: Vec<(Naming, Named)> = Vec::new();
    let (mut sized, mut api, mut kind) = (false, false, false);
    // The indent of the key whose block scalar the lines below it are.
    let mut block: Option<usize> = None;
    let mut next = 0;
    for line in text.split_inclusive('\n') {
        let start = next;
        next += line.len();
        let Some((indent, (own, children))) =
            line_entry(line).and_then(|(indent, e)| Some((indent, entries(e)?)))
        else {
            continue;
        };
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        block = block.filter(|b| indent > *b);
        let embedded = block.is_some();
        if !embedded && starts_block(own.value) {
            block = Some(indent);
        }
        api |= indent == 0 && own.key == "apiVersion";
        kind |= indent == 0 && own.key == "kind";
        let parent = stack.last().map_or("", |(_, k)| *k);
        let quiet = stack.iter().any(|(_, k)| not_settings(k));
        stack.push((indent, own.key));
        let mut look = |e: &Entry, parent: &str, quiet: bool| {
            sized |= sizes(&fold(e.key)) || (e.key == "tensor" && parent == "parallelism");
            let (Some(mut how), Some(engine), false) =
                (naming(e.key, parent), engine_of(e.value), quiet)
            else {
                return;
            };
            if let Naming::Maybe { .. } = how {
                how = Naming::Maybe { embedded };
            }
            let at = start + offset(line, e.value);
            let key = match fold(e.key).as_str() {
                "type" | "name" if !parent.is_empty() => format!("{parent}.{}", e.key),
                _ => e.key.to_string(),
            };
            let named = Named {
                at: at..at + e.value.len(),
                engine: engine.title(),
                key,
                sized: false,
            };
            hits.push((how, named));
        };
        look(&own, parent, quiet);
        for child in &children {
            look(child, own.key, quiet || not_settings(own.key));
        }
    }
    let object = api && kind;
    let (_, mut named) = hits.into_iter().find(|(how, _)| how.holds(sized, object))?;
    named.sized = sized;
    Some(named)
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
        // The image is read only on its own line: reading every line's value as one cost a
        // tenth of a 10,000-object render.
        let kind = (key == "image" && image.is_none())
            .then(|| engine_image(v))
            .flatten();
        if let Some(kind) = kind {
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
    use super::{entrypoint_image, named_as_value};

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

    /// The value a document names its engine with, the engine and the key.
    fn named(text: &str) -> Option<(&str, &'static str, String)> {
        named_as_value(text).map(|n| (&text[n.at], n.engine, n.key))
    }

    #[test]
    fn an_engine_named_as_a_value_beside_its_sizing_settings() {
        let nim_cache = "kind: NIMCache\nspec:\n  source:\n    ngc:\n      model:\n        engine: tensorrt_llm\n        tensorParallelism: \"1\"\n";
        assert_eq!(
            named(nim_cache),
            Some(("tensorrt_llm", "TensorRT-LLM", "engine".into()))
        );
        assert!(named_as_value(nim_cache).unwrap().sized);
        let crd = "spec:\n  parallelism:\n    tensor: 2\n  template:\n    spec:\n      containers:\n      - name: vllm\n        resources: {}\n";
        assert_eq!(
            named(crd).map(|(_, e, k)| (e, k)),
            Some(("vLLM", "containers.name".into()))
        );
    }

    #[test]
    fn an_engine_named_by_a_key_that_names_engines_alone() {
        // A serving CRD kvlint has no platform for: the engine is `engine.type`.
        let crd = "apiVersion: example.ai/v1\nkind: ModelDeployment\nspec:\n  engine:\n    type: vLLM\n    contextLength: 8192\n";
        assert_eq!(named(crd), Some(("vLLM", "vLLM", "engine.type".into())));
        // Flow mappings, camelCase keys, spellings of TensorRT-LLM; no sizing needed.
        for (text, value, engine, key) in [
            (
                "engine: {type: sglang}\n",
                "sglang",
                "SGLang",
                "engine.type",
            ),
            (
                "inferenceEngine: TensorRT-LLM\n",
                "TensorRT-LLM",
                "TensorRT-LLM",
                "inferenceEngine",
            ),
            (
                "servingEngine: \"trt_llm\"\n",
                "trt_llm",
                "TensorRT-LLM",
                "servingEngine",
            ),
            (
                "server:\n  engine_type: vllm\n",
                "vllm",
                "vLLM",
                "engine_type",
            ),
            (
                "{\n  \"engine\": {\n    \"type\": \"vllm\",\n",
                "vllm",
                "vLLM",
                "engine.type",
            ),
        ] {
            assert_eq!(
                named(text),
                Some((value, engine, key.to_string())),
                "{text}"
            );
        }
    }

    #[test]
    fn a_key_that_may_name_other_things_names_the_engine_of_an_object() {
        let object = "apiVersion: serving.example.com/v1\nkind: Server\nspec:\n  backend: sglang\n  replicas: 2\n";
        assert_eq!(named(object), Some(("sglang", "SGLang", "backend".into())));
        let typed = "apiVersion: x.io/v1\nkind: Runtime\nspec:\n  runtime:\n    name: vllm\n";
        assert_eq!(named(typed).map(|(_, _, k)| k), Some("runtime.name".into()));
    }

    #[test]
    fn a_name_or_a_size_alone_is_not_an_engines_settings() {
        for text in [
            // A benchmark client's backend, a Service named vllm, a tensor key elsewhere, a
            // size in a comment.
            "backend: vllm\nconcurrency: 8\n",
            "kind: Service\nmetadata:\n  name: vllm\n",
            "spec:\n  containers:\n  - name: app\n  parallelism:\n    tensor: 2\n",
            "model:\n  backend: vllm  # tensorParallelism: 2\n",
            // Labels, selectors and annotations name things and configure nothing.
            "apiVersion: v1\nkind: Service\nmetadata:\n  labels:\n    engine: vllm\nspec:\n  selector:\n    framework: vllm\n",
            "apiVersion: v1\nkind: Service\nmetadata:\n  labels: {engine: vllm, runtime: sglang}\n",
            // A description that mentions an engine, an engine's tool as an image.
            "apiVersion: x.io/v1\nkind: Job\nspec:\n  description: runs vllm\n  image: vllm-bench:1\n",
            // A benchmark client's config held as text in a ConfigMap.
            "apiVersion: v1\nkind: ConfigMap\ndata:\n  bench.yaml: |\n    backend: vllm\n    concurrency: 8\n",
            // A word that is no engine's name.
            "engine: vllm-openai\ntype: sglang-router\n",
        ] {
            assert_eq!(named_as_value(text), None, "{text}");
        }
    }
}
