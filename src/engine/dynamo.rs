//! NVIDIA Dynamo's engine wrappers `python3 -m dynamo.sglang` and `python3 -m dynamo.vllm`. Each
//! first runs its own argparse parser with `parse_known_args` (ai-dynamo/dynamo
//! components/src/dynamo/sglang/args.py::parse_args, components/src/dynamo/vllm/args.py), then
//! takes the router flags out (common/configuration/groups/worker_router_args.py::
//! parse_worker_router_config), and hands what is left to the engine's own parser. So the wrapper's
//! options are never the engine's unknown flags: they are removed here before the engine parses.
//! `dynamo.trtllm` has a parser of its own, modelled in `trtllm/`.

use crate::launch::{Arg, Engine, Launch};
use crate::source::Sources;

/// How many tokens an option takes after it.
#[derive(Clone, Copy)]
enum Takes {
    /// `add_negatable_bool_argument`: `--x` and `--no-x`, no value.
    Flag,
    /// One value.
    One,
    /// `nargs="*"`: every following token up to the next option.
    Many,
    /// `nargs="?"`: a value when the next token is not an option.
    Optional,
}

use Takes::{Flag, Many, One, Optional};

/// `DynamoRuntimeArgGroup.add_arguments` (common/configuration/groups/runtime_args.py), shared by
/// every backend, plus `--migration-limit` and `--store-kv` of the 1.x releases' runtime group.
const RUNTIME: &[(&str, Takes)] = &[
    ("--namespace", One),
    ("--endpoint", One),
    ("--kv-state-endpoint", One),
    ("--discovery-backend", One),
    ("--store-kv", One),
    ("--request-plane", One),
    ("--response-plane", One),
    ("--event-plane", One),
    ("--fpm-trace", Flag),
    ("--connector", Many),
    ("--dyn-tool-call-parser", One),
    ("--dyn-reasoning-parser", One),
    ("--dyn-default-thinking-mode", One),
    ("--exclude-tools-when-tool-choice-none", Flag),
    ("--dyn-enable-structural-tag", Flag),
    ("--dyn-structural-tag-scope", One),
    ("--dyn-structural-tag-schema", One),
    ("--dyn-structural-tag", Optional),
    ("--custom-jinja-template", One),
    ("--endpoint-types", One),
    ("--dyn-endpoint-types", One),
    ("--dump-config-to", One),
    ("--multimodal-embedding-cache-capacity-gb", One),
    ("--multimodal-embedding-cache-publisher", Flag),
    ("--output-modalities", Many),
    ("--media-output-fs-url", One),
    ("--media-output-http-url", One),
    ("--health-check-payload", One),
    ("--engine-request-limit", One),
    ("--migration-limit", One),
    ("--tcp-tls-cert-path", One),
    ("--tcp-tls-key-path", One),
    ("--tcp-tls-ca-cert-path", One),
    ("--tcp-tls-insecure", Flag),
    ("--tcp-tls-server-name", One),
    ("--tcp-tls-handshake-timeout", One),
    ("--tcp-tls-client-cert-path", One),
    ("--tcp-tls-client-key-path", One),
    ("--tcp-tls-client-ca-cert-path", One),
    ("--nats-tls-ca-cert-path", One),
    ("--nats-tls-insecure", Flag),
    ("--nats-tls-client-cert-path", One),
    ("--nats-tls-client-key-path", One),
];

/// `DynamoSGLangArgGroup.add_arguments` (components/src/dynamo/sglang/backend_args.py).
const SGLANG: &[(&str, Takes)] = &[
    ("--use-sglang-tokenizer", Flag),
    ("--multimodal-processor", Flag),
    ("--multimodal-encode-worker", Flag),
    ("--multimodal-worker", Flag),
    ("--embedding-worker", Flag),
    ("--image-diffusion-worker", Flag),
    ("--disagg-config", One),
    ("--disagg-config-key", One),
    ("--video-generation-worker", Flag),
    ("--afd-attention-ratio", One),
    ("--afd-ffn-endpoint", One),
    ("--afd-microbatch-size", One),
    ("--afd-sync-timeout-ms", One),
];

/// `DynamoVllmArgGroup.add_arguments` (components/src/dynamo/vllm/backend_args.py), without its
/// `--enforce-eager`: vLLM has that flag too and it matters to the engine.
const VLLM: &[(&str, Takes)] = &[
    ("--is-prefill-worker", Flag),
    ("--is-decode-worker", Flag),
    ("--use-vllm-tokenizer", Flag),
    ("--sleep-mode-level", One),
    ("--route-to-encoder", Flag),
    ("--multimodal-encode-worker", Flag),
    ("--multimodal-worker", Flag),
    ("--multimodal-decode-worker", Flag),
    ("--enable-multimodal", Flag),
    ("--mm-prompt-template", One),
    ("--frontend-decoding", Flag),
    ("--omni", Flag),
    ("--stage-configs-path", One),
    ("--video-output-dir", One),
    ("--default-video-fps", One),
    ("--enable-layerwise-offload", Flag),
    ("--layerwise-num-gpu-layers", One),
    ("--vae-use-slicing", Flag),
    ("--vae-use-tiling", Flag),
    ("--boundary-ratio", One),
    ("--flow-shift", One),
    ("--diffusion-cache-backend", One),
    ("--diffusion-cache-config", One),
    ("--enable-cache-dit-summary", Flag),
    ("--enable-cpu-offload", Flag),
    ("--ulysses-degree", One),
    ("--ring-degree", One),
    ("--cfg-parallel-size", One),
    ("--model-express-url", One),
];

/// The module a launch's command words run, when it is a Dynamo SGLang or vLLM wrapper.
fn wrapper(launch: &Launch, sources: &Sources) -> Option<&'static [(&'static str, Takes)]> {
    let command = sources.text(launch.command);
    match launch.engine {
        Engine::Sglang if command.contains("dynamo.sglang") => Some(SGLANG),
        Engine::Vllm if command.contains("dynamo.vllm") => Some(VLLM),
        _ => None,
    }
}

/// For a Dynamo wrapper launch, the same launch with only the arguments the engine's parser
/// receives; `None` for any other launch.
pub fn engine_launch(launch: &Launch, sources: &Sources) -> Option<Launch> {
    let own = wrapper(launch, sources)?;
    let mut kept = Vec::with_capacity(launch.args.len());
    let mut i = 0;
    while i < launch.args.len() {
        let tok = &launch.args[i];
        i += 1;
        match takes(own, &tok.text) {
            None => kept.push(tok.clone()),
            Some(_) if tok.text.contains('=') => {}
            Some(Flag) => {}
            Some(One) => i += usize::from(i < launch.args.len()),
            Some(Optional) => i += usize::from(launch.args.get(i).is_some_and(value)),
            Some(Many) => {
                while launch.args.get(i).is_some_and(value) {
                    i += 1;
                }
            }
        }
    }
    Some(Launch {
        args: kept,
        ..launch.clone()
    })
}

/// A token argparse would take as a value rather than an option.
fn value(tok: &Arg) -> bool {
    !tok.text.starts_with("--")
}

/// What a wrapper option takes, if `text` (`--x`, `--x=v`, `--no-x`) is one. The router flags
/// (`--router-*`) are the worker router group's (worker_router_args.py).
fn takes(own: &[(&str, Takes)], text: &str) -> Option<Takes> {
    let name = text.split_once('=').map_or(text, |(n, _)| n);
    if name.starts_with("--router-") {
        return Some(if text.contains('=') { One } else { Optional });
    }
    let positive = name.strip_prefix("--no-").map(|n| format!("--{n}"));
    RUNTIME.iter().chain(own).find_map(|(n, t)| {
        let negated = positive.as_deref() == Some(n) && matches!(t, Flag);
        (*n == name || negated).then_some(*t)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    fn unwrapped(line: &str) -> Option<Vec<String>> {
        let mut s = Sources::default();
        let f = s.add("run.sh", line);
        let launch = crate::extract::shell::script_launches(f, line)
            .into_iter()
            .next()?;
        engine_launch(&launch, &s).map(|l| l.args.into_iter().map(|a| a.text).collect())
    }

    #[test]
    fn wrapper_options_are_taken_out_before_the_engine_parses() {
        let args = unwrapped(
            "python3 -m dynamo.sglang --model-path m --endpoint dyn://a.b.c --tp 2 \
             --dyn-tool-call-parser hermes --no-use-sglang-tokenizer --connector nixl kvbm \
             --router-mode kv --migration-limit=3 --context-length 4096",
        );
        assert_eq!(
            args.as_deref(),
            Some(
                &["--model-path", "m", "--tp", "2", "--context-length", "4096"].map(String::from)[..]
            )
        );
    }

    #[test]
    fn vllm_keeps_its_own_enforce_eager_and_other_launches_are_left_alone() {
        let args =
            unwrapped("python3 -m dynamo.vllm --model m --is-prefill-worker --enforce-eager");
        assert_eq!(
            args.as_deref(),
            Some(&["--model", "m", "--enforce-eager"].map(String::from)[..])
        );
        assert_eq!(
            unwrapped("python3 -m sglang.launch_server --endpoint x"),
            None
        );
    }
}
