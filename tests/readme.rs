//! The README is a short front page (issue 27): at most 300 lines, and every command in it works
//! as written. Its quick start is checked by running it, its example output against kvlint's
//! own, its command table against the subcommands, and its paths and links against the tree.

mod common;

use common::kvlint;

fn readme() -> String {
    std::fs::read_to_string(common::root().join("README.md")).expect("README.md")
}

/// The fenced code blocks of a Markdown text after `heading`, as (info string, body).
fn blocks_after(text: &str, heading: &str) -> Vec<(String, String)> {
    let (_, rest) = text
        .split_once(heading)
        .unwrap_or_else(|| panic!("README has no {heading:?}"));
    let mut out = Vec::new();
    let mut lines = rest.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let indent = line.len() - line.trim_start().len();
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| l.trim_start() != "```")
            .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
            .collect();
        out.push((info.to_string(), body.join("\n") + "\n"));
    }
    out
}

#[test]
fn readme_is_at_most_300_lines() {
    let n = readme().lines().count();
    assert!(n <= 300, "README.md has {n} lines");
}

#[test]
fn quick_start_is_the_two_commands() {
    let blocks = blocks_after(&readme(), "## Quick start");
    let commands: Vec<&str> = blocks[0]
        .1
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(
        commands,
        [
            "cargo run --release -- check --gpu h200x8 --engine-version 0.5.20 fixtures/incident/prefill.sh",
            "cargo test",
        ]
    );
}

/// The example output is what the first command prints, byte for byte, with its exit code 1.
#[test]
fn example_output_is_what_the_first_command_prints() {
    let blocks = blocks_after(&readme(), "## Quick start");
    let (info, shown) = &blocks[1];
    assert_eq!(info, "text");
    let (prompt, output) = shown.split_once('\n').expect("a prompt line");
    let args: Vec<&str> = prompt
        .strip_prefix("$ kvlint ")
        .expect("$ kvlint ...")
        .split_whitespace()
        .collect();
    assert_eq!(
        args,
        "check --gpu h200x8 --engine-version 0.5.20 fixtures/incident/prefill.sh"
            .split(' ')
            .collect::<Vec<_>>()
    );
    let run = kvlint(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(output, run.stdout);
}

/// Each row of the command table names a subcommand, and every visible subcommand has a row.
#[test]
fn command_table_lists_every_command() {
    let text = readme();
    let (_, table) = text.split_once("## Commands").expect("## Commands");
    let listed: Vec<String> = table
        .lines()
        .take_while(|l| !l.starts_with("## "))
        .filter_map(|l| l.strip_prefix("| [`kvlint "))
        .map(|l| l.split([' ', '`']).next().unwrap_or_default().to_string())
        .collect();
    let commands: Vec<String> = kvlint::cli::command()
        .get_subcommands()
        .filter(|c| !c.is_hide_set())
        .map(|c| c.get_name().to_string())
        .collect();
    assert_eq!(listed, commands);
}

/// Relative links point at files of the tree, and the repository paths the install commands
/// name exist.
#[test]
fn links_and_paths_exist() {
    let text = readme();
    let root = common::root();
    let link = regex_lite::Regex::new(r"\]\(([^)#\s]+)(#[^)]*)?\)").unwrap();
    let mut checked = 0;
    for c in link.captures_iter(&text) {
        let target = &c[1];
        if target.contains("://") {
            continue;
        }
        assert!(root.join(target).exists(), "README links to {target}");
        checked += 1;
    }
    let path = regex_lite::Regex::new(r"\b((?:deploy|fixtures|docs|scripts)/[\w./-]*\w)").unwrap();
    for c in path.captures_iter(&text) {
        // Part of a URL's path (`https://apptainer.org/docs/...`), not a repository path.
        let in_url = c.get(1).is_some_and(|m| text[..m.start()].ends_with('/'));
        // docs/book/ is what `mdbook build docs` writes.
        if !in_url && !c[1].starts_with("docs/book") {
            assert!(root.join(&c[1]).exists(), "README names {}", &c[1]);
            checked += 1;
        }
    }
    assert!(checked > 20, "only {checked} links and paths");
}
