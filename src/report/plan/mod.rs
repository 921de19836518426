//! `kvlint plan`'s outputs, one printer per format (`human`, `markdown`, `json`); this file holds
//! what the table printers share: the heading, the cells, and the conclusions said out loud.

pub mod human;
pub mod json;
pub mod markdown;

use crate::capacity::Role;
use crate::plan::explore::Explored;
use crate::plan::{Report, Row, Verdict, NODE_GPUS, SEARCH_GPUS};
use crate::rules::thousands;
use std::fmt::Write;

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

/// The layouts worth a launch line: those that fit or are tight, with their numbers.
fn launchable(r: &Report) -> Vec<(usize, &Row)> {
    numbered(r)
        .filter(|(_, row)| row.verdict != Verdict::DoesNotFit)
        .collect()
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
