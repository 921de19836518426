//! Every platform file (`platforms/*.toml`) parses, and has fixtures in its real shape that it
//! must read (`fixtures/platforms/<name>/fire-*`) and fixtures it must not read (`pass-*`), found
//! by this one harness. A fire fixture lists what a careful reader of the file sees, one
//! `# expect:` line per launch in order (`engine= role= tp= context= model= gpu=`, `-` for none);
//! a pass fixture gives no launch of the platform.

mod common;

use common::{directive, kvlint, root};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures(name: &str, kind: &str) -> Vec<PathBuf> {
    let dir = root().join("fixtures/platforms").join(name);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(kind))
    });
    files.sort();
    files
}

/// `kvlint check --format json` of a file, with its `# kvlint-test:` arguments.
pub fn check(path: &Path) -> Value {
    let mut args: Vec<String> = vec!["check".into(), "--format".into(), "json".into()];
    args.extend(directive(path));
    args.push(path.to_string_lossy().into_owned());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = kvlint(&refs);
    assert!(
        run.code == 0 || run.code == 1,
        "{}: exit {}\n{}",
        path.display(),
        run.code,
        run.stderr
    );
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The launch's fields a careful reader lists, as `# expect:` writes them.
fn seen(launch: &Value, keys: &[&str]) -> String {
    keys.iter()
        .map(|k| {
            let field = match *k {
                "context" => "context_length",
                other => other,
            };
            let v = match &launch[field] {
                Value::Null => "-".to_string(),
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            format!("{k}={v}")
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Each `# expect:` line's keys and the line itself, normalized.
fn expected(path: &Path) -> Vec<(Vec<String>, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("# expect:"))
        .map(|l| {
            let pairs: Vec<&str> = l.split_whitespace().collect();
            let keys = pairs
                .iter()
                .map(|p| p.split('=').next().unwrap_or_default().to_string())
                .collect();
            (keys, pairs.join(" "))
        })
        .collect()
}

/// The launches of `title` in a report.
fn of_platform<'v>(doc: &'v Value, title: &str) -> Vec<&'v Value> {
    doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["object"]["kind"].as_str() == Some(title))
        .collect()
}

#[test]
fn every_platform_file_holds_the_schema() {
    let errors = kvlint::platform::builtin_errors();
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(kvlint::platform::builtin().len() >= 2);
}

#[test]
fn every_platform_reads_its_fire_fixtures_and_not_its_pass_fixtures() {
    for p in kvlint::platform::builtin() {
        let fire = fixtures(&p.name, "fire-");
        let pass = fixtures(&p.name, "pass-");
        assert!(
            !fire.is_empty(),
            "{} has no fixtures/platforms/{}/fire-*",
            p.name,
            p.name
        );
        assert!(
            !pass.is_empty(),
            "{} has no fixtures/platforms/{}/pass-*",
            p.name,
            p.name
        );
        for f in fire {
            let doc = check(&f);
            let launches = of_platform(&doc, &p.title);
            let want = expected(&f);
            assert!(!want.is_empty(), "{}: no `# expect:` line", f.display());
            let got: Vec<String> = launches
                .iter()
                .zip(&want)
                .map(|(l, (keys, _))| seen(l, &keys.iter().map(String::as_str).collect::<Vec<_>>()))
                .collect();
            let want: Vec<String> = want.into_iter().map(|(_, line)| line).collect();
            assert_eq!(launches.len(), want.len(), "{}: {launches:#?}", f.display());
            assert_eq!(got, want, "{}", f.display());
        }
        for f in pass {
            let doc = check(&f);
            let launches = of_platform(&doc, &p.title);
            assert!(launches.is_empty(), "{}: {launches:#?}", f.display());
        }
    }
}

/// Option maps are keyword arguments: the KubeRay RayService's `device: auto` is no field of any
/// modelled vLLM release's `AsyncEngineArgs`, so it is CFG001 at the key, never CFG005 ("an
/// abbreviation of several options", argparse's reading).
#[test]
#[ignore = "reads ../shared"]
fn rayservice_device_is_an_unknown_field_in_every_release() {
    let path = root().join("../shared/manifests/kuberay-rayservice-vllm.yaml");
    for v in ["0.11.0", "0.20.0", "0.33.0"] {
        let run = kvlint(&[
            "check",
            "--format",
            "json",
            "--engine-version",
            &format!("vllm={v}"),
            path.to_str().unwrap(),
        ]);
        let doc: Value = serde_json::from_str(&run.stdout).unwrap();
        let rules = common::rules(&doc);
        assert!(!rules.contains(&"CFG005"), "{v}: {rules:?}");
        let cfg001: Vec<&Value> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "CFG001")
            .collect();
        assert_eq!(cfg001.len(), 1, "{v}: {rules:?}");
        assert!(cfg001[0]["message"].as_str().unwrap().contains("device"));
    }
}

/// The real Ray Serve LLM configs in ../shared/platforms, as a careful reader lists them.
#[test]
#[ignore = "reads ../shared"]
fn ray_serve_configs_of_other_projects() {
    let dir = root().join("../shared/platforms");
    let cases: &[(&str, &[&str])] = &[
        (
            "ray-serve-llm-config-kv-router.yaml",
            &["engine=vllm role=unified tp=1 context=2048 model=Qwen/Qwen3-1.7B gpu=L4"],
        ),
        (
            "ray-serve-llm-config-pd.yaml",
            &[
                "engine=vllm role=prefill tp=1 context=8192 model=RedHatAI/Qwen3.5-9B-quantized.w4a16 gpu=A10G",
                "engine=vllm role=decode tp=1 context=8192 model=RedHatAI/Qwen3.5-9B-quantized.w4a16 gpu=A10G",
            ],
        ),
    ];
    for (file, want) in cases {
        let doc = check(&dir.join(file));
        let launches = of_platform(&doc, "Ray Serve LLM config");
        let got: Vec<String> = launches
            .iter()
            .zip(want.iter())
            .map(|(l, w)| {
                let keys: Vec<&str> = w
                    .split_whitespace()
                    .map(|p| p.split('=').next().unwrap())
                    .collect();
                seen(l, &keys)
            })
            .collect();
        assert_eq!(launches.len(), want.len(), "{file}");
        assert_eq!(&got, want, "{file}");
    }
}
