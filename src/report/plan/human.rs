//! `kvlint plan`'s table for a terminal, with the launch lines of the layouts that hold the context.

use super::{cells, conclusions, explore_text, heading, launchable};
use crate::extract::quote_argv;
use crate::plan::explore::Explored;
use crate::plan::Report;
use std::fmt::Write;

/// The table, plus the lines that say what fits and how to launch it.
pub fn render(r: &Report) -> String {
    let mut s = heading(r);
    s.push('\n');
    if r.rows.is_empty() {
        s.push_str("no layout to list\n\n");
    }
    let rows = if r.rows.is_empty() {
        Vec::new()
    } else {
        cells(r)
    };
    let columns = rows.first().map_or(0, Vec::len);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .map(|row| row[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (cell, w))| match c {
                // Numbers right-aligned, words left.
                0 | 3 | 4 | 8 | 10 => format!("{cell:>w$}"),
                _ => format!("{cell:<w$}"),
            })
            .collect();
        let _ = writeln!(s, "  {}", line.join("  ").trim_end());
    }
    if !rows.is_empty() {
        s.push('\n');
    }
    for line in conclusions(r) {
        let _ = writeln!(s, "{line}");
    }
    let launchable = launchable(r);
    if !launchable.is_empty() {
        s.push_str("\nlaunch lines (check one with `kvlint capacity --gpu GPUxN --engine-version V -- LINE`):\n");
        for (n, row) in launchable {
            let _ = writeln!(s, "  #{n:<3} {}", quote_argv(&row.argv));
        }
    }
    s
}

/// `plan --launch`: per launch, what its layout holds, what would make it fit, and the layouts
/// that do.
pub fn explore(found: &[Explored]) -> String {
    explore_text(found, render, "  ")
}
