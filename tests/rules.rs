//! Every rule has fixtures that must fire it and fixtures that must not, found by this one
//! harness (`fixtures/<ID>/fire-*`, `fixtures/<ID>/pass-*`). Each fixture's whole human report
//! is snapshot-tested.

mod common;

use common::{directive, kvlint, root};
use std::path::{Path, PathBuf};

fn fixtures(id: &str, kind: &str) -> Vec<PathBuf> {
    let dir = root().join("fixtures").join(id);
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

fn fired(path: &Path) -> (Vec<String>, String) {
    let rel = path
        .strip_prefix(root())
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let mut args: Vec<String> = vec!["check".into(), "--format".into(), "json".into()];
    args.extend(directive(path));
    args.push(rel.clone());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = kvlint(&refs);
    assert!(
        run.code == 0 || run.code == 1,
        "{rel}: exit {}\n{}",
        run.code,
        run.stderr
    );
    let doc: serde_json::Value =
        serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let ids = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect();
    let mut human_args: Vec<String> = vec!["check".into()];
    human_args.extend(directive(path));
    human_args.push(rel);
    let refs: Vec<&str> = human_args.iter().map(String::as_str).collect();
    (ids, kvlint(&refs).transcript(&refs))
}

#[test]
fn every_rule_fires_on_its_fire_fixtures_and_not_on_its_pass_fixtures() {
    // `check = "canary"` rules judge a running server's answers, which no file can stand for:
    // tests/canary.rs fires and passes them against loopback servers.
    for rule in kvlint::rules::all().iter().filter(|r| r.check != "canary") {
        let fire = fixtures(&rule.id, "fire-");
        let pass = fixtures(&rule.id, "pass-");
        assert!(
            !fire.is_empty(),
            "{} has no fire-* fixture in fixtures/{}/",
            rule.id,
            rule.id
        );
        assert!(
            !pass.is_empty(),
            "{} has no pass-* fixture in fixtures/{}/",
            rule.id,
            rule.id
        );
        for (files, expect) in [(fire, true), (pass, false)] {
            for f in files {
                let (ids, transcript) = fired(&f);
                assert_eq!(
                    ids.contains(&rule.id),
                    expect,
                    "{} on {}: findings {ids:?}",
                    rule.id,
                    f.display()
                );
                let name = format!("{}__{}", rule.id, f.file_stem().unwrap().to_string_lossy());
                insta::assert_snapshot!(name, transcript);
            }
        }
    }
}
