//! Which engine an image's own entrypoint starts, for a container, a compose service, a
//! `docker run` or a Dockerfile that gives no command of its own.
//!
//! `vllm/vllm-openai` and the images built on its `vllm-openai` target run `vllm serve` (vllm
//! docker/Dockerfile: `ENTRYPOINT ["vllm", "serve"]`), whatever arguments follow. Other images
//! are known by their repository's last path component naming the engine (`quay.io/opendatahub/vllm`,
//! `opea/vllm-rocm`, `rocm/vllm`, `lmsysorg/sglang`, `nvcr.io/nvidia/tensorrt-llm/release`): their
//! entrypoints differ (the vLLM OpenAI server, a shell, a pass-through script), so they are read as
//! the engine's server only where the arguments are engine options alone (`--model m --tp 2`),
//! which nothing but the engine's server would take; a command (`bash -c …`, `vllm serve m`) runs
//! as written. Images of tools around an engine (routers, proxies, simulators, exporters,
//! benchmarks, the runtimes that wrap it) are no engine.

use crate::finding::Finding;
use crate::launch::Engine;
use crate::source::Loc;

/// How an image is known to run an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineImage {
    /// A `vllm-openai` image: its entrypoint is `vllm serve`, with any arguments.
    Entrypoint(Engine),
    /// An image named for the engine: its entrypoint is taken to be the engine's server where
    /// the arguments are engine options alone.
    Named(Engine),
}

impl EngineImage {
    pub fn engine(self) -> Engine {
        match self {
            EngineImage::Entrypoint(e) | EngineImage::Named(e) => e,
        }
    }

    /// The engine whose server runs with `first` (the first argument after the image, if any)
    /// as its first argument.
    pub fn runs(self, first: Option<&str>) -> Option<Engine> {
        match self {
            EngineImage::Entrypoint(e) => Some(e),
            EngineImage::Named(e) => first
                .is_some_and(|f| f.len() > 1 && f.starts_with('-'))
                .then_some(e),
        }
    }
}

/// The words that start `engine`'s server as an image entrypoint would: `vllm serve`,
/// `python3 -m sglang.launch_server`, `trtllm-serve`.
pub fn server_command(engine: Engine) -> &'static [&'static str] {
    match engine {
        Engine::Vllm => &["vllm", "serve"],
        Engine::Sglang => &["python3", "-m", "sglang.launch_server"],
        Engine::Trtllm => &["trtllm-serve"],
    }
}

/// The engine whose server `image` starts with `first` as its first argument (`None`: no
/// argument), if any. See [`engine_image`].
pub fn entrypoint(image: &str, first: Option<&str>) -> Option<Engine> {
    engine_image(image)?.runs(first)
}

/// What `image` is known to run, read from its repository name. A registry or owner written as
/// a variable (`${REGISTRY:-opea}/vllm-rocm:${TAG:-latest}`) leaves the repository name known.
pub fn engine_image(image: &str) -> Option<EngineImage> {
    let name = repository_name(image)?;
    let name = name.to_ascii_lowercase();
    // An Apptainer image file (`vllm-custom.sif`) runs a runscript kvlint does not see.
    let file = [".sif", ".simg", ".img"].iter().any(|e| name.ends_with(e));
    if name.contains('$') || file {
        return None;
    }
    let tokens: Vec<&str> = name.split(['-', '_', '.']).collect();
    if tokens.iter().any(|t| TOOLS.contains(t)) {
        return None;
    }
    let has = |t: &str| tokens.contains(&t);
    if name.contains("vllm-openai") {
        return Some(EngineImage::Entrypoint(Engine::Vllm));
    }
    let trtllm = name.contains("tensorrt-llm")
        || name.contains("tensorrt_llm")
        || tokens
            .iter()
            .any(|t| t.starts_with("trtllm") || *t == "tensorrtllm");
    let engine = if has("vllm") {
        Engine::Vllm
    } else if tokens.iter().any(|t| t.starts_with("sglang")) {
        Engine::Sglang
    } else if trtllm {
        Engine::Trtllm
    } else {
        return None;
    };
    Some(EngineImage::Named(engine))
}

/// How many of the arguments [`by_flags`] reads.
pub const FLAG_WORDS: usize = 256;

/// An engine read through the entrypoint of an image that names none (`${VLLM_IMAGE}`, a
/// site's own build): its arguments are options, and some of them only this engine takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ByFlags {
    pub engine: Engine,
    /// The flags that only this engine takes, as written, each once.
    pub flags: Vec<String>,
}

impl ByFlags {
    /// INP004 at the image: which program takes the arguments is the image's to say, and
    /// kvlint does not see it; the launch is planned as the engine's server and refused.
    pub fn finding(&self, image: &str, at: Loc) -> Finding {
        // A placeholder (`${VLLM_IMAGE}`, a template's `{{ }}`) hides the image itself.
        let what = if image.contains('$') || image.contains("{{") {
            format!("the image `{image}`")
        } else {
            format!("the entrypoint of the image `{image}`")
        };
        Finding::new("INP004", Some(at))
            .var(
                "flag",
                format!(
                    "the engine (recognized by its flags as {}: {}; planned as `{}`)",
                    self.engine.title(),
                    self.flags.join(", "),
                    server_command(self.engine).join(" ")
                ),
            )
            .var("vars", what)
            .label(format!(
                "engine recognized by its flags; the image `{image}` is not known"
            ))
    }
}

/// The engine whose server the entrypoint of `image` runs with `args`, when the image names no
/// engine and is no tool around one, and the args are options (the first is a flag) most of
/// which one engine takes, and some of which that engine alone takes
/// ([`crate::engine::engines_taking`]). Flags several engines take (`--port`, `--model`,
/// `--tensor-parallel-size`) decide nothing, and flags only different engines take leave it
/// unknown. Callers pass the first [`FLAG_WORDS`] arguments: enough to tell, and a padded list
/// of 120,000 words costs no more.
pub fn by_flags(image: &str, args: &[&str]) -> Option<ByFlags> {
    // An image with no name at all (a chart template's directives taken out) runs nothing.
    let named = repository_name(image).is_some_and(|n| !n.trim().is_empty());
    if !named || engine_image(image).is_some() || is_tool(image) {
        return None;
    }
    if !args.first()?.starts_with("--") {
        return None;
    }
    let flags: Vec<&str> = args
        .iter()
        .filter(|a| a.len() > 2 && a.starts_with("--") && !a.contains('$'))
        .map(|a| a.split_once('=').map_or(*a, |(k, _)| k))
        .collect();
    let takers: Vec<Vec<Engine>> = flags
        .iter()
        .map(|f| crate::engine::engines_taking(f))
        .collect();
    let only: Vec<(Engine, &str)> = flags
        .iter()
        .zip(&takers)
        .filter_map(|(f, t)| match t.as_slice() {
            [one] => Some((*one, *f)),
            _ => None,
        })
        .collect();
    let engine = only.first()?.0;
    let taken = takers.iter().filter(|t| t.contains(&engine)).count();
    if only.iter().any(|(e, _)| *e != engine) || taken * 2 < flags.len() {
        return None;
    }
    let mut named: Vec<String> = Vec::new();
    for (_, f) in only {
        if !named.iter().any(|n| n == f) {
            named.push(f.to_string());
        }
    }
    Some(ByFlags {
        engine,
        flags: named,
    })
}

/// An image of a tool around an engine (a router, a simulator, a runtime that wraps it): its
/// arguments may look like the engine's, but it holds no KV pool.
fn is_tool(image: &str) -> bool {
    repository_name(image).is_some_and(|name| {
        let name = name.to_ascii_lowercase();
        name.split(['-', '_', '.']).any(|t| TOOLS.contains(&t))
    })
}

/// Words in a repository name that make it a tool around the engine, not the engine: the
/// production-stack and SGLang routers, llm-d's inference scheduler and simulator, vLLM's
/// semantic router, mock servers, metrics exporters, operators, benchmark and test images, and
/// the runtimes and workers that wrap an engine behind a command of their own.
const TOOLS: &[&str] = &[
    "router",
    "proxy",
    "gateway",
    "sim",
    "simulator",
    "mock",
    "exporter",
    "operator",
    "controller",
    "benchmark",
    "benchmarks",
    "bench",
    "client",
    "ui",
    "test",
    "tests",
    "scheduler",
    "sidecar",
    "epp",
    "lb",
    "webhook",
    "dashboard",
    "monitor",
    "metrics",
    "autoscaler",
    "runtime",
    "worker",
];

/// Generic last components under a repository named for its product
/// (`nvcr.io/nvidia/tensorrt-llm/release`): the component before them names the image.
const GENERIC: &[&str] = &["release", "devel", "nightly", "dev"];

/// The repository's last path component, without registry, owner, tag or digest. Slashes and
/// colons inside `${…}` belong to the variable, not to the name.
fn repository_name(image: &str) -> Option<&str> {
    let image = image.trim().trim_matches(['"', '\'']);
    let image = image.strip_prefix("docker://").unwrap_or(image);
    let mut depth = 0usize;
    let mut parts = Vec::new();
    let mut start = 0;
    let mut end = image.len();
    for (i, c) in image.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            '/' if depth == 0 => {
                parts.push(&image[start..i]);
                start = i + 1;
            }
            ':' | '@' if depth == 0 && !image[i..].contains('/') => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    parts.push(&image[start..end.max(start)]);
    let last = *parts.last()?;
    let name = match parts.len() {
        n if n >= 3 && GENERIC.contains(&last) => parts[n - 2],
        _ => last,
    };
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_named_for_an_engine() {
        let cases = [
            (
                "vllm/vllm-openai:v0.11.0",
                Some(EngineImage::Entrypoint(Engine::Vllm)),
            ),
            (
                "lmcache/vllm-openai:2025-05-27-v1",
                Some(EngineImage::Entrypoint(Engine::Vllm)),
            ),
            (
                "vllm/vllm-openai-rocm:v0.11.0",
                Some(EngineImage::Entrypoint(Engine::Vllm)),
            ),
            (
                "ghcr.io/neuralmagic/nm-vllm-openai",
                Some(EngineImage::Entrypoint(Engine::Vllm)),
            ),
            (
                "quay.io/opendatahub/vllm:fast-ibm-nightly-2024-05-01",
                Some(EngineImage::Named(Engine::Vllm)),
            ),
            (
                "${REGISTRY:-opea}/vllm-rocm:${TAG:-latest}",
                Some(EngineImage::Named(Engine::Vllm)),
            ),
            (
                "${REGISTRY}/vllm-rocm",
                Some(EngineImage::Named(Engine::Vllm)),
            ),
            ("opea/vllm-rocm", Some(EngineImage::Named(Engine::Vllm))),
            (
                "rocm/vllm:rocm6.2_mi300_ubuntu20.04_py3.9_vllm_0.6.4",
                Some(EngineImage::Named(Engine::Vllm)),
            ),
            (
                "intel/vllm:0.10.1-xpu",
                Some(EngineImage::Named(Engine::Vllm)),
            ),
            (
                "quay.io/modh/vllm@sha256:abc",
                Some(EngineImage::Named(Engine::Vllm)),
            ),
            (
                "registry.redhat.io/rhaiis/vllm-cuda-rhel9:3.2",
                Some(EngineImage::Named(Engine::Vllm)),
            ),
            (
                "localhost:5000/vllm",
                Some(EngineImage::Named(Engine::Vllm)),
            ),
            (
                "vllm/vllm-tpu:nightly",
                Some(EngineImage::Named(Engine::Vllm)),
            ),
            (
                "lmsysorg/sglang:v0.5.4-cu129",
                Some(EngineImage::Named(Engine::Sglang)),
            ),
            (
                "docker.io/lmsysorg/sglang:latest",
                Some(EngineImage::Named(Engine::Sglang)),
            ),
            ("aibrix/sglang", Some(EngineImage::Named(Engine::Sglang))),
            (
                "nvcr.io/nvidia/tensorrt-llm/release:1.0.0",
                Some(EngineImage::Named(Engine::Trtllm)),
            ),
            (
                "myorg/tensorrt_llm:0.21",
                Some(EngineImage::Named(Engine::Trtllm)),
            ),
            (
                "myorg/trtllm-serve",
                Some(EngineImage::Named(Engine::Trtllm)),
            ),
            // Tools around an engine, runtimes that wrap it, and other images.
            ("lmsysorg/sglang-router:v0.2.1", None),
            ("aibrix/vllm-mock:v0.3.0", None),
            ("ghcr.io/llm-d/llm-d-inference-sim:v0.3.0", None),
            ("ghcr.io/llm-d/llm-d-inference-scheduler:v0.2.1", None),
            ("lmcache/lmstack-router:latest", None),
            ("ghcr.io/vllm-project/semantic-router/extproc:latest", None),
            ("vllm/vllm-router", None),
            ("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0", None),
            ("nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.3.1", None),
            ("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.4.0", None),
            ("runpod/worker-v1-vllm:v2.7.0", None),
            ("myorg/vllm-benchmark", None),
            ("myorg/vllm-exporter", None),
            ("myorg/vllm-ui", None),
            ("ghcr.io/huggingface/text-generation-inference", None),
            ("nvcr.io/nvidia/tritonserver:24.05-trtllm-python-py3", None),
            ("myvllm/app", None),
            ("vllm-custom.sif", None),
            ("${IMAGE}", None),
        ];
        for (image, want) in cases {
            assert_eq!(engine_image(image), want, "{image}");
        }
    }

    #[test]
    fn a_named_image_runs_the_engine_only_for_engine_options() {
        let named = "quay.io/opendatahub/vllm:x";
        assert_eq!(
            entrypoint(named, Some("--model=/mnt/models/")),
            Some(Engine::Vllm)
        );
        assert_eq!(entrypoint(named, Some("vllm")), None);
        assert_eq!(entrypoint(named, Some("bash")), None);
        assert_eq!(entrypoint(named, Some("-")), None);
        assert_eq!(entrypoint(named, None), None);
        assert_eq!(entrypoint("vllm/vllm-openai", None), Some(Engine::Vllm));
        assert_eq!(
            entrypoint("vllm/vllm-openai", Some("Qwen/Qwen3-8B")),
            Some(Engine::Vllm)
        );
    }
}
