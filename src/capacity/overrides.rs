//! The model geometry a launch's config overrides make (SGLang `--json-model-override-args`,
//! vLLM `--hf-overrides`), per engine release.

use crate::engine::{EngineArgs, SettingValue};
use crate::finding::Finding;
use crate::launch::Engine;
use crate::model::{apply_overrides, Geometry, Semantics};
use crate::version::Version;

/// The overridden geometry, `None` without overrides, or why none can be made: an override
/// the engine refuses (CFG004) or one kvlint cannot apply (INP002: the geometry is unknown).
pub fn geometry(args: &EngineArgs, g: &Geometry) -> Result<Option<Geometry>, Vec<Finding>> {
    let (dest, flag) = match args.engine {
        Engine::Sglang => ("json_model_override_args", "--json-model-override-args"),
        Engine::Vllm => ("hf_overrides", "--hf-overrides"),
        Engine::Trtllm => return Ok(None),
    };
    let Some(s) = args.get(dest).filter(|s| s.unresolved.is_empty()) else {
        return Ok(None);
    };
    let SettingValue::Text(text) = &s.value else {
        return Ok(None);
    };
    // SGLang ModelConfig: `json.loads(model_override_args)`, then `.items()`; vLLM: the
    // argparse type is json.loads and ModelConfig.hf_overrides a dict (HfOverrides).
    let obj = match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(o)) => o,
        _ => {
            return Err(vec![Finding::new("CFG004", Some(s.loc()))
                .var("flag", flag)
                .var("value", text)
                .var(
                    "expected",
                    "a JSON object of config.json keys (the engine refuses anything else)",
                )])
        }
    };
    if obj.is_empty() {
        return Ok(None);
    }
    let v = args.version.release();
    let how = match args.engine {
        Engine::Sglang => Semantics {
            rope_merge: v >= Version::new(0, 5, 23),
            nested_update: v >= Version::new(0, 5, 20),
        },
        _ => Semantics {
            rope_merge: false,
            nested_update: v >= Version::new(0, 33, 0),
        },
    };
    match apply_overrides(g, &obj, how) {
        Ok(g) => Ok(Some(g)),
        Err(key) => Err(vec![Finding::new("INP002", Some(s.loc()))
            .var("model", format!("{} with {flag}", g.id))
            .var(
                "tried",
                format!(" (the override sets {key}, which kvlint does not apply and which may change the geometry)"),
            )
            .var("suggest", "")]),
    }
}
