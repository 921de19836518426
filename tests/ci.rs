//! CI integrations: SARIF, GitHub annotations and summary, several outputs, kvlint.toml,
//! suppressions, and the GitHub Action's script run with a fake GITHUB_* environment.

mod common;

use common::root;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};

const INCIDENT: &str = "fixtures/incident/prefill.sh";
const CLEAN: &str = "fixtures/ci/clean.sh";
const CONFIG: &str = "fixtures/ci/kvlint.toml";

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs kvlint from the repository root with a controlled environment (`env` pairs are added).
fn kvlint_env(args: &[&str], env: &[(&str, &Path)]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvlint"));
    common::hermetic(&mut cmd)
        .args(args)
        .current_dir(root())
        .stdin(Stdio::null())
        // The GPU comes from the fixtures and defaults, never from this machine's NVML.
        .env("CUDA_VISIBLE_DEVICES", "")
        .env_remove("GITHUB_STEP_SUMMARY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("kvlint runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn kvlint(args: &[&str]) -> Run {
    kvlint_env(args, &[])
}

/// `kvlint check --config fixtures/ci/kvlint.toml --format F FILE`.
fn check(format: &str, file: &str) -> Run {
    kvlint(&["check", "--config", CONFIG, "--format", format, file])
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

// ---- SARIF ----

#[test]
fn sarif_has_one_run_every_rule_and_a_located_kv001_result() {
    let run = check("sarif", INCIDENT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let doc = json(&run.stdout);
    assert_eq!(doc["version"], "2.1.0");
    assert_eq!(doc["runs"].as_array().map(Vec::len), Some(1));
    let driver = &doc["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "kvlint");
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    assert!(driver["informationUri"]
        .as_str()
        .is_some_and(|u| u.starts_with("https://")));
    let rules = driver["rules"].as_array().unwrap();
    assert_eq!(rules.len(), kvlint::rules::all().len());
    for r in rules {
        for key in ["id", "name"] {
            assert!(r[key].is_string(), "{r}");
        }
        assert!(
            r["shortDescription"]["text"].is_string() && r["fullDescription"]["text"].is_string()
        );
        assert!(r["help"]["markdown"]
            .as_str()
            .is_some_and(|m| m.contains("## What it does")));
        assert!(["error", "warning", "none"]
            .contains(&r["defaultConfiguration"]["level"].as_str().unwrap()));
    }
    let results = doc["runs"][0]["results"].as_array().unwrap();
    let kv001 = results
        .iter()
        .find(|r| r["ruleId"] == "KV001")
        .expect("KV001 result");
    assert_eq!(kv001["level"], "error");
    assert_eq!(
        rules[kv001["ruleIndex"].as_u64().unwrap() as usize]["id"],
        "KV001"
    );
    let loc = &kv001["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uri"], INCIDENT);
    // `--context-length 1048576` is line 17, columns 3 to 27 (end exclusive).
    let region = &loc["region"];
    assert_eq!(
        (region["startLine"].as_u64(), region["startColumn"].as_u64()),
        (Some(17), Some(3))
    );
    assert_eq!(
        (region["endLine"].as_u64(), region["endColumn"].as_u64()),
        (Some(17), Some(27))
    );
    assert!(kv001["partialFingerprints"]["kvlint/v1"]
        .as_str()
        .is_some_and(|f| f.len() == 16));
}

#[test]
fn sarif_of_a_clean_run_has_an_empty_results_array() {
    let run = check("sarif", CLEAN);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert_eq!(
        json(&run.stdout)["runs"][0]["results"],
        Value::Array(vec![])
    );
}

#[test]
fn sarif_fingerprints_survive_line_moves() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join(INCIDENT)).unwrap();
    let file = dir.path().join("prefill.sh");
    let kv001 = |body: &str| {
        std::fs::write(&file, body).unwrap();
        let doc = json(&check("sarif", file.to_str().unwrap()).stdout);
        let r = doc["runs"][0]["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["ruleId"] == "KV001")
            .cloned()
            .unwrap();
        (
            r["partialFingerprints"].clone(),
            r["locations"][0]["physicalLocation"]["region"]["startLine"].clone(),
        )
    };
    let (before, line_before) = kv001(&text);
    let (after, line_after) = kv001(&format!("\n\n# three lines added above\n{text}"));
    assert_eq!(
        (line_before.as_u64(), line_after.as_u64()),
        (Some(17), Some(20))
    );
    assert_eq!(before, after);
}

/// Validates SARIF against the official 2.1.0 schema in `../shared` (`KVLINT_SHARED` points
/// elsewhere, e.g. from a git worktree).
fn assert_valid_sarif(doc: &Value) {
    let shared =
        std::env::var_os("KVLINT_SHARED").map_or_else(|| root().join("../shared"), Into::into);
    let path = shared.join("schemas/sarif-schema-2.1.0.json");
    let text = std::fs::read_to_string(&path).expect("SARIF schema in ../shared/schemas");
    // The official `language` patterns end in a bare `]`, a literal in ECMA-262 regexes that the
    // validator's regex engine rejects: escape it (same meaning) before compiling.
    let schema = json(&text.replace("{2}]?$", "{2}\\\\]?$"));
    let validator = jsonschema::validator_for(&schema).expect("the SARIF schema compiles");
    let mut broken = doc.clone();
    broken["runs"][0]["results"] =
        serde_json::json!([{ "ruleId": "KV001", "level": "fatal", "message": {} }]);
    assert!(
        !validator.is_valid(&broken),
        "the validator rejects a bad level"
    );
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "SARIF is invalid:\n{}",
        errors.join("\n")
    );
}

#[test]
#[ignore = "reads ../shared"]
fn sarif_validates_against_the_official_schema() {
    for file in [
        INCIDENT,
        CLEAN,
        "fixtures/ci/suppressed.sh",
        "fixtures/KV005",
        "fixtures/pipeline/no-launch.yaml",
        "fixtures/GPU002/fire-flag-vs-node-selector.yaml",
    ] {
        assert_valid_sarif(&json(&check("sarif", file).stdout));
    }
}

/// Every fixture's `check --format json` document, with and without a GPU default, follows the
/// published schema (`schemas/check.schema.json`).
#[test]
fn check_json_follows_its_published_schema() {
    let schema = json(&std::fs::read_to_string(root().join("schemas/check.schema.json")).unwrap());
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    for args in [
        &["check", "--format", "json", "--gpu", "h200", "fixtures"][..],
        &[
            "check",
            "--format",
            "json",
            "fixtures/pipeline",
            "fixtures/INP002",
        ][..],
    ] {
        let doc = json(&kvlint(args).stdout);
        assert!(doc["launches"].as_array().is_some_and(|l| !l.is_empty()));
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .take(5)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{args:?}:\n{}", errors.join("\n"));
    }
    let mut broken = json(&kvlint(&["check", "--format", "json", CLEAN]).stdout);
    broken["launches"][0]["verdict"] = Value::from("fine");
    assert!(
        !validator.is_valid(&broken),
        "the schema rejects an unknown verdict"
    );
}

// ---- GitHub annotations and summary ----

#[test]
fn github_annotations_point_at_the_line_with_the_rule_as_title() {
    let run = check("github", INCIDENT);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let first = run.stdout.lines().next().unwrap();
    assert!(
        first.starts_with("::error file=fixtures/incident/prefill.sh,line=17,col=3,endLine=17,endColumn=27,title=KV001 pool-below-context::prefill KV pool holds "),
        "{first}"
    );
    assert!(
        first.contains("%0Ahelp: lower --context-length to "),
        "{first}"
    );
    assert!(
        run.stdout.lines().all(|l| l.starts_with("::error ")
            || l.starts_with("::warning ")
            || l == "::notice title=kvlint::checked 1 file, 1 launch"),
        "{}",
        run.stdout
    );
    assert_eq!(
        check("github", CLEAN).stdout,
        "::notice title=kvlint::checked 1 file, 1 launch\n"
    );
}

#[test]
fn github_format_writes_the_step_summary_when_set() {
    let dir = tempfile::tempdir().unwrap();
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let run = kvlint_env(
        &["check", "--config", CONFIG, "--format", "github", INCIDENT],
        &[("GITHUB_STEP_SUMMARY", &summary)],
    );
    assert_eq!(run.code, 1);
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step\n## kvlint\n"),
        "appended: {text}"
    );
    assert!(text.contains("| `fixtures/incident/prefill.sh:8` | sglang 0.5.22 (prefill) | zai-org/GLM-5.3 | 8×H200"), "{text}");
    assert!(text.contains("❌ refused"), "{text}");
    // Human output does not touch it.
    std::fs::write(&summary, "").unwrap();
    kvlint_env(
        &["check", "--config", CONFIG, INCIDENT],
        &[("GITHUB_STEP_SUMMARY", &summary)],
    );
    assert_eq!(std::fs::read_to_string(&summary).unwrap(), "");
}

// ---- several outputs ----

#[test]
fn format_output_pairs_repeat_and_only_the_report_reaches_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let sarif = dir.path().join("k.sarif");
    let json_out = dir.path().join("k.json");
    let args = [
        "check",
        "--config",
        CONFIG,
        "--format",
        "sarif",
        "--output",
        sarif.to_str().unwrap(),
        "--format",
        "github",
        "--format",
        "json",
        "--output",
        json_out.to_str().unwrap(),
        INCIDENT,
    ];
    let run = kvlint(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.lines().all(|l| l.starts_with("::")),
        "{}",
        run.stdout
    );
    assert_eq!(
        json(&std::fs::read_to_string(&sarif).unwrap())["version"],
        "2.1.0"
    );
    assert_eq!(
        json(&std::fs::read_to_string(&json_out).unwrap())["schema_version"],
        1
    );
    // Two reports for stdout, or an --output with no --format before it, are usage errors.
    assert_eq!(
        kvlint(&["check", "--config", CONFIG, "--format", "sarif", "--format", "github", INCIDENT])
            .code,
        2
    );
    let run = kvlint(&[
        "check", "--config", CONFIG, "--output", "x", "--format", "sarif", "--output", "y",
        "--format", "json", INCIDENT,
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stdout.is_empty() && run.stderr.contains("--output x"),
        "{}",
        run.stderr
    );
    // A single pair still works in either order.
    let out = dir.path().join("one.json");
    assert_eq!(
        kvlint(&[
            "check",
            "--config",
            CONFIG,
            "--output",
            out.to_str().unwrap(),
            "--format",
            "json",
            INCIDENT
        ])
        .code,
        1
    );
    assert_eq!(
        json(&std::fs::read_to_string(&out).unwrap())["schema_version"],
        1
    );
}

// ---- kvlint.toml ----

/// The launch's GPU, count and `gpu_source` kind for a run with `args` and `$KVLINT_GPU`.
fn gpu_of(args: &[&str], env_gpu: Option<&str>) -> (Value, Value, Value) {
    let env: Vec<(&str, &Path)> = env_gpu
        .map(|g| ("KVLINT_GPU", Path::new(g)))
        .into_iter()
        .collect();
    let mut all = vec!["check", "--format", "json"];
    all.extend_from_slice(args);
    let doc = json(&kvlint_env(&all, &env).stdout);
    let l = &doc["launches"][0];
    (
        l["gpu"].clone(),
        l["gpu_count"].clone(),
        l["gpu_source"]["kind"].clone(),
    )
}

#[test]
fn the_gpu_default_comes_from_the_flag_then_the_env_then_kvlint_toml() {
    let v = |s: &str| Value::from(s);
    // kvlint.toml alone (gpu = "h200x8").
    assert_eq!(
        gpu_of(&["--config", CONFIG, CLEAN], None),
        (v("H200"), Value::from(8), v("config"))
    );
    // $KVLINT_GPU beats kvlint.toml; --gpu beats both.
    assert_eq!(
        gpu_of(&["--config", CONFIG, CLEAN], Some("h100-80gbx8")),
        (v("H100-80GB"), Value::from(8), v("env"))
    );
    assert_eq!(
        gpu_of(
            &["--config", CONFIG, "--gpu", "b200x8", CLEAN],
            Some("h100-80gb")
        ),
        (v("B200"), Value::from(8), v("flag"))
    );
    // None of them replaces the GPU a manifest names.
    assert_eq!(
        gpu_of(
            &[
                "--config",
                CONFIG,
                "fixtures/GPU002/fire-flag-vs-node-selector.yaml"
            ],
            Some("h100-80gb")
        ),
        (v("A100-40GB"), Value::from(1), v("input"))
    );
}

#[test]
fn config_supplies_gpu_and_version_and_levels_and_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("kvlint.toml");
    // Without configuration, the GPU is unknown (INP003). (A device such as /dev/null is no
    // configuration file: it is refused as `check` refuses one as input.)
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let bare = json(
        &kvlint(&[
            "check",
            "--config",
            empty.to_str().unwrap(),
            "--format",
            "json",
            INCIDENT,
        ])
        .stdout,
    );
    assert!(bare["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["rule"] == "INP003"));
    // KV001 demoted to warn passes at the default fail level, and fails at fail-on = "warn".
    std::fs::write(
        &cfg,
        "gpu = \"h200x8\"\nengine-version = \"0.5.22\"\n[rules]\npool-below-context = \"warn\"\n",
    )
    .unwrap();
    let run = kvlint(&[
        "check",
        "--config",
        cfg.to_str().unwrap(),
        "--format",
        "json",
        INCIDENT,
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let doc = json(&run.stdout);
    let kv001 = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "KV001")
        .cloned()
        .unwrap();
    assert_eq!(kv001["level"], "warn");
    assert_eq!(
        kvlint(&[
            "check",
            "--config",
            cfg.to_str().unwrap(),
            "--fail-on",
            "warn",
            INCIDENT
        ])
        .code,
        1
    );
    // A KV003 ratio of 1 turns the "fits once" prefill into a pass.
    let kv003 = "fixtures/KV003/fire-prefill-fits-once.sh";
    std::fs::write(
        &cfg,
        "gpu = \"h200x8\"\nengine-version = \"0.5.22\"\n[rules.KV003]\nmin_ratio = 1.0\n",
    )
    .unwrap();
    let rules = |c: &Path| {
        let doc = json(
            &kvlint(&[
                "check",
                "--config",
                c.to_str().unwrap(),
                "--format",
                "json",
                kv003,
            ])
            .stdout,
        );
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert!(!rules(&cfg).contains(&"KV003".to_string()));
    std::fs::write(&cfg, "gpu = \"h200x8\"\nengine-version = \"0.5.22\"\n").unwrap();
    assert!(rules(&cfg).contains(&"KV003".to_string()));
}

#[test]
fn config_is_discovered_upward_and_excludes_apply_when_walking() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("kvlint.toml"),
        "gpu = \"h200x8\"\nengine-version = \"0.5.22\"\nexclude = [\"vendor/**\"]\n",
    )
    .unwrap();
    let deploy = dir.path().join("deploy");
    std::fs::create_dir_all(deploy.join("vendor")).unwrap();
    let incident = std::fs::read_to_string(root().join(INCIDENT)).unwrap();
    std::fs::write(deploy.join("vendor/prefill.sh"), &incident).unwrap();
    std::fs::write(
        deploy.join("clean.sh"),
        std::fs::read_to_string(root().join(CLEAN)).unwrap(),
    )
    .unwrap();
    // `vendor/**` is relative to kvlint.toml's directory, so deploy/vendor is not excluded...
    let run = kvlint(&["check", deploy.to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    std::fs::write(
        dir.path().join("kvlint.toml"),
        "gpu = \"h200x8\"\nengine-version = \"0.5.22\"\nexclude = [\"deploy/vendor\"]\n",
    )
    .unwrap();
    // ...while `deploy/vendor` is, and the clean launch passes with the discovered GPU.
    let run = kvlint(&["check", deploy.to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("8×H200"), "{}", run.stdout);
}

#[test]
fn unknown_config_keys_exit_2_pointing_at_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("kvlint.toml");
    std::fs::write(&cfg, "gpu = \"h200x8\"\nfail_on = \"warn\"\n").unwrap();
    let run = kvlint(&["check", "--config", cfg.to_str().unwrap(), INCIDENT]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains(&format!("{}:2:1: unknown field `fail_on`", cfg.display())),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
    std::fs::write(&cfg, "[rules.KV003]\nmin_ratio = 3.0\nratio = 2\n").unwrap();
    let run = kvlint(&["check", "--config", cfg.to_str().unwrap(), INCIDENT]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains(":3:1: KV003 has no parameter `ratio`"),
        "{}",
        run.stderr
    );
}

#[test]
fn the_config_schema_is_generated_and_fresh() {
    let path = root().join("schemas/kvlint.schema.json");
    let fresh = format!(
        "{}\n",
        serde_json::to_string_pretty(&kvlint::config::schema()).unwrap()
    );
    if std::env::var_os("KVLINT_UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &fresh).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "schemas/kvlint.schema.json is stale: run KVLINT_UPDATE_SCHEMA=1 cargo test --test ci"
    );
    let doc = json(&fresh);
    assert_eq!(doc["additionalProperties"], false);
    assert!(doc["properties"]["rules"]["propertyNames"]["enum"]
        .as_array()
        .unwrap()
        .contains(&Value::from("pool-headroom-low")));
}

// ---- suppressions ----

#[test]
fn a_suppressed_kv001_does_not_fail_the_run_and_is_counted() {
    let file = "fixtures/ci/suppressed.sh";
    let run = check("json", file);
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let doc = json(&run.stdout);
    assert_eq!(doc["suppressed"], 1);
    assert!(doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["rule"] != "KV001"));
    assert!(check("human", file)
        .stdout
        .contains("0 errors, 0 warnings, 1 suppressed"));
    let sarif = json(&check("sarif", file).stdout);
    let r = &sarif["runs"][0]["results"][0];
    assert_eq!(r["ruleId"], "KV001");
    assert_eq!(r["suppressions"][0]["kind"], "inSource");
    assert!(r["suppressions"][0]["justification"]
        .as_str()
        .unwrap()
        .starts_with("prompts are capped"));
    // --no-ignore brings it back.
    assert_eq!(
        kvlint(&["check", "--config", CONFIG, "--no-ignore", file]).code,
        1
    );
}

#[test]
fn a_pod_template_annotation_suppresses_and_an_unreasoned_one_is_sup001() {
    let file = "fixtures/ci/deployment.yaml";
    let doc = json(&check("json", file).stdout);
    assert_eq!(doc["suppressed"], 1);
    let rules: Vec<&str> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert_eq!(rules, ["SUP001"]);
    assert_eq!(doc["findings"][0]["line"], 9);
    let run = kvlint(&[
        "check",
        "--config",
        CONFIG,
        "--no-ignore",
        "--format",
        "json",
        file,
    ]);
    let rules: Vec<String> = json(&run.stdout)["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(rules, ["KV001"]);
}

// ---- the GitHub Action ----

/// Runs `scripts/kvlint-action.sh run` as the action would, with the built kvlint on PATH.
fn action(paths: &str, extra: &[(&str, &str)]) -> (i32, String, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let (output, summary) = (dir.path().join("output"), dir.path().join("summary.md"));
    std::fs::write(&output, "").unwrap();
    std::fs::write(&summary, "").unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_kvlint")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new("bash");
    common::hermetic(&mut cmd)
        .arg(root().join("scripts/kvlint-action.sh"))
        .arg("run")
        .current_dir(dir.path())
        .env("PATH", path)
        .env("GITHUB_WORKSPACE", root())
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("INPUT_PATHS", paths)
        .env("INPUT_CONFIG", CONFIG)
        .env_remove("KVLINT_GPU");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs the action script");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        read(&summary),
        read(&output),
    )
}

#[test]
fn the_action_annotates_summarises_sets_outputs_and_fails_on_the_incident() {
    let sarif = tempfile::tempdir().unwrap();
    let sarif_path = sarif.path().join("out/kvlint.sarif");
    let (code, stdout, summary, outputs) =
        action(INCIDENT, &[("INPUT_SARIF", sarif_path.to_str().unwrap())]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("::error file=fixtures/incident/prefill.sh,line=17,col=3,"),
        "{stdout}"
    );
    assert!(
        summary.contains(
            "| launch | engine | model | GPU | TP | pool / context (tokens) | headroom | verdict |"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("❌ refused") && summary.contains("KV001 `pool-below-context`"),
        "{summary}"
    );
    let annotations = stdout
        .lines()
        .filter(|l| l.starts_with("::error ") || l.starts_with("::warning "))
        .count();
    assert!(
        outputs.contains(&format!("findings={annotations}\n")),
        "{outputs}"
    );
    assert!(
        outputs.contains(&format!("sarif-file={}\n", sarif_path.display())),
        "{outputs}"
    );
    assert_eq!(
        json(&std::fs::read_to_string(&sarif_path).unwrap())["version"],
        "2.1.0"
    );
}

#[test]
fn the_action_passes_a_clean_example_and_can_skip_the_summary() {
    let (code, stdout, summary, outputs) = action(CLEAN, &[("INPUT_SUMMARY", "false")]);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(stdout, "::notice title=kvlint::checked 1 file, 1 launch\n");
    assert_eq!(summary, "");
    assert!(
        outputs.contains("findings=0\n") && outputs.contains("sarif-file=\n"),
        "{outputs}"
    );
    let (code, _, summary, _) = action(&format!("{CLEAN}\n  {CLEAN}"), &[]);
    assert_eq!(code, 0);
    assert!(summary.contains("✅ passes"), "{summary}");
}

#[test]
fn action_yml_passes_inputs_through_env_only() {
    let yml = std::fs::read_to_string(root().join("action.yml")).unwrap();
    for line in yml.lines().filter(|l| l.trim_start().starts_with("run:")) {
        assert!(!line.contains("${{"), "expression inside run: {line}");
    }
    for input in ["paths", "config", "gpu", "fail-on", "sarif", "summary"] {
        assert!(yml.contains(&format!("\n  {input}:\n")), "input {input}");
        assert!(
            yml.contains(&format!("${{{{ inputs.{input} }}}}")),
            "input {input} passed through env"
        );
    }
}

// ---- snapshots: every format on the same fixtures ----

#[test]
fn every_format_on_the_incident_and_a_clean_launch() {
    for (name, file) in [("incident", INCIDENT), ("clean", CLEAN)] {
        for format in ["human", "json", "sarif", "github"] {
            let run = check(format, file);
            let snap = format!("{format}__{name}");
            match format {
                "json" => {
                    insta::assert_json_snapshot!(snap, json(&run.stdout), { ".launches[].assumptions" => "[assumptions]" })
                }
                "sarif" => {
                    insta::assert_json_snapshot!(snap, json(&run.stdout), { ".runs[].tool.driver.rules" => "[rules]", ".runs[].tool.driver.version" => "[version]", ".runs[].tool.driver.semanticVersion" => "[version]" })
                }
                _ => insta::assert_snapshot!(snap, format!("exit: {}\n{}", run.code, run.stdout)),
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let summary = dir.path().join("summary.md");
        kvlint(&[
            "check",
            "--config",
            CONFIG,
            "--format",
            "json",
            "--output",
            "/dev/null",
            "--summary",
            summary.to_str().unwrap(),
            file,
        ]);
        insta::assert_snapshot!(
            format!("summary__{name}"),
            std::fs::read_to_string(&summary).unwrap()
        );
    }
}
