//! A launch whose engine release is unknown is parsed with the newest release's options. The
//! options it gives then say which releases it can run: one that only some releases accept
//! narrows them, and is a warning (VER003) that names those releases rather than an unknown or
//! removed option (CFG001/CFG002), since one of them may be what runs.

use super::argparse::{in_range, FlagDef, Table};
use super::{known_versions, sglang, vllm, Parsed};
use crate::finding::Finding;
use crate::launch::Engine;
use crate::version::Version;

fn table(engine: Engine) -> Option<&'static Table> {
    match engine {
        Engine::Sglang => Some(sglang::table()),
        Engine::Vllm => Some(vllm::table()),
        Engine::Trtllm => None,
    }
}

/// Fills `could_run` with the modelled releases whose options accept everything the launch gives
/// (all of them when none does, or when the engine has no option tables), sets `version` to the
/// newest of them, and turns CFG001/CFG002 on an option some inspected release accepts into VER003.
/// Options are matched exactly: an abbreviation of an option only older releases had stays an
/// error.
pub fn unknown(engine: Engine, parsed: &mut Parsed) {
    let modelled = known_versions(engine);
    let Some(table) = table(engine) else {
        parsed.args.could_run = modelled.to_vec();
        return;
    };
    let inspected = table.inspected();
    // Per constraint, which inspected releases satisfy it. A setting is accepted by a release
    // that has its dest, or one of the option strings the newest release gives that dest (SGLang
    // 0.5.20 moved `--cuda-graph-bs` to `cuda_graph_bs_decode`). That is wider than the option as
    // written, and a wider set of releases only widens the band.
    let mut constraints: Vec<Vec<bool>> = Vec::new();
    let newest = inspected.last();
    for dest in parsed.args.settings.keys() {
        let names: Vec<&str> = table
            .flag
            .iter()
            .filter(|f| f.dest == *dest && newest.is_some_and(|v| in_range(f, v)))
            .flat_map(|f| f.opts.iter().chain(&f.neg).map(String::as_str))
            .collect();
        let defs: Vec<&FlagDef> = table
            .flag
            .iter()
            .filter(|f| {
                f.dest == *dest
                    || f.opts
                        .iter()
                        .chain(&f.neg)
                        .any(|o| names.contains(&o.as_str()))
            })
            .collect();
        if !defs.is_empty() {
            constraints.push(accepting(&defs, &inspected));
        }
    }
    for f in &mut parsed.findings {
        if !matches!(f.rule, "CFG001" | "CFG002") {
            continue;
        }
        let Some(flag) = f.get("flag").map(str::to_string) else {
            continue;
        };
        let defs: Vec<&FlagDef> = table
            .flag
            .iter()
            .filter(|d| d.opts.iter().chain(&d.neg).any(|o| *o == flag))
            .collect();
        if defs.is_empty() {
            continue; // no release has it: the error stands
        }
        let accepts = accepting(&defs, &inspected);
        *f = ver003(f, engine, &flag, table, &accepts, &modelled[0]);
        constraints.push(accepts);
    }
    // Each modelled release's inspected table.
    let tables: Vec<Option<usize>> = modelled
        .iter()
        .map(|r| {
            let t = table.table_version(r)?;
            inspected.iter().position(|v| *v == t)
        })
        .collect();
    let meets = |c: &Vec<bool>, i: usize| tables[i].is_some_and(|t| c[t]);
    // An option only releases older than the modelled ones accept (vLLM 0.10) says nothing
    // about which modelled release runs: VER003 says it, the band ignores it.
    constraints.retain(|c| (0..modelled.len()).any(|i| meets(c, i)));
    let could: Vec<Version> = (0..modelled.len())
        .filter(|&i| constraints.iter().all(|c| meets(c, i)))
        .map(|i| modelled[i].clone())
        .collect();
    parsed.args.could_run = if could.is_empty() {
        modelled.to_vec()
    } else {
        could
    };
    if let Some(newest) = parsed.args.could_run.last() {
        parsed.args.version = newest.clone();
    }
}

/// For each inspected release, whether one of `defs` is in its table.
fn accepting(defs: &[&FlagDef], inspected: &[Version]) -> Vec<bool> {
    inspected
        .iter()
        .map(|v| defs.iter().any(|d| in_range(d, v)))
        .collect()
}

/// VER003 in place of `f`: which inspected releases accept `flag`, and which first dropped it.
fn ver003(
    f: &Finding,
    engine: Engine,
    flag: &str,
    table: &Table,
    accepts: &[bool],
    oldest_modelled: &Version,
) -> Finding {
    let names = &table.versions;
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < accepts.len() {
        if !accepts[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i + 1 < accepts.len() && accepts[i + 1] {
            i += 1;
        }
        runs.push(match start == i {
            true => names[start].clone(),
            false => format!("{} to {}", names[start], names[i]),
        });
        i += 1;
    }
    let last = accepts.iter().rposition(|a| *a).unwrap_or(0);
    let removed = names
        .get(last + 1)
        .map_or(String::new(), |r| format!(" and was removed in {r}"));
    let older = names
        .get(last)
        .and_then(|v| Version::parse(v))
        .filter(|v| v < oldest_modelled)
        .map_or(String::new(), |_| {
            format!(" (older than {oldest_modelled}, the oldest release whose pool kvlint models)")
        });
    let mut out = Finding::new("VER003", f.primary)
        .var("flag", flag)
        .var("engine", engine.name())
        .var("accepted", runs.join(", "))
        .var("removed", removed)
        .var("older", older)
        .label("only some releases accept this");
    out.labels = f.labels.clone();
    out
}
