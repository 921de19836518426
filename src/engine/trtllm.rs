//! TensorRT-LLM launches: `trtllm-serve [serve] MODEL` (a click command,
//! tensorrt_llm/commands/serve.py::serve) and NVIDIA Dynamo's `python3 -m dynamo.trtllm` (argparse,
//! ai-dynamo/dynamo components/src/dynamo/trtllm/utils/trtllm_utils.py::cmd_line_args). Both build
//! LLM-API arguments, whose `TorchLlmArgs` field names are the setting dests here (nested fields
//! as `kv_cache_config.free_gpu_memory_fraction`), then merge an engine YAML over them with
//! tensorrt_llm/llmapi/llm_args.py::update_llm_args_with_extra_dict: `llm_args | yaml`, a
//! top-level replace. A YAML `kv_cache_config:` block therefore drops every kv-cache value the
//! command line set (vllm-trtllm-capacity.md §8.1).
//!
//! click matches option names exactly: unlike argparse it does not accept unique prefixes, and it
//! takes the token after a value option as its value even when that token starts with `-`.
//! Dynamo's argparse parser does accept unique prefixes.

use super::argparse::{py_float, py_int};
use super::{EngineArgs, ParseContext, Parsed, Setting, SettingValue};
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch};
use crate::source::Loc;
use crate::version::Version;
use crate::yaml::{Node, Value};
use std::collections::BTreeMap;

/// CFG006's help for TensorRT-LLM, whose file is the LLM-API options, not an argv mapping.
const TRT_CONFIG_FIX: &str = "give --extra_llm_api_options (or --config) a readable YAML file holding a mapping of LLM-API fields (kv_cache_config, max_seq_len, ...)";

/// `KvCacheConfig.free_gpu_memory_fraction`, set by `--kv_cache_free_gpu_memory_fraction`.
pub const FRACTION: &str = "kv_cache_config.free_gpu_memory_fraction";
/// The engine YAML option (`--extra_llm_api_options`, `--config`, Dynamo `--extra-engine-args`).
pub const CONFIG: &str = "extra_llm_api_options";
/// Dynamo `--override-engine-args`: a JSON object merged key by key over the arguments.
const OVERRIDE: &str = "override_engine_args";
/// Which command line built the arguments: `trtllm-serve` or `dynamo.trtllm` (not an option).
pub const FRONTEND: &str = "frontend";
/// `KvCacheConfig.free_gpu_memory_fraction` when nobody sets it.
pub const DEFAULT_FRACTION: f64 = 0.9;

#[derive(Clone, Copy)]
enum Ty {
    Int,
    Float,
    Str,
    Flag,
    Choice(&'static [&'static str]),
}

struct Opt {
    names: &'static [&'static str],
    dest: &'static str,
    ty: Ty,
}

const fn o(names: &'static [&'static str], dest: &'static str, ty: Ty) -> Opt {
    Opt { names, dest, ty }
}

/// `trtllm-serve serve` options (serve.py, as listed in vllm-trtllm-capacity.md §8.1 plus the
/// server options around them). `trt` is the older spelling of the engine backend.
const SERVE: &[Opt] = &[
    o(&["--tokenizer"], "tokenizer", Ty::Str),
    o(&["--host"], "host", Ty::Str),
    o(&["--port"], "port", Ty::Int),
    o(&["--log_level"], "log_level", Ty::Str),
    o(
        &["--backend"],
        "backend",
        Ty::Choice(&["pytorch", "tensorrt", "trt", "_autodeploy"]),
    ),
    o(&["--max_beam_width"], "max_beam_width", Ty::Int),
    o(&["--max_batch_size"], "max_batch_size", Ty::Int),
    o(&["--max_num_tokens"], "max_num_tokens", Ty::Int),
    o(&["--max_seq_len"], "max_seq_len", Ty::Int),
    o(
        &["--tp_size", "--tensor_parallel_size"],
        "tensor_parallel_size",
        Ty::Int,
    ),
    o(
        &["--pp_size", "--pipeline_parallel_size"],
        "pipeline_parallel_size",
        Ty::Int,
    ),
    o(
        &["--cp_size", "--context_parallel_size"],
        "context_parallel_size",
        Ty::Int,
    ),
    o(
        &["--ep_size", "--moe_expert_parallel_size"],
        "moe_expert_parallel_size",
        Ty::Int,
    ),
    o(
        &["--cluster_size", "--moe_cluster_parallel_size"],
        "moe_cluster_parallel_size",
        Ty::Int,
    ),
    o(&["--gpus_per_node"], "gpus_per_node", Ty::Int),
    o(
        &[
            "--kv_cache_free_gpu_memory_fraction",
            "--free_gpu_memory_fraction",
        ],
        FRACTION,
        Ty::Float,
    ),
    o(
        &["--num_postprocess_workers"],
        "num_postprocess_workers",
        Ty::Int,
    ),
    o(&["--trust_remote_code"], "trust_remote_code", Ty::Flag),
    o(&["--extra_llm_api_options", "--config"], CONFIG, Ty::Str),
    o(&["--reasoning_parser"], "reasoning_parser", Ty::Str),
    o(&["--tool_parser"], "tool_parser", Ty::Str),
    o(
        &["--metadata_server_config_file"],
        "metadata_server_config_file",
        Ty::Str,
    ),
    o(&["--server_role"], "server_role", Ty::Str),
    o(
        &["--fail_fast_on_attention_window_too_large"],
        "fail_fast_on_attention_window_too_large",
        Ty::Flag,
    ),
    o(
        &["--enable_chunked_prefill"],
        "enable_chunked_prefill",
        Ty::Flag,
    ),
    o(&["--otlp_traces_endpoint"], "otlp_traces_endpoint", Ty::Str),
    o(&["--disagg_cluster_uri"], "disagg_cluster_uri", Ty::Str),
    o(&["--media_io_kwargs"], "media_io_kwargs", Ty::Str),
    o(&["--chat_template"], "chat_template", Ty::Str),
    o(&["--revision"], "revision", Ty::Str),
    o(&["--custom_module_dirs"], "custom_module_dirs", Ty::Str),
    o(&["--served_model_name"], "served_model_name", Ty::Str),
];

/// Dynamo's TRT-LLM worker options that reach the engine, with their LLM-API field names
/// (main.py builds `KvCacheConfig(free_gpu_memory_fraction=...)` and the `arg_map`).
const DYNAMO: &[Opt] = &[
    o(&["--model-path"], "model", Ty::Str),
    o(&["--served-model-name"], "served_model_name", Ty::Str),
    o(&["--endpoint"], "endpoint", Ty::Str),
    o(&["--tensor-parallel-size"], "tensor_parallel_size", Ty::Int),
    o(
        &["--pipeline-parallel-size"],
        "pipeline_parallel_size",
        Ty::Int,
    ),
    o(
        &["--expert-parallel-size"],
        "moe_expert_parallel_size",
        Ty::Int,
    ),
    o(&["--enable-attention-dp"], "enable_attention_dp", Ty::Flag),
    o(&["--kv-block-size"], "kv_block_size", Ty::Int),
    o(&["--max-batch-size"], "max_batch_size", Ty::Int),
    o(&["--max-num-tokens"], "max_num_tokens", Ty::Int),
    o(&["--max-seq-len"], "max_seq_len", Ty::Int),
    o(&["--max-beam-width"], "max_beam_width", Ty::Int),
    o(&["--free-gpu-memory-fraction"], FRACTION, Ty::Float),
    o(&["--extra-engine-args"], CONFIG, Ty::Str),
    o(&["--override-engine-args"], OVERRIDE, Ty::Str),
    o(&["--disaggregation-mode"], "disaggregation_mode", Ty::Str),
    o(
        &["--disaggregation-strategy"],
        "disaggregation_strategy",
        Ty::Str,
    ),
    o(&["--gpus-per-node"], "gpus_per_node", Ty::Int),
];

/// Which command line the launch is.
#[derive(Clone, Copy, PartialEq)]
enum Front {
    Serve,
    Dynamo,
}

impl Front {
    fn opts(self) -> &'static [Opt] {
        match self {
            Front::Serve => SERVE,
            Front::Dynamo => DYNAMO,
        }
    }
}

pub fn parse(launch: &Launch, version: Version, cx: &mut ParseContext) -> Parsed {
    let front = if cx.sources.text(launch.command).contains("dynamo") {
        Front::Dynamo
    } else {
        Front::Serve
    };
    let mut p = Parser {
        front,
        version: version.clone(),
        settings: BTreeMap::new(),
        findings: Vec::new(),
    };
    let front_name = match front {
        Front::Serve => "trtllm-serve",
        Front::Dynamo => "dynamo.trtllm",
    };
    let cmd = Arg::new(front_name, launch.command);
    p.set(FRONTEND, SettingValue::Text(front_name.into()), &cmd, &cmd);
    p.command_line(&launch.args);
    if let Some(path) = p.settings.get(CONFIG).cloned() {
        p.engine_yaml(launch, &path, cx);
    }
    if let Some(o) = p.settings.remove(OVERRIDE) {
        p.override_json(&o);
    }
    Parsed {
        args: EngineArgs {
            engine: Engine::Trtllm,
            version,
            settings: p.settings,
            could_run: Vec::new(),
        },
        findings: p.findings,
    }
}

struct Parser {
    front: Front,
    version: Version,
    settings: BTreeMap<String, Setting>,
    findings: Vec<Finding>,
}

impl Parser {
    fn command_line(&mut self, args: &[Arg]) {
        let mut i = 0;
        while i < args.len() {
            let tok = &args[i];
            i += 1;
            if !is_option(&tok.text) {
                if self.front == Front::Serve && !self.settings.contains_key("model") {
                    self.set("model", SettingValue::Text(tok.text.clone()), tok, tok);
                }
                continue;
            }
            let (name, explicit) = match tok.text.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (tok.text.as_str(), None),
            };
            let Some(opt) = self.lookup(name) else {
                self.unknown(name, tok);
                // click stops at the unknown option; skipping its value keeps the rest readable.
                i += usize::from(
                    explicit.is_none() && args.get(i).is_some_and(|n| !is_option(&n.text)),
                );
                continue;
            };
            i = self.take(opt, tok, explicit, args, i);
        }
    }

    /// Exact names; Dynamo's argparse also takes a unique prefix.
    fn lookup(&self, name: &str) -> Option<&'static Opt> {
        let opts = self.front.opts();
        if let Some(o) = opts.iter().find(|o| o.names.contains(&name)) {
            return Some(o);
        }
        if self.front == Front::Serve || name.len() < 3 {
            return None;
        }
        let mut hits = opts
            .iter()
            .filter(|o| o.names.iter().any(|n| n.starts_with(name)));
        match (hits.next(), hits.next()) {
            (Some(o), None) => Some(o),
            _ => None,
        }
    }

    /// click rejects unknown options ("No such option"). Dynamo's option list is not modelled in
    /// full, so its unknown options are left alone rather than reported.
    fn unknown(&mut self, name: &str, tok: &Arg) {
        if self.front == Front::Dynamo {
            return;
        }
        // click suggests close names (difflib); a name it would have taken as an abbreviation
        // under argparse is the likeliest meaning.
        let names = || SERVE.iter().flat_map(|o| o.names.iter().copied());
        let suggestion = names()
            .find(|n| n.starts_with(name))
            .or_else(|| {
                names()
                    .map(|n| (strsim::damerau_levenshtein(name, n), n))
                    .filter(|(d, n)| *d <= 2.max(n.len() / 6))
                    .min_by_key(|(d, _)| *d)
                    .map(|(_, n)| n)
            })
            .unwrap_or("");
        self.findings.push(
            Finding::new("CFG001", Some(tok.loc))
                .var("flag", name)
                .var("engine", "trtllm-serve")
                .var("version", &self.version)
                .var("suggestion", suggestion),
        );
    }

    fn take(
        &mut self,
        opt: &Opt,
        tok: &Arg,
        explicit: Option<&str>,
        args: &[Arg],
        mut i: usize,
    ) -> usize {
        if matches!(opt.ty, Ty::Flag) {
            match explicit {
                Some(v) => self.invalid(tok, v, "no value"),
                None => self.set(opt.dest, SettingValue::Flag(true), tok, tok),
            }
            return i;
        }
        let value = match explicit {
            Some(v) => Arg {
                text: v.to_string(),
                loc: tok.loc,
                unresolved: tok.unresolved.clone(),
            },
            None => match args.get(i) {
                // click takes any next token; argparse only one that is not an option.
                Some(n) if self.front == Front::Serve || !is_option(&n.text) => {
                    i += 1;
                    n.clone()
                }
                _ => {
                    self.invalid(tok, "", "a value");
                    return i;
                }
            },
        };
        if !value.unresolved.is_empty() {
            let s = Setting {
                dest: opt.dest.to_string(),
                value: SettingValue::Text(value.text.clone()),
                flag_loc: tok.loc,
                value_loc: value.loc,
                unresolved: value.unresolved.clone(),
            };
            self.settings.insert(opt.dest.to_string(), s);
            return i;
        }
        match convert(opt.ty, &value.text) {
            Ok(v) => self.set(opt.dest, v, tok, &value),
            Err(expected) => self.invalid(tok, &value.text, &expected),
        }
        i
    }

    fn set(&mut self, dest: &str, value: SettingValue, flag: &Arg, value_tok: &Arg) {
        let s = Setting {
            dest: dest.to_string(),
            value,
            flag_loc: flag.loc,
            value_loc: value_tok.loc,
            unresolved: value_tok.unresolved.clone(),
        };
        self.settings.insert(dest.to_string(), s); // last one wins, in click and argparse
    }

    fn invalid(&mut self, tok: &Arg, value: &str, expected: &str) {
        let flag = tok.text.split('=').next().unwrap_or(&tok.text);
        self.findings.push(
            Finding::new("CFG004", Some(tok.loc))
                .var("flag", flag)
                .var("value", value)
                .var("expected", expected),
        );
    }

    /// Loads the engine YAML (a ConfigMap file for manifests, else a file beside the input) and
    /// merges it over the command line.
    fn engine_yaml(&mut self, launch: &Launch, path: &Setting, cx: &mut ParseContext) {
        if !path.unresolved.is_empty() {
            return; // `--config $FILE`: contents unknown, INP004 comes from the capacity step
        }
        let SettingValue::Text(name) = &path.value else {
            return;
        };
        let loaded = super::named_file(&launch.files, name, cx);
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

    /// `llm_args | yaml`: each top-level key replaces what the command line built for it.
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
        let cli_fraction = self.settings.get(FRACTION).cloned();
        let mut kv_block = None;
        for (k, v) in entries {
            let Some(key) = k.scalar_text() else { continue };
            self.forget(&key);
            if key == "kv_cache_config" {
                kv_block = Some(k.loc);
            }
            self.insert_node(&key, k.loc, v);
        }
        if let (Some(cli), Some(block)) = (cli_fraction, kv_block) {
            self.fraction_overridden(&cli, block, path);
        }
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

    /// TRT001: the command line's fraction is gone because the YAML's `kv_cache_config` replaced it.
    fn fraction_overridden(&mut self, cli: &Setting, block: Loc, path: &Setting) {
        let Some(cli_value) = float_of(&cli.value) else {
            return;
        };
        let (effective, source) = match self.settings.get(FRACTION).map(|s| float_of(&s.value)) {
            Some(Some(f)) => (f, "the YAML's own value"),
            _ => (DEFAULT_FRACTION, "the KvCacheConfig default"),
        };
        if (effective - cli_value).abs() < 1e-9 {
            return;
        }
        let flag = match self.front {
            Front::Serve => "--kv_cache_free_gpu_memory_fraction",
            Front::Dynamo => "--free-gpu-memory-fraction",
        };
        self.findings.push(
            Finding::new("TRT001", Some(cli.loc()))
                .var("flag", flag)
                .var("value", cli_value)
                .var("effective", effective)
                .var("source", source)
                .var("file", text_of(&path.value))
                .label("ignored by TensorRT-LLM")
                .also(block, "replaces the whole kv_cache_config"),
        );
    }

    /// A YAML value under `dest`: mappings become `dest.child` settings, scalars typed settings.
    fn insert_node(&mut self, dest: &str, key: Loc, v: &Node) {
        let value = match &v.value {
            Value::Null => return,
            Value::Map(children) => {
                for (ck, cv) in children {
                    if let Some(child) = ck.scalar_text() {
                        self.insert_node(&format!("{dest}.{child}"), ck.loc, cv);
                    }
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
        };
        self.settings.insert(dest.to_string(), s);
    }

    /// Dynamo `--override-engine-args JSON`: nested keys override one by one.
    fn override_json(&mut self, o: &Setting) {
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
        let mut flat = Vec::new();
        flatten_json("", &json, &mut flat);
        for (dest, value) in flat {
            let s = Setting {
                dest: dest.clone(),
                value,
                flag_loc: o.flag_loc,
                value_loc: o.value_loc,
                unresolved: Vec::new(),
            };
            self.settings.insert(dest, s);
        }
    }
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

/// click and argparse treat `-x`/`--x` as options; a negative number is a value.
fn is_option(s: &str) -> bool {
    s.starts_with('-') && s.len() > 1 && s.parse::<f64>().is_err()
}

/// click INT / FLOAT / Choice conversion (Python `int()` / `float()` rules).
fn convert(ty: Ty, raw: &str) -> Result<SettingValue, String> {
    match ty {
        Ty::Int => py_int(raw)
            .map(SettingValue::Int)
            .ok_or_else(|| "an integer".into()),
        Ty::Float => py_float(raw)
            .map(SettingValue::Float)
            .ok_or_else(|| "a number".into()),
        Ty::Choice(c) if !c.contains(&raw) => Err(format!("one of {}", c.join(", "))),
        _ => Ok(SettingValue::Text(raw.to_string())),
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

fn float_of(v: &SettingValue) -> Option<f64> {
    match v {
        SettingValue::Float(f) => Some(*f),
        SettingValue::Int(i) => Some(*i as f64),
        _ => None,
    }
}

fn text_of(v: &SettingValue) -> String {
    match v {
        SettingValue::Text(t) => t.clone(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    fn launch(sources: &mut Sources, line: &str) -> Launch {
        let file = sources.add("run.sh", line);
        crate::extract::shell::script_launches(file, line)
            .into_iter()
            .next()
            .expect("a launch")
    }

    fn parse_line(line: &str, base: Option<&std::path::Path>) -> (Parsed, Sources) {
        let mut sources = Sources::default();
        let l = launch(&mut sources, line);
        let mut cx = ParseContext {
            sources: &mut sources,
            base_dir: base.map(Into::into),
        };
        let p = parse(&l, Version::new(1, 0, 0), &mut cx);
        (p, sources)
    }

    fn yaml_parser(cli: &[(&str, SettingValue)]) -> Parser {
        let settings = crate::capacity::testing::args(Engine::Trtllm, "1.0.0", cli).settings;
        Parser {
            front: Front::Serve,
            version: Version::new(1, 0, 0),
            settings,
            findings: Vec::new(),
        }
    }

    fn merge(p: &mut Parser, yaml: &str) {
        let mut s = Sources::default();
        let f = s.add("extra.yaml", yaml);
        let root = crate::yaml::parse_document(f, s.get(f)).unwrap();
        let path = Setting {
            dest: CONFIG.into(),
            value: SettingValue::Text("extra.yaml".into()),
            flag_loc: Loc::new(f, 0..0),
            value_loc: Loc::new(f, 0..0),
            unresolved: vec![],
        };
        p.merge_yaml(&root, &path);
    }

    #[test]
    fn a_yaml_kv_cache_config_block_replaces_the_command_line_fraction() {
        let mut p = yaml_parser(&[
            (FRACTION, SettingValue::Float(0.5)),
            ("max_seq_len", SettingValue::Int(4096)),
        ]);
        merge(&mut p, "kv_cache_config:\n  dtype: fp8\n");
        // The fraction is gone (the class default 0.9 applies), the block's dtype is in, and
        // keys the YAML does not name keep their command-line values.
        assert!(!p.settings.contains_key(FRACTION));
        assert_eq!(
            p.settings["kv_cache_config.dtype"].value,
            SettingValue::Text("fp8".into())
        );
        assert_eq!(p.settings["max_seq_len"].value, SettingValue::Int(4096));
        let f = &p.findings[0];
        assert_eq!(f.rule, "TRT001");
        assert_eq!(f.get("effective"), Some("0.9"));
        assert_eq!(f.get("value"), Some("0.5"));
    }

    #[test]
    fn repeating_the_fraction_in_the_yaml_keeps_it_and_raises_nothing() {
        let mut p = yaml_parser(&[(FRACTION, SettingValue::Float(0.5))]);
        merge(
            &mut p,
            "kv_cache_config:\n  free_gpu_memory_fraction: 0.5\nmax_seq_len: \"8192\"\n",
        );
        assert_eq!(p.settings[FRACTION].value, SettingValue::Float(0.5));
        // pydantic's lax mode reads the quoted number.
        assert_eq!(p.settings["max_seq_len"].value, SettingValue::Int(8192));
        assert!(p.findings.is_empty());
    }

    #[test]
    fn a_yaml_without_kv_cache_config_leaves_the_fraction_alone() {
        let mut p = yaml_parser(&[(FRACTION, SettingValue::Float(0.5))]);
        merge(&mut p, "max_num_tokens: 4096\ntensor_parallel_size: 2\n");
        assert_eq!(p.settings[FRACTION].value, SettingValue::Float(0.5));
        assert!(p.findings.is_empty());
    }

    #[test]
    fn a_non_numeric_capacity_field_is_an_invalid_value() {
        let mut p = yaml_parser(&[]);
        merge(&mut p, "kv_cache_config:\n  max_tokens: lots\n");
        assert_eq!(p.findings[0].rule, "CFG004");
    }

    #[test]
    fn click_matches_names_exactly_and_takes_dashed_values() {
        let (p, _) = parse_line(
            "trtllm-serve meta-llama/Llama-3.1-8B --tp_size 2 --max_seq 4096 --max_seq_len -1 --free_gpu_memory_fraction=0.7\n",
            None,
        );
        let a = &p.args;
        assert_eq!(a.text("model"), Some("meta-llama/Llama-3.1-8B"));
        assert_eq!(a.int("tensor_parallel_size"), Some(2));
        assert_eq!(a.float(FRACTION), Some(0.7));
        // No prefix abbreviation in click: `--max_seq` is unknown.
        assert_eq!(p.findings.len(), 1, "{:?}", p.findings);
        assert_eq!(p.findings[0].rule, "CFG001");
        assert_eq!(p.findings[0].get("suggestion"), Some("--max_seq_len"));
        // `-1` is taken as the value of --max_seq_len.
        assert_eq!(a.int("max_seq_len"), Some(-1));
    }

    #[test]
    fn a_bad_backend_and_a_valued_flag_are_invalid() {
        let (p, _) = parse_line(
            "trtllm-serve serve m --backend onnx --trust_remote_code=yes\n",
            None,
        );
        let rules: Vec<_> = p.findings.iter().map(|f| f.rule).collect();
        assert_eq!(rules, ["CFG004", "CFG004"]);
        assert_eq!(p.args.text("model"), Some("m"));
    }

    #[test]
    fn dynamo_flags_are_argparse_with_prefixes_and_the_engine_yaml_is_read_beside_the_script() {
        let dir = std::env::temp_dir().join(format!("kvlint-trt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("prefill.yaml"),
            "max_seq_len: 16384\nkv_cache_config:\n  tokens_per_block: 64\n",
        )
        .unwrap();
        let (p, _) = parse_line(
            "python3 -m dynamo.trtllm --model-path Qwen/Qwen3-0.6B --free-gpu 0.6 --extra-engine-args prefill.yaml --disaggregation-mode prefill --unknown-dynamo-flag x\n",
            Some(&dir),
        );
        std::fs::remove_dir_all(&dir).ok();
        let a = &p.args;
        assert_eq!(a.text("model"), Some("Qwen/Qwen3-0.6B"));
        assert_eq!(a.int("max_seq_len"), Some(16384));
        assert_eq!(a.int("kv_cache_config.tokens_per_block"), Some(64));
        assert_eq!(a.text("disaggregation_mode"), Some("prefill"));
        assert!(a.get(FRACTION).is_none());
        let rules: Vec<_> = p.findings.iter().map(|f| f.rule).collect();
        assert_eq!(rules, ["TRT001"]);
        assert_eq!(
            p.findings[0].get("flag"),
            Some("--free-gpu-memory-fraction")
        );
    }

    #[test]
    fn dynamo_override_json_sets_nested_fields() {
        let (p, _) = parse_line(
            "python3 -m dynamo.trtllm --model-path m --override-engine-args '{\"kv_cache_config\": {\"free_gpu_memory_fraction\": 0.7}, \"max_seq_len\": 2048}'\n",
            None,
        );
        assert_eq!(p.args.float(FRACTION), Some(0.7));
        assert_eq!(p.args.int("max_seq_len"), Some(2048));
    }

    #[test]
    fn an_unreadable_engine_yaml_is_a_config_finding() {
        let (p, _) = parse_line("trtllm-serve m --config /nonexistent/x.yaml\n", None);
        assert_eq!(p.findings[0].rule, "CFG006");
    }
}
