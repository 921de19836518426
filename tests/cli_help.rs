//! `kvlint --help` and every `kvlint <command> --help` end with examples (issue 27), as ruff's and
//! kube-linter's do; the examples that need no network, GPU or cluster run as written.

mod common;

use common::kvlint;

/// The visible subcommands, as clap describes them.
fn subcommands() -> Vec<String> {
    kvlint::cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect()
}

/// The example lines that end a help text.
fn examples(help: &str) -> Vec<String> {
    let (_, tail) = help
        .rsplit_once("Examples:\n")
        .unwrap_or_else(|| panic!("no Examples section at the end of:\n{help}"));
    tail.lines().map(|l| l.trim().to_string()).collect()
}

#[test]
fn top_level_help() {
    let run = kvlint(&["--help"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn check_help() {
    let run = kvlint(&["check", "--help"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn every_command_help_ends_with_two_or_three_examples() {
    let mut all = String::new();
    let names = subcommands();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let run = kvlint(&[&name, "--help"]);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let lines = examples(&run.stdout);
        assert!(
            (2..=3).contains(&lines.len()),
            "kvlint {name} --help ends with {} examples: {lines:?}",
            lines.len()
        );
        for l in &lines {
            assert!(l.contains(&format!("kvlint {name}")), "{name}: {l}");
        }
        all.push_str(&format!("kvlint {name} --help\n{}\n\n", lines.join("\n")));
    }
    insta::assert_snapshot!(all);
}

/// Examples of the commands that read only files run as written: no usage error, no crash.
#[test]
fn offline_examples_run_as_written() {
    let mut ran = 0;
    let mut helps = vec![kvlint(&["--help"]).stdout];
    helps.extend(subcommands().iter().map(|n| kvlint(&[n, "--help"]).stdout));
    for help in helps {
        for line in examples(&help) {
            let words: Vec<&str> = line.split_whitespace().collect();
            let offline = ["check", "capacity", "explain", "rules", "models", "verify"];
            if words.first() != Some(&"kvlint")
                || !offline.contains(&words[1])
                || words
                    .iter()
                    .any(|w| ["|", ">", "--url", "--output"].contains(w))
            {
                continue;
            }
            let run = kvlint(&words[1..]);
            assert!(
                matches!(run.code, 0 | 1),
                "`{line}` gave exit {}:\n{}{}",
                run.code,
                run.stdout,
                run.stderr
            );
            ran += 1;
        }
    }
    assert!(ran >= 10, "only {ran} examples ran");
}
