//! A launch whose engine release is unknown: its plan's band covers every release it could run
//! (`EngineArgs::could_run`), its point stays the newest of them. Each engine's math changes only
//! at a few releases (`MATH_CHANGES` of its capacity file), so one release per stretch between
//! them is planned, not every patch release.

use super::{sglang, vllm, Inputs, Plan};
use crate::finding::Finding;
use crate::launch::Engine;
use crate::version::Version;

/// Releases from which an engine's pool math changes.
fn math_changes(engine: Engine) -> &'static [Version] {
    match engine {
        Engine::Sglang => sglang::MATH_CHANGES,
        Engine::Vllm => vllm::MATH_CHANGES,
        Engine::Trtllm => &[],
    }
}

/// Which stretch between math changes `v` falls in.
fn stretch(engine: Engine, v: &Version) -> usize {
    let rel = v.release();
    math_changes(engine).iter().filter(|c| **c <= rel).count()
}

/// The newest release of each stretch of `releases` (oldest first) over which the math is the same.
pub fn representatives(engine: Engine, releases: &[Version]) -> Vec<Version> {
    let mut out: Vec<Version> = Vec::new();
    for v in releases {
        match out.last_mut() {
            Some(last) if stretch(engine, last) == stretch(engine, v) => *last = v.clone(),
            _ => out.push(v.clone()),
        }
    }
    out
}

/// `point`, planned at the newest release the launch could run, with its band widened over the
/// other releases it could run. The pool band covers them all. The usable band, which the
/// verdicts read, runs from the lowest low end to the lowest high end: a deploy is refused when
/// some release surely cannot hold the context, and warned about when some release may not. Its
/// point is the newest release's, capped at that band.
pub fn widen(
    inp: &Inputs,
    plan_at: fn(&Inputs) -> Result<Plan, Vec<Finding>>,
    mut point: Plan,
) -> Plan {
    let args = inp.args;
    let engine = args.engine;
    let (Some(oldest), Some(newest)) = (args.could_run.first(), args.could_run.last()) else {
        return point;
    };
    let mut planned = vec![args.version.clone()];
    let (mut contexts, mut unplanned) = (Vec::new(), Vec::new());
    for v in representatives(engine, &args.could_run) {
        if stretch(engine, &v) == stretch(engine, &args.version) {
            continue;
        }
        let mut a = args.clone();
        a.version = v.clone();
        a.could_run.clear();
        let Ok(p) = plan_at(&Inputs { args: &a, ..*inp }) else {
            unplanned.push(v.to_string());
            continue;
        };
        point.pool_tokens_low = point.pool_tokens_low.min(p.pool_tokens_low);
        point.pool_tokens_high = point.pool_tokens_high.max(p.pool_tokens_high);
        point.usable_tokens_low = point.usable_tokens_low.min(p.usable_tokens_low);
        point.usable_tokens_high = point.usable_tokens_high.min(p.usable_tokens_high);
        point.max_context_fit = point.max_context_fit.min(p.max_context_fit);
        point.needed_fraction = point
            .needed_fraction
            .zip(p.needed_fraction)
            .map(|(x, y)| x.max(y));
        if p.context_length != point.context_length {
            contexts.push(format!("{v} derives {}", p.context_length));
            point.context_length = point.context_length.max(p.context_length);
        }
        planned.push(v);
    }
    // What one request is checked against stays inside its band.
    point.usable_tokens = point.usable_tokens.min(point.usable_tokens_high);
    planned.sort();
    let planned: Vec<String> = planned.iter().map(Version::to_string).collect();
    let mut source = format!(
        "release unknown: the band covers {} {oldest} to {newest} (planned at {}; the math is the same between them), the point is the newest, {}; a request's band, which the verdicts read, runs from the lowest low end to the lowest high end of them, and its point is the newest's, capped at that band",
        engine.name(),
        planned.join(", "),
        args.version
    );
    if !unplanned.is_empty() {
        source += &format!(
            "; not in the band: {} (the math cannot plan this launch there)",
            unplanned.join(", ")
        );
    }
    if !contexts.is_empty() {
        source += &format!(
            "; the context checked is the longest any of them derives ({})",
            contexts.join(", ")
        );
    }
    point.assumptions.push(super::Assumption {
        term: "pool_tokens_over_releases".into(),
        value: point.pool_tokens as f64,
        low: Some(point.pool_tokens_low as f64),
        high: Some(point.pool_tokens_high as f64),
        source,
    });
    point
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_release_per_stretch_between_math_changes() {
        // vLLM's math changes at 0.16, 0.17, 0.18, 0.20, 0.21 and 0.33 (capacity/vllm.rs).
        let reps = representatives(Engine::Vllm, crate::engine::known_versions(Engine::Vllm));
        let names: Vec<String> = reps.iter().map(Version::to_string).collect();
        assert_eq!(
            names,
            ["0.15.0", "0.16.0", "0.17.0", "0.19.0", "0.20.0", "0.32.0", "0.33.0"]
        );
        let some = [Version::new(0, 5, 8), Version::new(0, 5, 9)];
        assert_eq!(
            representatives(Engine::Sglang, &some),
            [Version::new(0, 5, 9)]
        );
        assert!(representatives(Engine::Trtllm, &[]).is_empty());
    }

    /// vLLM 0.33.0's plan whatever the release, made worse before 0.21 and impossible before
    /// 0.16, with a context that releases before 0.33 derive twice as long: what `widen` makes of
    /// releases that differ.
    fn differing(inp: &Inputs) -> Result<Plan, Vec<Finding>> {
        let mut at_033 = inp.args.clone();
        at_033.version = Version::new(0, 33, 0);
        let mut p = vllm::plan(&Inputs {
            args: &at_033,
            ..*inp
        })?;
        let v = &inp.args.version;
        if *v < Version::new(0, 16, 0) {
            return Err(Vec::new());
        }
        if *v < Version::new(0, 21, 0) {
            p.pool_tokens_low -= 1000;
            p.usable_tokens_low -= 1000;
            p.usable_tokens_high -= 500;
            p.max_context_fit -= 1000;
        }
        if *v < Version::new(0, 33, 0) {
            p.pool_tokens_high += 700;
            p.context_length *= 2;
        }
        Ok(p)
    }

    #[test]
    fn the_band_takes_each_end_from_the_release_that_sets_it() {
        let m = crate::capacity::testing::dense(32, 32, 8, 128);
        let g = crate::gpu::lookup("H100").expect("catalog H100").clone();
        let a = crate::capacity::testing::args(Engine::Vllm, "0.33.0", &[]);
        let inp = Inputs {
            args: &a,
            model: &m,
            gpu: &g,
            gpu_count: None,
            at: crate::source::Loc::new(crate::source::FileId(0), 0..0),
        };
        let newest = differing(&inp).unwrap();
        let mut unknown = a.clone();
        unknown.could_run = crate::engine::known_versions(Engine::Vllm).to_vec();
        let inp = Inputs {
            args: &unknown,
            ..inp
        };
        let wide = widen(&inp, differing, newest.clone());
        assert_eq!(wide.pool_tokens, newest.pool_tokens);
        assert_eq!(wide.pool_tokens_low, newest.pool_tokens_low - 1000);
        assert_eq!(wide.pool_tokens_high, newest.pool_tokens_high + 700);
        assert_eq!(wide.usable_tokens_low, newest.usable_tokens_low - 1000);
        assert_eq!(wide.usable_tokens_high, newest.usable_tokens_high - 500);
        assert!(wide.usable_tokens <= wide.usable_tokens_high);
        assert_eq!(wide.max_context_fit, newest.max_context_fit - 1000);
        assert_eq!(wide.context_length, 2 * newest.context_length);
        let note = &wide.assumptions.last().unwrap().source;
        assert!(
            note.contains("planned at 0.16.0, 0.17.0, 0.19.0, 0.20.0, 0.32.0, 0.33.0"),
            "{note}"
        );
        assert!(note.contains("not in the band: 0.15.0"), "{note}");
    }
}
