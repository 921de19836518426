//! `kvlint plan`'s outputs: the ranked table (human and Markdown) and JSON (`schema_version` 1).

use crate::capacity::Role;
use crate::extract::quote_argv;
use crate::plan::explore::Explored;
use crate::plan::{Report, Row, Verdict, NODE_GPUS, SEARCH_GPUS};
use crate::rules::thousands;
use serde_json::{json, Value};
use std::fmt::Write;

/// The table, plus the lines that say what fits and how to launch it.
pub fn human(r: &Report) -> String {
    let mut s = heading(r);
    s.push('\n');
    let rows = cells(r);
    let widths: Vec<usize> = (0..rows[0].len())
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
    s.push('\n');
    for line in conclusions(r) {
        let _ = writeln!(s, "{line}");
    }
    let launchable: Vec<(usize, &Row)> = numbered(r)
        .filter(|(_, row)| row.verdict != Verdict::DoesNotFit)
        .collect();
    if !launchable.is_empty() {
        s.push_str("\nlaunch lines (check one with `kvlint capacity --gpu GPUxN --engine-version V -- LINE`):\n");
        for (n, row) in launchable {
            let _ = writeln!(s, "  #{n:<3} {}", quote_argv(&row.argv));
        }
    }
    s
}

/// The same table in GitHub-flavoured Markdown, for a PR comment or a job summary.
pub fn markdown(r: &Report) -> String {
    let mut s = format!("### {}\n\n", heading(r).trim_end());
    let rows = cells(r);
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
    let launchable: Vec<(usize, &Row)> = numbered(r)
        .filter(|(_, row)| row.verdict != Verdict::DoesNotFit)
        .collect();
    if !launchable.is_empty() {
        s.push_str("\n<details><summary>launch lines</summary>\n\n```sh\n");
        for (n, row) in launchable {
            let _ = writeln!(s, "# {n}\n{}", quote_argv(&row.argv));
        }
        s.push_str("```\n\n</details>\n");
    }
    s
}

/// `schema_version` 1: the request, the ranked layouts, and the smallest fit beyond `--max-gpus`.
pub fn json(r: &Report) -> Value {
    json!({
        "schema_version": 1,
        "model": r.model,
        "gpu": r.gpus.join(","),
        "context": r.context,
        "role": r.role.name(),
        "max_gpus": r.max_gpus,
        "layouts": r.rows.iter().map(layout_json).collect::<Vec<_>>(),
        "smallest_fit_beyond_max_gpus": r.beyond.iter().map(|(gpu, n)| json!({"gpu": gpu, "gpus": n})).collect::<Vec<_>>(),
    })
}

/// One layout: the contract's fields, then what else `check` said of it.
pub fn layout_json(row: &Row) -> Value {
    let (l, p) = (&row.layout, &row.plan);
    json!({
        "engine": l.engine.name(),
        "engine_version": p.engine_version,
        "role": p.role.name(),
        "gpu": p.gpu,
        "gpus": p.gpu_count,
        "tp": p.tp,
        "pp": p.pp,
        "dp": l.dp(),
        "ep": 1,
        "dp_attention": l.dp_attention,
        "kv_cache_dtype": p.kv_cache_dtype,
        "memory_fraction": p.memory_fraction,
        "page_size": p.page_size,
        "pool_tokens": p.pool_tokens,
        "pool_tokens_low": p.pool_tokens_low,
        "pool_tokens_high": p.pool_tokens_high,
        "context": p.context_length,
        "max_context": row.max_context(),
        "verdict": row.verdict,
        "margin": round3(row.margin()),
        "headroom": row.headroom().map(round3),
        "findings": row.rules,
        "argv": row.argv,
    })
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn heading(r: &Report) -> String {
    let context = match r.context {
        Some(c) => format!("context {}", thousands(c)),
        None => "context: each layout's model limit".into(),
    };
    format!(
        "{} on {} · {} · {} · up to {} GPUs · {} layout{}\n",
        r.model,
        r.gpus.join(", "),
        r.role.name(),
        context,
        r.max_gpus,
        r.rows.len(),
        if r.rows.len() == 1 { "" } else { "s" }
    )
}

fn numbered(r: &Report) -> impl Iterator<Item = (usize, &Row)> {
    r.rows.iter().enumerate().map(|(i, row)| (i + 1, row))
}

/// Header and one row of cells per layout.
fn cells(r: &Report) -> Vec<Vec<String>> {
    let prefill = r.role == Role::Prefill;
    let mut head: Vec<String> = [
        "#",
        "GPUs",
        "engine",
        "TP",
        "PP",
        "DP",
        "KV dtype",
        "fraction",
        "page",
        "pool (band)",
        "max context",
        "verdict",
    ]
    .map(String::from)
    .to_vec();
    if prefill {
        head.push("headroom".into());
    }
    let mut out = vec![head];
    for (n, row) in numbered(r) {
        let (l, p) = (&row.layout, &row.plan);
        let mut cells = vec![
            n.to_string(),
            format!("{}×{}", p.gpu_count, p.gpu),
            format!("{} {}", l.engine.name(), p.engine_version),
            p.tp.to_string(),
            p.pp.to_string(),
            match l.dp_attention {
                true => format!("{} attn", l.dp()),
                false => "1".into(),
            },
            p.kv_cache_dtype.clone(),
            format!("{:.3}", p.memory_fraction),
            p.page_size.to_string(),
            format!(
                "{} ({}–{})",
                thousands(p.pool_tokens),
                thousands(p.pool_tokens_low),
                thousands(p.pool_tokens_high)
            ),
            thousands(row.max_context()),
            row.verdict.word().into(),
        ];
        if prefill {
            cells.push(match row.rules.contains(&"KV003") {
                true => format!("{:.2}× (KV003)", row.margin()),
                false => format!("{:.2}×", row.margin()),
            });
        }
        out.push(cells);
    }
    out
}

/// What the table shows, said out loud: the smallest layout that holds the context per GPU
/// type, that one node does not, or that nothing up to `--max-gpus` (or far beyond) does.
fn conclusions(r: &Report) -> Vec<String> {
    let target = match r.context {
        Some(c) => format!("{} tokens", thousands(c)),
        None => "the model's context".into(),
    };
    let mut out = Vec::new();
    if r.no_room > 0 {
        out.push(format!(
            "{} layout{} not listed: the weights leave no memory for a KV cache (MEM001)",
            r.no_room,
            if r.no_room == 1 { "" } else { "s" }
        ));
    }
    if let Some(row) = r.rows.iter().find(|row| row.rules.contains(&"KV005")) {
        out.push(format!(
            "{target} is beyond {}'s own limit of {} tokens (KV005): no layout serves more",
            r.model,
            thousands(row.plan.model_max_context)
        ));
    }
    for gpu in &r.gpus {
        let first_fit =
            numbered(r).find(|(_, row)| &row.plan.gpu == gpu && row.verdict == Verdict::Fits);
        match first_fit {
            Some((n, row)) => {
                let count = row.plan.gpu_count;
                if count > NODE_GPUS {
                    out.push(format!(
                        "no layout of one {NODE_GPUS}×{gpu} node holds {target}"
                    ));
                }
                out.push(format!(
                    "smallest layout on {gpu} that holds {target}: #{n}, {count}×{gpu} ({} TP {} PP {}{})",
                    row.layout.engine.name(),
                    row.plan.tp,
                    row.plan.pp,
                    match row.layout.dp_attention {
                        true => ", DP attention",
                        false => "",
                    }
                ));
            }
            None => {
                let beyond = r
                    .beyond
                    .iter()
                    .find(|(g, _)| g == gpu)
                    .and_then(|(_, n)| *n);
                out.push(match beyond {
                    Some(n) => format!(
                        "no layout of up to {} {gpu} GPUs holds {target}; the smallest GPU count that does is {n} (rerun with --max-gpus {n})",
                        r.max_gpus
                    ),
                    None => format!(
                        "no layout of up to {} {gpu} GPUs holds {target}, nor any of up to {SEARCH_GPUS}",
                        r.max_gpus
                    ),
                });
            }
        }
    }
    out
}

/// `plan --launch`: per launch, what its layout holds, what would make it fit, and the layouts
/// that do.
pub fn explore_human(found: &[Explored]) -> String {
    explore_text(found, human, "  ")
}

pub fn explore_markdown(found: &[Explored]) -> String {
    explore_text(found, markdown, "")
}

fn explore_text(found: &[Explored], table: fn(&Report) -> String, indent: &str) -> String {
    let mut s = String::new();
    if found.is_empty() {
        s.push_str("no launch found in the input\n");
    }
    for e in found {
        let _ = writeln!(s, "{}:{}  {}", e.file, e.line, launch_title(e));
        if let Some(problem) = &e.problem {
            let _ = writeln!(s, "{indent}no plan: {problem}");
        }
        if let (Some(p), Some(max), Some(v)) = (&e.plan, e.max_context(), e.verdict()) {
            let _ = writeln!(
                s,
                "{indent}holds up to {} tokens of the advertised {}: {}",
                thousands(max),
                thousands(p.context_length),
                v.word()
            );
        }
        if let Some(change) = &e.change {
            let _ = writeln!(s, "{indent}to fit: {change}");
        }
        if let Some(r) = &e.layouts {
            s.push('\n');
            for line in table(r).lines() {
                let _ = writeln!(s, "{indent}{line}");
            }
        }
        s.push('\n');
    }
    s
}

fn launch_title(e: &Explored) -> String {
    match &e.plan {
        Some(p) => format!(
            "{} {} · {} · {} on {}×{} (TP {}, PP {}, DP {})",
            p.engine.name(),
            p.engine_version,
            p.role.name(),
            p.model,
            p.gpu_count,
            p.gpu,
            p.tp,
            p.pp,
            p.dp
        ),
        None => "launch".into(),
    }
}

/// `plan --launch --format json`: `schema_version` 1, one object per launch.
pub fn explore_json(found: &[Explored]) -> Value {
    let launches: Vec<Value> = found
        .iter()
        .map(|e| {
            json!({
                "file": e.file,
                "line": e.line,
                "engine": e.plan.as_ref().map(|p| p.engine.name()),
                "engine_version": e.plan.as_ref().map(|p| &p.engine_version),
                "role": e.plan.as_ref().map(|p| p.role.name()),
                "model": e.plan.as_ref().map(|p| &p.model),
                "gpu": e.plan.as_ref().map(|p| &p.gpu),
                "gpus": e.plan.as_ref().map(|p| p.gpu_count),
                "context": e.plan.as_ref().map(|p| p.context_length),
                "max_context": e.max_context(),
                "verdict": e.verdict(),
                "change": e.change,
                "problem": e.problem,
                "plan": e.layouts.as_ref().map(json),
            })
        })
        .collect();
    json!({"schema_version": 1, "launches": launches})
}
