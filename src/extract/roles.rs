//! The role (prefill or decode) that an input gives a launch outside the engine's own settings,
//! for every input shape: a wrapper's role flag, a role label on the pod, the name of the object
//! or container that runs it. The engine's own settings (SGLang and TensorRT-LLM
//! `--disaggregation-mode`, vLLM `kv_role`) still come first (`deployment::role_of`); these
//! matter where the engine does not say, as with vLLM's `kv_both` connectors (NIXL), whose two
//! halves differ only by how they are deployed.

use crate::launch::Launch;
use crate::source::Sources;
use crate::yaml::{Node, Value};

/// Fills in each launch's role hint: a wrapper flag wins over what the object says, and the
/// object's or container's name is the last resort.
pub fn fill(launches: &mut [Launch], sources: &Sources) {
    for l in launches {
        if let Some(role) = wrapper_flag(l, sources) {
            l.role_hint = Some(role.to_string());
        } else if l.role_hint.is_none() {
            l.role_hint = l.object.as_ref().and_then(|o| {
                let names = [Some(o.name.as_str()), o.container.as_deref()];
                names
                    .into_iter()
                    .flatten()
                    .find_map(named)
                    .map(str::to_string)
            });
        }
    }
}

/// Dynamo's vLLM worker takes its role from its own flags (ai-dynamo/dynamo
/// components/src/dynamo/vllm/backend_args.py: `--is-prefill-worker`, `--is-decode-worker`),
/// which the engine never sees.
fn wrapper_flag(l: &Launch, sources: &Sources) -> Option<&'static str> {
    if !sources.text(l.command).contains("dynamo.vllm") {
        return None;
    }
    l.args.iter().find_map(|a| match a.text.as_str() {
        "--is-prefill-worker" => Some("prefill"),
        "--is-decode-worker" => Some("decode"),
        _ => None,
    })
}

/// `prefill` or `decode` as a word of a name (`qwen-prefill`, `VllmDecodeWorker`, `decode_0`).
pub fn named(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    // CamelCase words: `VllmPrefillWorker` has `Prefill` as a word of its own.
    let camel = name.contains("Prefill") || name.contains("Decode");
    let words: Vec<&str> = lower.split(|c: char| !c.is_ascii_alphanumeric()).collect();
    let has = |w: &str| words.contains(&w) || (camel && lower.contains(w));
    match (has("prefill"), has("decode")) {
        (true, false) => Some("prefill"),
        (false, true) => Some("decode"),
        _ => None,
    }
}

/// Pod labels that name the role: llm-d `llm-d.ai/role`, and the common `role` / `component`
/// keys (`app.kubernetes.io/component: decode`), with a value that is exactly one role.
pub fn from_labels(metadata: Option<&Node>) -> Option<String> {
    let Some(Value::Map(labels)) = metadata.and_then(|m| m.get("labels")).map(|l| &l.value) else {
        return None;
    };
    labels.iter().find_map(|(k, v)| {
        let key = k.as_str()?;
        let last = key.rsplit('/').next().unwrap_or(key);
        let value = v.as_str()?.to_ascii_lowercase();
        (matches!(last, "role" | "component") && matches!(value.as_str(), "prefill" | "decode"))
            .then_some(value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_a_role_only_when_one_role_is_a_word_of_them() {
        assert_eq!(named("qwen-prefill"), Some("prefill"));
        assert_eq!(named("VllmDecodeWorker"), Some("decode"));
        assert_eq!(named("decode_0"), Some("decode"));
        assert_eq!(named("prefill-decode"), None);
        assert_eq!(named("predecoder"), None);
        assert_eq!(named("vllm"), None);
    }
}
