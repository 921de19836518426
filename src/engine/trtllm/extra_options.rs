//! The engine YAML (`--extra_llm_api_options` / `--config`, Dynamo `--extra-engine-args`) and
//! Dynamo's `--override-engine-args` JSON, merged over the command line.

use super::super::argparse::{py_float, py_int};
use super::super::{ParseContext, Setting, SettingValue};
use super::fields::{closest, strict_fields};
use super::options::SERVE;
use super::{text_of, Front, Parser, FRACTION};
use crate::finding::Finding;
use crate::launch::Launch;
use crate::source::Loc;
use crate::yaml::{Node, Value};

/// CFG006's help for TensorRT-LLM, whose file is the LLM-API options, not an argv mapping.
const TRT_CONFIG_FIX: &str = "give --extra_llm_api_options (or --config) a readable YAML file holding a mapping of LLM-API fields (kv_cache_config, max_seq_len, ...)";

impl Parser {
    /// Loads the engine YAML (a ConfigMap file for manifests, else a file beside the input) and
    /// merges it over the command line.
    pub(super) fn engine_yaml(&mut self, launch: &Launch, path: &Setting, cx: &mut ParseContext) {
        if !path.unresolved.is_empty() {
            return; // `--config $FILE`: contents unknown, INP004 comes from the capacity step
        }
        let SettingValue::Text(name) = &path.value else {
            return;
        };
        let read = launch.files.iter().find(|f| f.path == *name);
        if let Some(m) = read.and_then(|f| f.mapping.as_ref()) {
            self.unseen.clone_from(&m.unresolved);
            self.merge_yaml(&m.node, path);
            return;
        }
        let loaded = super::super::named_file(&launch.files, name, cx);
        let root = loaded.and_then(|(n, text)| {
            let file = cx.sources.add(n, text);
            crate::yaml::parse_document(file, cx.sources.get(file)).map_err(|e| e.message)
        });
        match root {
            Ok(root) => self.merge_yaml(&root, path),
            Err(reason) => self.findings.push(
                Finding::new("CFG006", Some(path.value_loc))
                    .var("path", name)
                    .var("reason", reason)
                    .var("fix", TRT_CONFIG_FIX),
            ),
        }
    }

    /// `llm_args | yaml`: each top-level key replaces what the command line built for it (for
    /// `kv_cache_config` the release decides, see `fraction`). Keys the LLM API does not know
    /// are CFG001 (see `fields`), unless the AutoDeploy backend, whose own `LlmArgs` is not
    /// modelled, reads the file.
    pub(crate) fn merge_yaml(&mut self, root: &Node, path: &Setting) {
        let Value::Map(entries) = &root.value else {
            self.findings.push(
                Finding::new("CFG006", Some(path.value_loc))
                    .var("path", text_of(&path.value))
                    .var("reason", "the file must hold a mapping of LLM-API fields")
                    .var("fix", TRT_CONFIG_FIX),
            );
            return;
        };
        let strict = !autodeploy(entries, self.settings.get("backend"));
        let file = text_of(&path.value);
        let cli_fraction = self.settings.get(FRACTION).cloned();
        let mut kv_block = None;
        for (k, v) in entries {
            let Some(key) = k.scalar_text() else { continue };
            if strict && !self.known("", &key, k.loc, &file) {
                continue;
            }
            if key == "kv_cache_config" {
                kv_block = Some(k.loc);
            }
            self.forget(&key);
            self.insert_node(&key, k.loc, v, strict.then_some(file.as_str()));
        }
        if let (Some(cli), Some(block)) = (cli_fraction, kv_block) {
            self.settle_fraction(&cli, block, path);
        }
    }

    /// Whether `key` is a field of the strict model at `parent` (`""`: the top level); CFG001 at
    /// the key when it is not: pydantic refuses it and the engine exits before loading the model.
    fn known(&mut self, parent: &str, key: &str, at: Loc, file: &str) -> bool {
        let Some(fields) = strict_fields(parent) else {
            return true;
        };
        if fields.contains(&key) {
            return true;
        }
        let dotted = |k: &str| match parent {
            "" => k.to_string(),
            p => format!("{p}.{k}"),
        };
        // A command-line spelling (`kv_cache_free_gpu_memory_fraction`, `tp_size`) names its field.
        let flag = format!("--{key}");
        let as_flag = SERVE
            .iter()
            .find(|o| parent.is_empty() && o.names.contains(&flag.as_str()))
            .map(|o| o.dest.to_string());
        let suggestion = as_flag
            .or_else(|| closest(key, fields).map(dotted))
            .unwrap_or_else(|| "a field of TorchLlmArgs (tensorrt_llm/llmapi/llm_args.py)".into());
        let engine = match self.front {
            Front::Serve => "trtllm-serve",
            Front::Dynamo => "dynamo.trtllm",
        };
        self.findings.push(
            Finding::new("CFG001", Some(at))
                .var(
                    "flag",
                    format!(
                        "{} (a key of {file}: the LLM API refuses fields it does not know)",
                        dotted(key)
                    ),
                )
                .var("engine", engine)
                .var("version", &self.version)
                .var("suggestion", suggestion)
                .label("not an LLM-API field"),
        );
        false
    }

    /// Drops `key` and its dotted sub-settings: a YAML key replaces the whole field. A range over
    /// the sorted map keeps a file of many keys linear, where a scan per key was quadratic.
    fn forget(&mut self, key: &str) {
        self.settings.remove(key);
        let prefix = format!("{key}.");
        let nested: Vec<String> = self
            .settings
            .range(prefix.clone()..)
            .take_while(|(d, _)| d.starts_with(&prefix))
            .map(|(d, _)| d.clone())
            .collect();
        for d in nested {
            self.settings.remove(&d);
        }
    }

    /// A YAML value under `dest`: mappings become `dest.child` settings, scalars typed settings.
    /// `strict_in` names the file when its keys are checked against the LLM-API models.
    fn insert_node(&mut self, dest: &str, key: Loc, v: &Node, strict_in: Option<&str>) {
        if let Some(unseen) = self.unseen.iter().find(|a| a.loc == v.loc) {
            // A value the input does not fix (an env read in a Python call): what the capacity
            // step needs of it is INP004 there, as for a flag's value.
            let s = Setting {
                dest: dest.to_string(),
                value: coerce(dest, &unseen.text),
                flag_loc: key,
                value_loc: v.loc,
                unresolved: unseen.unresolved.clone(),
                defaulted: unseen.defaulted,
            };
            self.settings.insert(dest.to_string(), s);
            return;
        }
        let value = match &v.value {
            Value::Null => return,
            Value::Map(children) => {
                for (ck, cv) in children {
                    let Some(child) = ck.scalar_text() else {
                        continue;
                    };
                    if strict_in.is_some_and(|f| !self.known(dest, &child, ck.loc, f)) {
                        continue;
                    }
                    self.insert_node(&format!("{dest}.{child}"), ck.loc, cv, strict_in);
                }
                return;
            }
            Value::Bool(b) => SettingValue::Flag(*b),
            Value::Int(i) => SettingValue::Int(*i),
            Value::Float(f) => SettingValue::Float(*f),
            Value::Str(s) => coerce(dest, s),
            Value::Seq(items) => {
                SettingValue::List(items.iter().filter_map(Node::scalar_text).collect())
            }
        };
        if let Some(expected) = numeric(dest).filter(|_| !is_number(&value)) {
            self.findings.push(
                Finding::new("CFG004", Some(v.loc))
                    .var("flag", dest)
                    .var("value", v.scalar_text().unwrap_or_default())
                    .var("expected", expected),
            );
            return;
        }
        let s = Setting {
            dest: dest.to_string(),
            value,
            flag_loc: key,
            value_loc: v.loc,
            unresolved: Vec::new(),
            defaulted: false,
        };
        self.settings.insert(dest.to_string(), s);
    }

    /// Dynamo `--override-engine-args JSON`, applied by `deep_update(arg_map, overrides)`
    /// (ai-dynamo/dynamo components/src/dynamo/trtllm/main.py): nested keys override one by one,
    /// except under an argument that is already a model object rather than a dict. `kv_cache_config`
    /// always is (main.py builds `KvCacheConfig(...)`, and `update_llm_args_with_extra_dict`
    /// converts a YAML one), so an override's `kv_cache_config` replaces it whole
    /// (ai-dynamo/dynamo#15117, checked against TensorRT-LLM 1.3.0rc26).
    pub(super) fn override_json(&mut self, o: &Setting) {
        if !o.unresolved.is_empty() {
            return;
        }
        let text = text_of(&o.value);
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else {
            let f = Finding::new("CFG004", Some(o.loc()))
                .var("flag", "--override-engine-args")
                .var("value", &text)
                .var("expected", "a JSON object");
            self.findings.push(f);
            return;
        };
        let kv = json.get("kv_cache_config").filter(|v| v.is_object());
        let replaced = kv.and(self.settings.get(FRACTION).cloned());
        if kv.is_some() {
            self.forget("kv_cache_config");
        }
        let mut flat = Vec::new();
        flatten_json("", &json, &mut flat);
        for (dest, value) in flat {
            let s = Setting {
                dest: dest.clone(),
                value,
                flag_loc: o.flag_loc,
                value_loc: o.value_loc,
                unresolved: Vec::new(),
                defaulted: false,
            };
            self.settings.insert(dest, s);
        }
        if let Some(before) = replaced {
            self.fraction_replaced_by_override(&before, o);
        }
    }
}

/// `--backend _autodeploy` (on the command line or in the file itself) reads the file with
/// AutoDeploy's own `LlmArgs` (tensorrt_llm/_torch/auto_deploy/llm_args.py), not modelled here.
fn autodeploy(entries: &[(Node, Node)], cli_backend: Option<&Setting>) -> bool {
    let in_file = entries
        .iter()
        .find(|(k, _)| k.scalar_text().as_deref() == Some("backend"))
        .and_then(|(_, v)| v.scalar_text());
    let cli = cli_backend.map(|s| text_of(&s.value));
    in_file.or(cli).as_deref() == Some("_autodeploy")
}

fn flatten_json(prefix: &str, j: &serde_json::Value, out: &mut Vec<(String, SettingValue)>) {
    use serde_json::Value as J;
    let key = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match j {
        J::Object(m) => m.iter().for_each(|(k, v)| flatten_json(&key(k), v, out)),
        J::Bool(b) => out.push((prefix.into(), SettingValue::Flag(*b))),
        J::Number(n) => out.push((
            prefix.into(),
            n.as_i64().map_or_else(
                || SettingValue::Float(n.as_f64().unwrap_or(0.0)),
                SettingValue::Int,
            ),
        )),
        J::String(s) => out.push((prefix.into(), coerce(prefix, s))),
        J::Array(_) | J::Null => {}
    }
}

/// LLM-API fields the capacity math reads as numbers, and what they must be.
fn numeric(dest: &str) -> Option<&'static str> {
    match dest {
        FRACTION => Some("a number"),
        "max_seq_len"
        | "max_num_tokens"
        | "max_batch_size"
        | "max_beam_width"
        | "tensor_parallel_size"
        | "pipeline_parallel_size"
        | "context_parallel_size"
        | "moe_expert_parallel_size"
        | "kv_cache_config.max_tokens"
        | "kv_cache_config.tokens_per_block"
        | "kv_cache_config.max_gpu_total_bytes" => Some("an integer"),
        _ => None,
    }
}

/// pydantic's lax mode reads numeric strings (`"0.85"`) as numbers.
fn coerce(dest: &str, s: &str) -> SettingValue {
    match numeric(dest) {
        Some("an integer") => {
            py_int(s).map_or_else(|| SettingValue::Text(s.into()), SettingValue::Int)
        }
        Some(_) => py_float(s).map_or_else(|| SettingValue::Text(s.into()), SettingValue::Float),
        None => SettingValue::Text(s.into()),
    }
}

fn is_number(v: &SettingValue) -> bool {
    matches!(v, SettingValue::Int(_) | SettingValue::Float(_))
}
