//! The conventions users know from ruff, kube-linter and hadolint: completions and a man page,
//! `--color`, output width, `--select`/`--ignore`/`--extend-select`, `--quiet`, `--statistics`,
//! whole rule descriptions, did-you-mean.

mod common;
use common::{kvlint, kvlint_env};
use std::process::Command;

const INCIDENT: &str = "fixtures/incident/prefill.sh";
const INCIDENT_ARGS: [&str; 6] = [
    "check",
    "--gpu",
    "h200x8",
    "--engine-version",
    "0.5.20",
    INCIDENT,
];

fn rules_of(run: &common::Run) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    v["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["rule"].as_str().unwrap_or("").to_string())
        .collect()
}

fn incident_json(extra: &[&str]) -> common::Run {
    let mut args = INCIDENT_ARGS.to_vec();
    args.extend(["--format", "json"]);
    args.extend(extra);
    kvlint(&args)
}

#[test]
fn completions_for_every_shell_and_the_man_page_are_generated() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let run = kvlint(&["completions", shell]);
        assert_eq!(run.code, 0, "{shell}: {}", run.stderr);
        // fish writes long options as `-l select`.
        for word in ["check", "capacity", "explain", "select", "engine-version"] {
            assert!(run.stdout.contains(word), "{shell} completions lack {word}");
        }
    }
    // The bash script is valid bash.
    let script = kvlint(&["completions", "bash"]).stdout;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kvlint.bash");
    std::fs::write(&path, script).unwrap();
    let syntax = Command::new("bash").arg("-n").arg(&path).status().unwrap();
    assert!(syntax.success());

    let man = kvlint(&["man"]);
    assert_eq!(man.code, 0);
    assert!(man.stdout.contains(".TH kvlint 1"), "{}", man.stdout);
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH SUBCOMMANDS"] {
        assert!(man.stdout.contains(section), "man page lacks {section}");
    }
    assert!(
        man.stdout.contains("kvlint\\-check(1)"),
        "subcommands listed"
    );
}

#[test]
fn color_follows_the_flag_no_color_and_clicolor_force() {
    let esc = |r: &common::Run| r.stdout.contains('\u{1b}');
    let mut args = INCIDENT_ARGS.to_vec();
    args.push("--color=always");
    assert!(esc(&kvlint(&args)), "--color=always colours a pipe");
    args.pop();
    args.push("--color=never");
    assert!(!esc(&kvlint_env(&args, None, &[("CLICOLOR_FORCE", "1")])));
    args.pop();
    // auto: a pipe is plain, unless CLICOLOR_FORCE asks; NO_COLOR wins over nothing else.
    assert!(!esc(&kvlint_env(&INCIDENT_ARGS, None, &[("NO_COLOR", "")])));
    assert!(esc(&kvlint_env(
        &INCIDENT_ARGS,
        None,
        &[("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")]
    )));
}

#[test]
fn output_width_follows_columns() {
    let longest = |r: &common::Run| {
        r.stdout
            .lines()
            .filter(|l| l.trim_start().starts_with('×') || l.trim_start().starts_with('│'))
            .map(|l| l.chars().count())
            .max()
            .unwrap_or(0)
    };
    let narrow = kvlint_env(&INCIDENT_ARGS, None, &[("COLUMNS", "60")]);
    let wide = kvlint_env(&INCIDENT_ARGS, None, &[("COLUMNS", "160")]);
    let default = kvlint(&INCIDENT_ARGS);
    assert!(longest(&narrow) <= 60, "{}", narrow.stdout);
    assert!(
        longest(&default) > 60 && longest(&default) <= 100,
        "{}",
        default.stdout
    );
    assert!(longest(&wide) > 100, "{}", wide.stdout);
}

#[test]
fn select_ignore_and_extend_select_by_id_name_category_and_prefix() {
    let all = rules_of(&incident_json(&[]));
    assert!(
        all.contains(&"KV001".into()) && all.contains(&"VER001".into()),
        "{all:?}"
    );

    let ignored = rules_of(&incident_json(&["--ignore", "VER001,pool-headroom-low"]));
    assert!(ignored.contains(&"KV001".into()), "{ignored:?}");
    assert!(
        !ignored.iter().any(|r| r == "VER001" || r == "KV003"),
        "{ignored:?}"
    );

    let selected = incident_json(&["--select", "security"]);
    assert_eq!(rules_of(&selected), ["VER001"]);
    assert_eq!(selected.code, 1, "VER001 still fails the run");

    let extended = rules_of(&incident_json(&[
        "--select",
        "VER",
        "--extend-select",
        "KV001",
    ]))
    .tap_sort();
    assert_eq!(
        extended,
        ["KV001", "VER001"].map(String::from).to_vec().tap_sort()
    );

    // Ignoring every deny rule passes the run: the user asked for it by name.
    let none = incident_json(&["--ignore", "ALL"]);
    assert_eq!((none.code, rules_of(&none).len()), (0, 0));

    let typo = kvlint(&[INCIDENT_ARGS.as_slice(), &["--select", "pool-belo-context"]].concat());
    assert_eq!(typo.code, 2);
    assert!(
        typo.stderr.contains("did you mean `pool-below-context`?"),
        "{}",
        typo.stderr
    );
}

trait TapSort {
    fn tap_sort(self) -> Self;
}

impl TapSort for Vec<String> {
    fn tap_sort(mut self) -> Self {
        self.sort();
        self
    }
}

#[test]
fn selection_in_kvlint_toml() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("kvlint.toml");
    std::fs::write(&cfg, "ignore = [\"security\"]\n").unwrap();
    let run = incident_json(&["--config", cfg.to_str().unwrap()]);
    let rules = rules_of(&run);
    assert!(
        rules.contains(&"KV001".into()) && !rules.contains(&"VER001".into()),
        "{rules:?}"
    );
    // --select on the command line replaces the file's selection, --ignore adds to it.
    let run = incident_json(&[
        "--config",
        cfg.to_str().unwrap(),
        "--select",
        "KV001,VER001",
    ]);
    assert_eq!(rules_of(&run), ["KV001"]);
}

#[test]
fn quiet_prints_findings_only_and_statistics_counts_them() {
    let quiet = kvlint(&[INCIDENT_ARGS.as_slice(), &["--quiet"]].concat());
    assert_eq!(quiet.code, 1);
    assert!(quiet.stdout.contains("KV001 pool-below-context"));
    assert!(!quiet.stdout.contains("error,") && !quiet.stdout.contains("errors,"));
    assert!(!quiet.stdout.contains(": refused"), "{}", quiet.stdout);

    let stats = kvlint(&[INCIDENT_ARGS.as_slice(), &["--statistics"]].concat());
    assert_eq!(stats.code, 1);
    let json_rules = rules_of(&incident_json(&[]));
    let lines: Vec<&str> = stats.stdout.lines().collect();
    assert_eq!(lines.len(), {
        let mut r = json_rules.clone();
        r.sort();
        r.dedup();
        r.len()
    });
    for line in lines {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let n: usize = cols[0].parse().expect("count first");
        assert_eq!(
            n,
            json_rules.iter().filter(|r| *r == cols[1]).count(),
            "{line}"
        );
    }
}

#[test]
fn rules_print_whole_descriptions_and_explain_suggests() {
    let run = kvlint(&["rules"]);
    let flat = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    for r in kvlint::rules::all() {
        let whole = kvlint::rules::description(r);
        assert!(flat.contains(&whole), "{}: {whole}", r.id);
    }
    let typo = kvlint(&["explain", "KV01"]);
    assert_eq!(typo.code, 2);
    assert!(typo.stderr.contains("did you mean"), "{}", typo.stderr);
    let name_typo = kvlint(&["explain", "pool-below-contxt"]);
    assert!(
        name_typo
            .stderr
            .contains("did you mean `pool-below-context`?"),
        "{}",
        name_typo.stderr
    );
}
