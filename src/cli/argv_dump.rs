//! `kvlint parse-args` (hidden): the settings kvlint parsed from each launch, as JSON lines, for
//! the differential test against the engines' own parsers (tools/differential.py).

use crate::engine::{self, ParseContext, SettingValue};
use crate::extract;
use crate::source::Sources;
use crate::version::Version;
use serde_json::{json, Map, Value};

/// One JSON array of argv words in (the whole command, `vllm serve m ...`), one object out:
/// `{"launch": bool, "errors": [rule ids of the parse findings], "settings": {dest: value}}`.
pub fn line(argv_json: &str, version: Option<&Version>, base: &std::path::Path) -> Value {
    let Ok(argv) = serde_json::from_str::<Vec<String>>(argv_json) else {
        return json!({"error": "not a JSON array of strings"});
    };
    let mut sources = Sources::default();
    let file = sources.add("<argv>", extract::quote_argv(&argv));
    let found = extract::parse_command_line(file, &sources);
    let Some(launch) = found.launches.into_iter().next() else {
        return json!({"launch": false});
    };
    let mut cx = ParseContext {
        sources: &mut sources,
        base_dir: Some(base.to_path_buf()),
    };
    let parsed = engine::parse(&launch, version, &mut cx);
    let settings: Map<String, Value> = parsed
        .args
        .settings
        .iter()
        .map(|(k, s)| (k.clone(), value(&s.value)))
        .collect();
    let errors: Vec<&str> = parsed.findings.iter().map(|f| f.rule).collect();
    json!({"launch": true, "errors": errors, "settings": settings})
}

fn value(v: &SettingValue) -> Value {
    match v {
        SettingValue::Flag(b) => json!(b),
        SettingValue::Int(i) => json!(i),
        SettingValue::Float(f) if f.is_finite() => json!(f),
        SettingValue::Float(f) => json!(f.to_string()),
        SettingValue::Auto => json!("auto"),
        SettingValue::Text(t) => json!(t),
        SettingValue::List(l) => json!(l),
    }
}
