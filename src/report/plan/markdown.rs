//! `kvlint plan --format markdown`: the same table in GitHub-flavoured Markdown.

use super::{cells, conclusions, explore_text, heading, launchable};
use crate::extract::quote_argv;
use crate::plan::explore::Explored;
use crate::plan::Report;
use std::fmt::Write;

/// The same table in GitHub-flavoured Markdown, for a PR comment or a job summary.
pub fn render(r: &Report) -> String {
    let mut s = format!("### {}\n\n", heading(r).trim_end());
    let rows = if r.rows.is_empty() {
        s.push_str("No layout to list.\n");
        Vec::new()
    } else {
        cells(r)
    };
    for (i, row) in rows.iter().enumerate() {
        let _ = writeln!(s, "| {} |", row.join(" | "));
        if i == 0 {
            let _ = writeln!(s, "|{}", "---|".repeat(row.len()));
        }
    }
    s.push('\n');
    for line in conclusions(r) {
        let _ = writeln!(s, "{line}  ");
    }
    let launchable = launchable(r);
    if !launchable.is_empty() {
        s.push_str("\n<details><summary>launch lines</summary>\n\n```sh\n");
        for (n, row) in launchable {
            let _ = writeln!(s, "# {n}\n{}", quote_argv(&row.argv));
        }
        s.push_str("```\n\n</details>\n");
    }
    s
}

pub fn explore(found: &[Explored]) -> String {
    explore_text(found, render, "")
}
