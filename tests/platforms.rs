//! Every platform file (`platforms/*.toml`) parses, and has fixtures in its real shape that it
//! must read (`fixtures/platforms/<name>/fire-*`) and fixtures it must not read (`pass-*`), found
//! by this one harness. A fire fixture lists what a careful reader of the file sees, one
//! `# expect:` line per launch in order (`engine= role= tp= context= model= gpu=`, `-` for none);
//! a pass fixture gives no launch of the platform. A `# rules: ID...` line names findings the
//! fixture must give. A fire fixture of a platform whose launch is in another object (`base`) or
//! another file (`[elsewhere]`) that the input lacks has no `# expect:` line: it is INP006 naming
//! the platform, with no launch.

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
            .is_some_and(|n| n.starts_with(kind) && !n.ends_with(".expect"))
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

/// Each `# expect:` line's keys and the line itself, normalized: in the fixture, or in
/// `<fixture>.expect` beside it (a JSON fixture has no comments).
fn expected(path: &Path) -> Vec<(Vec<String>, String)> {
    let mut beside = path.as_os_str().to_owned();
    beside.push(".expect");
    let text = std::fs::read_to_string(&beside)
        .or_else(|_| std::fs::read_to_string(path))
        .unwrap();
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

/// The rules a fixture's `# rules:` lines name.
fn named_rules(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix("# rules:"))
        .flat_map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
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

/// The launches of platform `p` in a report: those titled as it, and, for a platform of
/// Kubernetes objects, those of its kinds (their launches carry the object's kind).
fn of<'v>(doc: &'v Value, p: &kvlint::platform::Platform) -> Vec<&'v Value> {
    let r = &p.recognize;
    let held = r.embedded_in.iter().flat_map(|e| e.kinds.iter());
    let kinds: Vec<&str> = r.kinds.iter().chain(held).map(String::as_str).collect();
    doc["launches"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| {
            let kind = l["object"]["kind"].as_str().unwrap_or_default();
            kind == p.title || kinds.contains(&kind)
        })
        .collect()
}

/// Whether a report holds INP006 naming the platform: a document of it that gave no launch.
fn says_elsewhere(doc: &Value, p: &kvlint::platform::Platform) -> bool {
    let names = format!("this names {}, ", p.title);
    doc["findings"].as_array().unwrap().iter().any(|f| {
        f["rule"] == "INP006" && f["message"].as_str().is_some_and(|m| m.starts_with(&names))
    })
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
            let launches = of(&doc, p);
            let want = expected(&f);
            let based = p.launches.iter().any(|s| s.base.is_some());
            if (p.launches.is_empty() && p.elsewhere.is_some()) || (based && want.is_empty()) {
                // Its documents hold no launch (or the object that holds it is not in the input):
                // the fire fixture is INP006 naming it.
                assert!(launches.is_empty(), "{}: {launches:#?}", f.display());
                assert!(says_elsewhere(&doc, p), "{}: {doc:#}", f.display());
                continue;
            }
            assert!(!want.is_empty(), "{}: no `# expect:` line", f.display());
            let got: Vec<String> = launches
                .iter()
                .zip(&want)
                .map(|(l, (keys, _))| seen(l, &keys.iter().map(String::as_str).collect::<Vec<_>>()))
                .collect();
            let want: Vec<String> = want.into_iter().map(|(_, line)| line).collect();
            assert_eq!(launches.len(), want.len(), "{}: {launches:#?}", f.display());
            assert_eq!(got, want, "{}", f.display());
            let rules = common::rules(&doc);
            for id in named_rules(&f) {
                assert!(
                    rules.contains(&id.as_str()),
                    "{}: no {id} in {rules:?}",
                    f.display()
                );
            }
        }
        for f in pass {
            let doc = check(&f);
            let launches = of(&doc, p);
            assert!(launches.is_empty(), "{}: {launches:#?}", f.display());
            // Some pass fixtures are INP006 by design (a profile that names no engine); a
            // platform whose launch is elsewhere says nothing where that file is checked too.
            let quiet = p.elsewhere.is_none() || !says_elsewhere(&doc, p);
            assert!(quiet, "{}: {doc:#}", f.display());
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

/// Real files of other projects (../shared/platforms, ../shared/manifests), as a careful reader
/// lists their launches; none of them has an option the platform would refuse (CFG001).
#[test]
#[ignore = "reads ../shared"]
fn real_files_of_other_projects() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "platforms/ray-serve-llm-config-kv-router.yaml",
            "Ray Serve LLM config",
            // `default_chat_template_kwargs` is vLLM's FrontendArgs field, which Ray Serve LLM takes.
            &["engine=vllm role=unified tp=1 context=2048 model=Qwen/Qwen3-1.7B gpu=L4"],
        ),
        (
            "platforms/ray-serve-llm-config-pd.yaml",
            "Ray Serve LLM config",
            &[
                "engine=vllm role=prefill tp=1 context=8192 model=RedHatAI/Qwen3.5-9B-quantized.w4a16 gpu=A10G",
                "engine=vllm role=decode tp=1 context=8192 model=RedHatAI/Qwen3.5-9B-quantized.w4a16 gpu=A10G",
            ],
        ),
        (
            // Chart defaults: the model is left for install time, no GPU is requested.
            "platforms/castai-chart-values-vllm.yaml",
            "CAST AI vLLM chart values",
            &["engine=vllm role=unified tp=1 context=- model=- gpu=-"],
        ),
        (
            // `vllm-release` is the worker's key, not vLLM's; no GPU is named (the endpoint's).
            "platforms/runpod-worker-vllm-config-gemma4.yaml",
            "Runpod worker-vllm config",
            &["engine=vllm role=unified tp=1 context=8192 model=google/gemma-4-31b-it gpu=-"],
        ),
    ];
    for (file, title, want) in cases {
        let doc = check(&root().join("../shared").join(file));
        let launches = of_platform(&doc, title);
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
        let rules = common::rules(&doc);
        assert!(!rules.contains(&"CFG001"), "{file}: {rules:?}");
    }
}

/// `docs/src/platforms.md` and the README's platform table are generated from the platform files;
/// `KVLINT_UPDATE_BOOK=1` rewrites them.
#[test]
fn book_page_and_readme_table_are_current() {
    let mut all: Vec<kvlint::platform::Platform> = kvlint::platform::builtin().to_vec();
    all.sort_by(|a, b| a.name.cmp(&b.name));
    let update = std::env::var("KVLINT_UPDATE_BOOK").is_ok_and(|v| v == "1");
    let page_path = root().join("docs/src/platforms.md");
    let page = kvlint::platform::docs::book_page(&all);
    let readme_path = root().join("README.md");
    let readme = std::fs::read_to_string(&readme_path).unwrap();
    let (head, rest) = readme
        .split_once("<!-- platforms:start")
        .expect("start marker");
    let (marker_rest, _) = rest.split_once("-->").expect("start marker end");
    let (_, tail) = rest
        .split_once("<!-- platforms:end -->")
        .expect("end marker");
    let table = kvlint::platform::docs::readme_table(&all);
    let fresh =
        format!("{head}<!-- platforms:start{marker_rest}-->\n{table}<!-- platforms:end -->{tail}");
    if update {
        std::fs::write(&page_path, &page).unwrap();
        std::fs::write(&readme_path, &fresh).unwrap();
    }
    let on_disk = std::fs::read_to_string(&page_path).unwrap_or_default();
    assert!(
        on_disk == page,
        "docs/src/platforms.md is stale: KVLINT_UPDATE_BOOK=1 cargo test --test platforms"
    );
    assert!(
        readme == fresh || update,
        "README.md's platform table is stale: KVLINT_UPDATE_BOOK=1 cargo test --test platforms"
    );
}

/// `kvlint platforms` lists every platform; with a name, its docs; an unknown name is exit 2.
#[test]
fn platforms_command_lists_and_explains() {
    let list = kvlint(&["platforms", "--format", "json"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    let doc: Value = serde_json::from_str(&list.stdout).unwrap();
    let names: Vec<&str> = doc
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"ray-serve-config"), "{names:?}");
    assert_eq!(names.len(), kvlint::platform::builtin().len());
    let one = kvlint(&["platforms", "ray-serve-config"]);
    insta::assert_snapshot!(one.stdout);
    let none = kvlint(&["platforms", "no-such-platform"]);
    assert_eq!(none.code, 2);
    assert!(none.stderr.contains("no platform"), "{}", none.stderr);
}

/// A site adds its own platform in kvlint.toml (`[[platform]]`, the same schema): an in-house CRD
/// whose engine settings are an option map.
#[test]
fn a_site_adds_its_own_platform_in_kvlint_toml() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kvlint.toml");
    std::fs::write(
        &config,
        r#"
[[platform]]
name = "acme-llm"
title = "Acme LLMServer"
engine = "vllm"
recognize = { kinds = ["LLMServer"], api_versions = ["serving.acme.io/"] }
docs = { what = "Acme's in-house serving CRD.", settings = "`spec.engine` holds vLLM engine arguments.", source = "https://wiki.acme.example/llmserver" }

[[platform.launch]]
at = "spec"
options = "engine"
keys = "kwargs"
model = ["model"]
gpu_type = ["gpu.type"]
gpu_count = ["gpu.count"]
"#,
    )
    .unwrap();
    let manifest = dir.path().join("server.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: serving.acme.io/v1\nkind: LLMServer\nmetadata: {name: chat}\nspec:\n  model: Qwen/Qwen3-8B\n  gpu: {type: H100, count: 2}\n  engine:\n    tensor_parallel_size: 2\n    max_model_len: 32768\n",
    )
    .unwrap();
    let run = kvlint(&[
        "check",
        "--format",
        "json",
        "--engine-version",
        "vllm=0.33.0",
        "--config",
        config.to_str().unwrap(),
        manifest.to_str().unwrap(),
    ]);
    let doc: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr));
    let launches = of_platform(&doc, "LLMServer");
    assert_eq!(launches.len(), 1, "{doc:#}");
    assert_eq!(
        seen(launches[0], &["engine", "tp", "context", "model", "gpu"]),
        "engine=vllm tp=2 context=32768 model=Qwen/Qwen3-8B gpu=H100-80GB"
    );
    // Without the site's file, the CRD is no launch.
    let empty = dir.path().join("empty.toml");
    std::fs::write(&empty, "").unwrap();
    let bare = kvlint(&[
        "check",
        "--format",
        "json",
        "--config",
        empty.to_str().unwrap(),
        manifest.to_str().unwrap(),
    ]);
    let doc: Value = serde_json::from_str(&bare.stdout).unwrap_or_default();
    assert!(of_platform(&doc, "LLMServer").is_empty());
    // A broken platform table is a config error, exit 2, naming the line.
    std::fs::write(&config, "[[platform]]\nname = \"x\"\n").unwrap();
    let broken = kvlint(&[
        "check",
        "--config",
        config.to_str().unwrap(),
        manifest.to_str().unwrap(),
    ]);
    assert_eq!(broken.code, 2, "{}", broken.stderr);
    assert!(broken.stderr.contains("[[platform]]"), "{}", broken.stderr);
}

/// A site's `mounts` rewrite the arguments of the launch its `container` gives; anywhere else
/// they would rewrite nothing, so a platform that puts them there is refused (exit 2).
#[test]
fn mounts_without_a_container_are_a_platform_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kvlint.toml");
    std::fs::write(
        &config,
        r#"
[[platform]]
name = "acme-llm"
title = "Acme LLMServer"
engine = "vllm"
recognize = { kinds = ["LLMServer"] }
docs = { what = "Acme's CRD.", settings = "`spec.engine`.", source = "https://wiki.acme.example/llmserver" }

[[platform.launch]]
at = "spec"
options = "engine"
mounts = { "/models" = [{ path = "uri" }] }
"#,
    )
    .unwrap();
    let manifest = dir.path().join("server.yaml");
    std::fs::write(&manifest, "apiVersion: v1\nkind: LLMServer\nspec: {}\n").unwrap();
    let run = kvlint(&[
        "check",
        "--config",
        config.to_str().unwrap(),
        manifest.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("`mounts`"), "{}", run.stderr);
}

/// Files no platform describes: a mapping whose keys are mostly one engine's options is read as
/// its settings, a list of words that starts with an engine command (or a shell's `-c` script
/// that runs one) as its argv, a mapping's container-like `command` and `args` that together do
/// as one argv, and engine options that give no launch are INP006 (fixtures/extract/by-shape,
/// each with its `# expect:` or `# rules:` lines, a JSON fixture's in `<fixture>.expect`); a
/// file without any says "no engine launch found".
#[test]
fn files_no_platform_describes_are_read_by_their_shape() {
    let dir = root().join("fixtures/extract/by-shape");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|e| e != "expect"))
        .collect();
    files.sort();
    assert!(files.len() >= 4);
    for f in files {
        let doc = check(&f);
        let launches: Vec<&Value> = doc["launches"].as_array().unwrap().iter().collect();
        let want = expected(&f);
        let got: Vec<String> = launches
            .iter()
            .zip(&want)
            .map(|(l, (keys, _))| seen(l, &keys.iter().map(String::as_str).collect::<Vec<_>>()))
            .collect();
        let want: Vec<String> = want.into_iter().map(|(_, line)| line).collect();
        assert_eq!(got, want, "{}", f.display());
        assert_eq!(launches.len(), want.len(), "{}: {launches:#?}", f.display());
        let kinds: Vec<&str> = launches
            .iter()
            .filter_map(|l| l["object"]["kind"].as_str())
            .collect();
        assert!(
            kinds.iter().all(|k| k.contains("recognized by")),
            "{}: {kinds:?}",
            f.display()
        );
        let rules = common::rules(&doc);
        for id in named_rules(&f) {
            assert!(rules.contains(&id.as_str()), "{}: {rules:?}", f.display());
        }
        if want.is_empty() && named_rules(&f).is_empty() {
            assert!(rules.is_empty(), "{}: {rules:?}", f.display());
        }
    }
}

/// A platform's file given on standard input, with no name to tell its kind, is still read as
/// the platform's (not as a shell script).
#[test]
fn a_platform_file_on_stdin_is_read() {
    let text =
        std::fs::read_to_string(root().join("fixtures/platforms/ray-serve-config/fire-pd.yaml"))
            .unwrap();
    let run = common::kvlint_stdin(&["check", "--format", "json", "-"], Some(&text));
    let doc: Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.stderr));
    assert_eq!(
        of_platform(&doc, "Ray Serve LLM config").len(),
        2,
        "{doc:#}"
    );
}
