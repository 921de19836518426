//! File names are input too (issue 29, class 19): a newline in one must not forge a row of the
//! Markdown summary or a line of the terminal report, and ESC or BEL must reach no format raw.

mod common;

use common::kvlint;
use std::path::Path;

/// A name that, written raw, closes the row of its refused launch and adds a passing one, then
/// clears the screen and rings the bell.
const EVIL: &str = "evil.yaml:1` | sglang | m | H200 | 8 | 1 of 1 | 1.00× | ❌ refused |\n| `forged.yaml:1` | sglang | m | H200 | 8 | 9 of 1 | 9.00× | ✅ passes |\n\u{1b}[2J\u{7}x.yaml";

fn write_incident(dir: &Path) -> String {
    let text =
        std::fs::read_to_string(common::root().join("fixtures/webhook/deployment-incident.yaml"))
            .expect("fixture");
    let path = dir.join(EVIL);
    std::fs::write(&path, text).expect("a file name with a newline");
    path.to_str().expect("UTF-8 path").to_string()
}

fn no_raw_controls(format: &str, text: &str) {
    assert!(
        !text.contains(['\u{1b}', '\u{7}']),
        "{format}: ESC or BEL reached the output:\n{text:?}"
    );
}

#[test]
fn a_newline_in_a_file_name_forges_no_summary_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write_incident(dir.path());
    let md = dir.path().join("summary.md");
    let run = kvlint(&["check", "--summary", md.to_str().unwrap(), &file]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let summary = std::fs::read_to_string(&md).expect("summary");
    no_raw_controls("summary", &summary);
    let rows: Vec<&str> = summary
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .collect();
    // Every row begins with a cell of its own: the forged one would begin with `forged`.
    assert!(
        !rows.iter().any(|l| l.starts_with("| `forged")),
        "a forged passing row:\n{summary}"
    );
    let launches = summary.split("### Findings").next().unwrap_or("");
    let launch_rows: Vec<&str> = launches
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---") && !l.starts_with("| launch"))
        .collect();
    assert_eq!(launch_rows.len(), 1, "{summary}");
    // Each launch row has exactly the table's 8 cells: unescaped pipes would add more.
    let cells = launch_rows[0].replace("\\|", "").matches('|').count() - 1;
    assert_eq!(cells, 8, "{}", launch_rows[0]);
}

#[test]
fn control_characters_in_a_file_name_are_escaped_in_every_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write_incident(dir.path());
    for format in ["human", "github", "sarif", "json"] {
        let run = kvlint(&["check", "--format", format, &file]);
        assert_eq!(run.code, 1, "{format}: {}", run.stderr);
        no_raw_controls(format, &run.stdout);
        no_raw_controls(format, &run.stderr);
        match format {
            // One line per launch: the name's newline starts no line of its own.
            "human" => assert!(
                !run.stdout.lines().any(|l| l.starts_with("| `forged")),
                "{}",
                run.stdout
            ),
            // Workflow commands: one command per line, the newline escaped in `file=`.
            "github" => {
                for line in run.stdout.lines() {
                    assert!(
                        line.starts_with("::"),
                        "a line that is no command: {line:?}"
                    );
                }
                assert!(run.stdout.contains("file="), "{}", run.stdout);
                assert!(run.stdout.contains("%0A| `forged"), "{}", run.stdout);
            }
            "sarif" => {
                let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("sarif");
                let uri = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
                    ["artifactLocation"]["uri"]
                    .as_str()
                    .expect("uri");
                assert!(uri.contains("%0A%7C%20%60forged"), "{uri}");
                assert!(uri.contains("%1B%5B2J%07x.yaml"), "{uri}");
            }
            // JSON escapes control characters by construction: the name comes back whole.
            _ => {
                let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
                assert_eq!(doc["findings"][0]["file"], file.as_str());
            }
        }
    }
}
