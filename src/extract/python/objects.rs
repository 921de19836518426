//! Config objects built by their class and handed to an engine as a keyword argument
//! (`kv_cache_config=KvCacheConfig(free_gpu_memory_fraction=0.8)`, vLLM's
//! `compilation_config=CompilationConfig(...)`): pydantic models and dataclasses whose fields are
//! their constructor's keywords, which the engines also take as a plain mapping. Such a call is
//! read as the mapping of its keyword arguments, so that the engine's reader checks each field
//! as it checks a YAML block's.
//!
//! Only a class is read so (a name in CapWords, PEP 8's convention for classes): what a function
//! returns is not its arguments. A positional argument, or a `**splat` the file does not fix,
//! leaves the object unknown: its fields are not all known by name.

use super::eval::{named, Eval, Val};
use tree_sitter::Node as Ts;

/// Whether a callee (`KvCacheConfig`, `tensorrt_llm.llmapi.KvCacheConfig`) names a class: its
/// last name starts with a capital and is not all capitals (`LLM`, a constant `MODEL`).
pub(super) fn is_class(callee: &str) -> bool {
    let last = callee.rsplit('.').next().unwrap_or_default();
    last.starts_with(|c: char| c.is_ascii_uppercase()) && last.chars().any(|c| c.is_lowercase())
}

impl<'a> Eval<'a> {
    /// The object `call` builds, as the mapping of its keyword arguments; `None` when a
    /// positional argument or an unknown `**splat` leaves a field unnamed.
    pub(super) fn object(&self, call: Ts<'a>, args: Ts<'a>, d: usize) -> Option<Val> {
        let positional = named(args).any(|a| {
            !matches!(
                a.kind(),
                "keyword_argument" | "dictionary_splat" | "comment"
            )
        });
        let (entries, complete) = self.keywords(args, d);
        (!positional && complete).then(|| Val::Dict(entries, self.loc(call)))
    }
}

#[cfg(test)]
mod tests {
    use super::is_class;

    #[test]
    fn classes_are_named_in_capwords() {
        assert!(is_class("KvCacheConfig"));
        assert!(is_class("tensorrt_llm.llmapi.KvCacheConfig"));
        assert!(is_class("MTPDecodingConfig"));
        assert!(!is_class("LLM"));
        assert!(!is_class("MODEL"));
        assert!(!is_class("make_config"));
        assert!(!is_class("cfg.build"));
    }
}
