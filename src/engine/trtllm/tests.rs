use super::*;
use crate::source::{Loc, Sources};

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
    let p = parse(&l, Version::new(1, 0, 0), true, &mut cx);
    (p, sources)
}

fn yaml_parser(cli: &[(&str, SettingValue)]) -> Parser {
    let settings = crate::capacity::testing::args(Engine::Trtllm, "1.0.0", cli).settings;
    Parser {
        front: Front::Serve,
        version: Version::new(1, 0, 0),
        release_known: true,
        settings,
        findings: Vec::new(),
        unseen: Vec::new(),
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
        defaulted: false,
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

fn release_parser(release: &str, cli: &[(&str, SettingValue)]) -> Parser {
    let mut p = yaml_parser(cli);
    p.version = Version::parse(release).unwrap();
    p
}

#[test]
fn a_misspelt_kv_cache_key_is_refused_at_its_own_span_and_never_becomes_the_fraction() {
    let yaml = "max_seq_len: 8192\nkv_cache_config:\n  free_gpu_memory_fractoin: 0.6\n";
    let mut p = yaml_parser(&[]);
    merge(&mut p, yaml);
    assert_eq!(p.findings.len(), 1, "{:?}", p.findings);
    let f = &p.findings[0];
    assert_eq!(f.rule, "CFG001");
    assert_eq!(
        f.get("suggestion"),
        Some("kv_cache_config.free_gpu_memory_fraction")
    );
    let at = f.primary.as_ref().unwrap().range();
    assert_eq!(&yaml[at], "free_gpu_memory_fractoin");
    // The engine never reads the misspelt key: the fraction stays the KvCacheConfig default.
    assert!(p.settings.keys().all(|k| !k.contains("fractoin")));
    assert!(!p.settings.contains_key(FRACTION));
    assert_eq!(p.settings["max_seq_len"].value, SettingValue::Int(8192));
}

#[test]
fn an_unknown_top_level_key_is_refused_and_known_nested_models_are_left_alone() {
    let yaml = "max_sql_len: 8192\ncuda_graph_config:\n  anything_goes_here: 1\n";
    let mut p = yaml_parser(&[]);
    merge(&mut p, yaml);
    let rules: Vec<_> = p.findings.iter().map(|f| f.rule).collect();
    assert_eq!(rules, ["CFG001"]);
    assert_eq!(p.findings[0].get("suggestion"), Some("max_seq_len"));
    assert!(!p.settings.contains_key("max_sql_len"));
}

#[test]
fn autodeploy_files_are_not_checked_against_the_pytorch_fields() {
    let mut p = yaml_parser(&[]);
    merge(
        &mut p,
        "backend: _autodeploy\nfree_mem_ratio: 0.8\nruntime: trtllm\n",
    );
    assert!(p.findings.is_empty(), "{:?}", p.findings);
}

#[test]
fn from_1_2_a_kv_cache_block_is_merged_over_the_command_line() {
    // 1.2.0 keeps the command line's fraction when the block does not name one.
    let mut p = release_parser("1.2.0", &[(FRACTION, SettingValue::Float(0.5))]);
    merge(&mut p, "kv_cache_config:\n  dtype: fp8\n");
    assert_eq!(p.settings[FRACTION].value, SettingValue::Float(0.5));
    assert_eq!(
        p.settings["kv_cache_config.dtype"].value,
        SettingValue::Text("fp8".into())
    );
    assert!(p.findings.is_empty(), "{:?}", p.findings);
    // A fraction of the block's own wins there, and TRT001 says the flag is ignored.
    let mut p = release_parser("1.2.0", &[(FRACTION, SettingValue::Float(0.5))]);
    merge(
        &mut p,
        "kv_cache_config:\n  free_gpu_memory_fraction: 0.7\n",
    );
    assert_eq!(p.settings[FRACTION].value, SettingValue::Float(0.7));
    assert_eq!(p.findings[0].rule, "TRT001");
    assert_eq!(p.findings[0].get("effective"), Some("0.7"));
}

#[test]
fn from_1_3_the_smaller_of_two_explicit_fractions_is_planned() {
    // Whether the flag or the file wins depends on NVIDIA/TensorRT-LLM#14812: plan the smaller,
    // and say that some of these releases use the file's.
    let mut p = release_parser("1.3.0rc20", &[(FRACTION, SettingValue::Float(0.5))]);
    merge(
        &mut p,
        "kv_cache_config:\n  free_gpu_memory_fraction: 0.8\n",
    );
    assert_eq!(p.settings[FRACTION].value, SettingValue::Float(0.5));
    assert_eq!(p.findings[0].rule, "TRT001");
    assert_eq!(p.findings[0].get("effective"), Some("0.8"));
    let mut p = release_parser("1.3.0rc20", &[(FRACTION, SettingValue::Float(0.8))]);
    merge(
        &mut p,
        "kv_cache_config:\n  free_gpu_memory_fraction: 0.5\n",
    );
    assert_eq!(p.settings[FRACTION].value, SettingValue::Float(0.5));
    assert_eq!(p.findings[0].rule, "TRT001");
}

#[test]
fn an_unknown_release_plans_with_the_smaller_of_replace_and_merge() {
    // 1.0/1.1 take the 0.9 default, 1.2+ keep 0.5: 0.5 is planned, TRT001 names the 0.9.
    let mut p = yaml_parser(&[(FRACTION, SettingValue::Float(0.5))]);
    p.release_known = false;
    merge(&mut p, "kv_cache_config:\n  enable_block_reuse: false\n");
    assert_eq!(p.settings[FRACTION].value, SettingValue::Float(0.5));
    assert_eq!(p.findings[0].rule, "TRT001");
    assert_eq!(p.findings[0].get("effective"), Some("0.9"));
    // A flag above the default: the releases that drop it give the smaller pool.
    let mut p = yaml_parser(&[(FRACTION, SettingValue::Float(0.95))]);
    p.release_known = false;
    merge(&mut p, "kv_cache_config:\n  enable_block_reuse: false\n");
    assert!(!p.settings.contains_key(FRACTION));
    assert_eq!(p.findings[0].get("effective"), Some("0.9"));
}

#[test]
fn a_dynamo_override_of_kv_cache_config_replaces_it_whole() {
    // deep_update does not recurse into the KvCacheConfig object: the flag's 0.6 is gone.
    let (p, _) = parse_line(
        "python3 -m dynamo.trtllm --model-path m --free-gpu-memory-fraction 0.6 --override-engine-args '{\"kv_cache_config\": {\"max_tokens\": 1000}}'\n",
        None,
    );
    assert_eq!(p.args.get(FRACTION).map(|s| s.value.clone()), None);
    assert_eq!(p.args.int("kv_cache_config.max_tokens"), Some(1000));
    let f = &p.findings[0];
    assert_eq!((f.rule, f.get("effective")), ("TRT001", Some("0.9")));
    assert_eq!(f.get("file"), Some("--override-engine-args"));
    // Other arguments are still overridden key by key.
    let (p, _) = parse_line(
        "python3 -m dynamo.trtllm --model-path m --free-gpu-memory-fraction 0.6 --override-engine-args '{\"max_seq_len\": 2048}'\n",
        None,
    );
    assert_eq!(p.args.float(FRACTION), Some(0.6));
    assert!(p.findings.is_empty());
}

#[test]
fn a_command_line_spelling_in_the_yaml_points_at_its_llm_api_field() {
    let mut p = yaml_parser(&[]);
    merge(
        &mut p,
        "kv_cache_free_gpu_memory_fraction: 0.8\ntp_size: 2\n",
    );
    let s: Vec<_> = p.findings.iter().map(|f| f.get("suggestion")).collect();
    assert_eq!(
        s,
        [
            Some("kv_cache_config.free_gpu_memory_fraction"),
            Some("tensor_parallel_size")
        ]
    );
    // Neither is read: the fraction stays the default.
    assert!(!p.settings.contains_key(FRACTION));
}
