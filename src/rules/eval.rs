//! The evaluators rule data points at (`check = "..."` in `rules/*.toml`). Per-launch evaluators
//! read a plan and the launch's settings and return at most one finding; deployment evaluators
//! (`evaluate_deployment`) compare the launches of one deployment. Wording comes from the rule's
//! templates.

use super::RuleSettings;
use super::{remedy, Rule};
use crate::capacity::{ContextSource, Plan, Role};
use crate::deployment::{self, Deployment};
use crate::engine::EngineArgs;
use crate::finding::Finding;
use crate::gpu::GpuSpec;
use crate::launch::Engine;
use crate::model::Geometry;
use crate::outcome::LaunchOutcome;
use crate::source::{Loc, Sources};
use crate::version::Version;

/// What the evaluators look at for one launch.
pub struct Subject<'a> {
    pub plan: &'a Plan,
    pub args: &'a EngineArgs,
    pub model: &'a Geometry,
    /// The launch's command words, for findings with no flag to point at.
    pub at: Loc,
    /// The GPU the plan is for, to plan again with one thing changed (`remedy`).
    pub gpu: &'a GpuSpec,
    /// Levels and parameters from `kvlint.toml`.
    pub settings: &'a RuleSettings,
}

impl Subject<'_> {
    fn pool(&self) -> PoolSubject<'_> {
        PoolSubject {
            plan: self.plan,
            at: self.at,
            settings: self.settings,
            measured: None,
            launch: Some(self),
        }
    }
}

/// What the pool rules (KV001–KV004) read: a plan, predicted or measured, and where to point.
pub struct PoolSubject<'a> {
    pub plan: &'a Plan,
    pub at: Loc,
    pub settings: &'a RuleSettings,
    /// For a plan made of numbers a running engine reported (`kvlint verify`): where they came
    /// from, said in the message instead of the band.
    pub measured: Option<&'a str>,
    /// The launch the plan was made for, to plan it again with one thing changed (`remedy`);
    /// none for a measured plan.
    pub launch: Option<&'a Subject<'a>>,
}

/// `kvlint verify`: the pool rules on a plan built from the numbers a running engine reported.
pub fn evaluate_measured(s: &PoolSubject) -> Vec<Finding> {
    super::all()
        .iter()
        .filter(|r| r.applies_to(s.plan.role.name()))
        .filter_map(|r| match r.check.as_str() {
            "pool_vs_context" => pool_vs_context(r, s),
            "pool_headroom" => pool_headroom(r, s),
            "pool_uncertain" => pool_uncertain(r, s),
            _ => None,
        })
        .collect()
}

/// Runs every plan-level rule on one launch.
pub fn evaluate(s: &Subject) -> Vec<Finding> {
    super::all()
        .iter()
        .filter(|r| r.applies_to(s.plan.role.name()))
        .filter_map(|r| {
            let f = match r.check.as_str() {
                "pool_vs_context" => pool_vs_context(r, &s.pool()),
                "pool_headroom" => pool_headroom(r, &s.pool()),
                "pool_uncertain" => pool_uncertain(r, &s.pool()),
                "context_vs_model" => context_vs_model(r, s),
                "weights_vs_budget" => weights_vs_budget(r, s),
                "heads_vs_tp" => heads_vs_tp(r, s),
                _ => None,
            };
            f
        })
        .collect()
}

/// Thousands separators, as the engines' own logs print token counts.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn context_flag(p: &Plan) -> &'static str {
    match p.engine {
        Engine::Sglang => "--context-length",
        Engine::Vllm => "--max-model-len",
        Engine::Trtllm => "max_seq_len",
    }
}

/// Where a context finding points: the context flag, else the launch.
fn context_loc(s: &PoolSubject) -> (Loc, &'static str) {
    match &s.plan.context_source {
        ContextSource::Flag(l) | ContextSource::Auto(l) => (*l, "advertised context"),
        ContextSource::Model => (s.at, "context taken from the model's config.json"),
    }
}

/// The shared template values of the pool rules. `target` is the number of tokens the pool must
/// hold for the finding to go away. `lower` offers a smaller context only when one fits; when
/// none does, `remedy` says the model does not fit and what would.
fn pool_finding(rule: &'static str, s: &PoolSubject, target: u64) -> Finding {
    let p = s.plan;
    let (loc, label) = context_loc(s);
    let computed = match s.launch {
        Some(launch) => remedy::remedy(launch, target),
        None => measured_remedy(p),
    };
    let (lower, remedy) = if p.max_context_fit > 0 {
        (
            format!(
                "lower {} to {}, or ",
                context_flag(p),
                thousands(p.max_context_fit)
            ),
            computed,
        )
    } else {
        (String::new(), format!("{}; {computed}", no_fit(p)))
    };
    let or_lower = if p.max_context_fit > 0 {
        format!(
            "; or lower {} to {} to be sure",
            context_flag(p),
            thousands(p.max_context_fit)
        )
    } else {
        format!("; {}", no_fit(p))
    };
    let band = match s.measured {
        Some(how) => format!("measured: {how}"),
        None => format!(
            "band {}–{}",
            thousands(p.usable_tokens_low),
            thousands(p.usable_tokens_high)
        ),
    };
    let mut f = Finding::new(rule, Some(loc))
        .var("role", p.role.name())
        .var("band", band)
        .var(
            "measured",
            s.measured
                .map_or(String::new(), |how| format!(" (measured: {how})")),
        )
        .var("pool", thousands(p.usable_tokens))
        .var("pool_low", thousands(p.usable_tokens_low))
        .var("pool_high", thousands(p.usable_tokens_high))
        .var("context", thousands(p.context_length))
        .var("max_context", thousands(p.max_context_fit))
        .var("context_flag", context_flag(p))
        .var("fraction_flag", p.memory_fraction_flag)
        .var("fraction", p.memory_fraction)
        .var("remedy", remedy)
        .var("lower", lower)
        .var("or_lower", or_lower)
        .var("engine_note", engine_note(p))
        .label(label);
    if let Some(l) = p.memory_fraction_loc {
        f = f.also(l, "sets the memory fraction");
    }
    f
}

/// The memory fraction and who set it: the flag when the launch gives it, else the engine's
/// own choice (SGLang computes one from the GPU and model; the others have a default).
pub fn fraction_said(p: &Plan) -> String {
    match (p.memory_fraction_loc, p.engine) {
        (Some(_), _) => format!("{} {}", p.memory_fraction_flag, p.memory_fraction),
        (None, Engine::Sglang) => format!(
            "a memory fraction of {} (SGLang's own heuristic; {} is not given)",
            p.memory_fraction, p.memory_fraction_flag
        ),
        (None, _) => format!(
            "a memory fraction of {} (the engine's default; {} is not given)",
            p.memory_fraction, p.memory_fraction_flag
        ),
    }
}

/// What would hold the context when the pool was measured: the launch cannot be planned again.
fn measured_remedy(p: &Plan) -> String {
    let fp8 = p.kv_cache_dtype.starts_with("fp8") || p.kv_cache_dtype.starts_with("fp4");
    match p.needed_fraction {
        Some(f) if f > p.memory_fraction => format!("raise {} to {f}", p.memory_fraction_flag),
        _ if fp8 => "spread the model over more GPUs".to_string(),
        _ => "use an FP8 KV cache or spread the model over more GPUs".to_string(),
    }
}

/// Said when not even one token of context is sure to fit: no smaller context is a way out.
fn no_fit(p: &Plan) -> String {
    let what = if p.usable_tokens_high == 0 {
        "does not fit"
    } else {
        "leaves no room that surely holds a request"
    };
    format!(
        "{} {what} on {}×{} at {} {}",
        p.model, p.gpu_count, p.gpu, p.memory_fraction_flag, p.memory_fraction
    )
}

/// TensorRT-LLM does not refuse such a launch: it starts with a smaller context than advertised.
fn engine_note(p: &Plan) -> String {
    match p.engine {
        Engine::Trtllm => format!(
            "; TensorRT-LLM would start anyway and silently lower max_seq_len to about {}",
            thousands(p.usable_tokens)
        ),
        _ => String::new(),
    }
}

/// KV001 / KV002: even the optimistic end of the band holds less than the advertised context.
fn pool_vs_context(r: &'static Rule, s: &PoolSubject) -> Option<Finding> {
    let p = s.plan;
    let ratio = s.settings.param(r, "min_ratio").unwrap_or(1.0);
    ((p.usable_tokens_high as f64) < p.context_length as f64 * ratio)
        .then(|| pool_finding(&r.id, s, (p.context_length as f64 * ratio).ceil() as u64))
}

/// KV004: the band straddles the context.
fn pool_uncertain(r: &'static Rule, s: &PoolSubject) -> Option<Finding> {
    let p = s.plan;
    let ctx = p.context_length;
    (p.usable_tokens_low < ctx && p.usable_tokens_high >= ctx).then(|| pool_finding(&r.id, s, ctx))
}

/// KV003: a PD prefill pool that holds the context but with less than `min_ratio` of headroom.
fn pool_headroom(r: &'static Rule, s: &PoolSubject) -> Option<Finding> {
    let p = s.plan;
    let ratio = s.settings.param(r, "min_ratio").unwrap_or(2.0);
    let ctx = p.context_length as f64;
    let holds = p.usable_tokens_low as f64 >= ctx;
    (p.role == Role::Prefill && holds && (p.usable_tokens_low as f64) < ctx * ratio)
        .then(|| pool_finding(&r.id, s, (ctx * ratio).ceil() as u64).var("ratio", ratio))
}

/// KV005: the context exceeds what config.json and its rope scaling allow.
fn context_vs_model(r: &'static Rule, s: &Subject) -> Option<Finding> {
    let p = s.plan;
    let ContextSource::Flag(loc) = p.context_source else {
        return None;
    };
    (p.context_length > p.model_max_context).then(|| {
        Finding::new(&r.id, Some(loc))
            .var("context", thousands(p.context_length))
            .var("model_max", thousands(p.model_max_context))
            .var("model", &p.model)
            .var("context_flag", context_flag(p))
            .label("beyond the model's trained context")
    })
}

/// MEM001: the weights alone take the whole memory budget, so no KV pool can be made.
fn weights_vs_budget(r: &'static Rule, s: &Subject) -> Option<Finding> {
    let p = s.plan;
    (p.pool_tokens_high == 0).then(|| {
        let loc = p.memory_fraction_loc.unwrap_or(s.at);
        Finding::new(&r.id, Some(loc))
            .var(
                "weights_gib",
                format!("{:.1}", p.weights_bytes as f64 / crate::units::GIB),
            )
            .var("fraction_flag", p.memory_fraction_flag)
            .var("fraction", p.memory_fraction)
            .var("fraction_said", fraction_said(p))
            .var("gpu", &p.gpu)
            .var("tp", p.tp)
            .var("remedy", remedy::remedy(s, p.context_length))
            .label("budget left for the KV cache is empty")
    })
}

/// PAR001: attention or KV heads that tensor parallelism cannot split.
fn heads_vs_tp(r: &'static Rule, s: &Subject) -> Option<Finding> {
    let (m, p) = (s.model, s.plan);
    let tp = p.tp;
    if tp <= 1 || m.mla.is_some() {
        return None;
    }
    let heads_ok = m.num_attention_heads % tp == 0;
    let kv = m.num_kv_heads;
    let kv_ok = kv % tp == 0 || tp % kv == 0;
    if heads_ok && kv_ok {
        return None;
    }
    let dest = match p.engine {
        Engine::Sglang => "tp_size",
        Engine::Vllm | Engine::Trtllm => "tensor_parallel_size",
    };
    let loc = s.args.get(dest).map_or(s.at, |x| x.loc());
    Some(
        Finding::new(&r.id, Some(loc))
            .var("tp", tp)
            .var("heads", m.num_attention_heads)
            .var("kv_heads", kv)
            .var("model", &m.id)
            .label("tensor-parallel size"),
    )
}

/// Runs the rules that compare launches on one deployment: prefill/decode agreement, the engine
/// release of disaggregated servers, GPUs stated vs asked for, and GPUs promised twice.
pub fn evaluate_deployment(
    d: &Deployment,
    launches: &[LaunchOutcome],
    sources: &Sources,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for r in super::all() {
        match r.check.as_str() {
            "pd_agree" => {
                for (p, dd) in d.pd_pairs(launches) {
                    if let (Some(p), Some(dd)) = (
                        launches.get(p).map(|l| (p, l)),
                        launches.get(dd).map(|l| (dd, l)),
                    ) {
                        out.extend(pd_agree(r, p, dd));
                    }
                }
            }
            "disaggregated_version" => out
                .extend(members(d, launches).filter_map(|(i, lo)| disaggregated_version(r, i, lo))),
            "unknown_version" => {
                out.extend(members(d, launches).filter_map(|(i, lo)| unknown_version(r, i, lo)))
            }
            "gpus_vs_parallelism" => {
                out.extend(members(d, launches).filter_map(|(i, lo)| gpus_vs_parallelism(r, i, lo)))
            }
            "gpu_double_booked" => out.extend(gpu_double_booked(r, d, launches, sources)),
            _ => {}
        }
    }
    out
}

fn members<'a>(
    d: &'a Deployment,
    launches: &'a [LaunchOutcome],
) -> impl Iterator<Item = (usize, &'a LaunchOutcome)> + 'a {
    d.members
        .iter()
        .filter_map(|m| Some((m.launch, launches.get(m.launch)?)))
}

/// A value one half of a pair runs with, as shown, and where it is written.
struct Fact {
    value: String,
    at: Loc,
}

/// Where a setting is written, else the launch's command words (the value is the default).
fn setting_loc(lo: &LaunchOutcome, dest: &str) -> Loc {
    lo.args.get(dest).map_or(lo.launch.command, |s| s.value_loc)
}

fn known_setting(lo: &LaunchOutcome, dest: &str) -> bool {
    lo.args.get(dest).is_some_and(|s| s.usable())
}

/// The value of `setting` (a `pd_agree` rule parameter) on one half; None when unknown.
fn pd_fact(setting: &str, lo: &LaunchOutcome) -> Option<Fact> {
    let a = &lo.args;
    let vllm = a.engine != Engine::Sglang;
    let (value, at) = match setting {
        "context_length" => {
            let dest = if vllm {
                "max_model_len"
            } else {
                "context_length"
            };
            match lo
                .plan
                .as_ref()
                .map(|p| (p.context_length, &p.context_source))
            {
                Some((_, ContextSource::Auto(_))) => return None,
                Some((c, ContextSource::Flag(l))) => (thousands(c), *l),
                Some((c, ContextSource::Model)) => (thousands(c), lo.launch.command),
                None => (
                    thousands(u64::try_from(a.int(dest)?).ok()?),
                    setting_loc(lo, dest),
                ),
            }
        }
        "page_size" => {
            let dest = if vllm { "block_size" } else { "page_size" };
            let v = match &lo.plan {
                Some(p) => u64::from(p.page_size),
                None => u64::try_from(a.int(dest)?).ok()?,
            };
            (v.to_string(), setting_loc(lo, dest))
        }
        "kv_cache_dtype" => {
            let v = match &lo.plan {
                Some(p) => p.kv_cache_dtype.clone(),
                None => a
                    .text("kv_cache_dtype")
                    .filter(|t| *t != "auto")?
                    .to_string(),
            };
            (v, setting_loc(lo, "kv_cache_dtype"))
        }
        "model" => {
            let dest = deployment::model_dest(a.engine);
            if !known_setting(lo, dest) {
                return None;
            }
            (
                deployment::model_text(a)?.to_string(),
                setting_loc(lo, dest),
            )
        }
        "transfer_backend" => transfer_backend(lo)?,
        _ => return None,
    };
    Some(Fact { value, at })
}

/// SGLang `--disaggregation-transfer-backend` (default `mooncake`, `arg_groups/fields/disagg.py`);
/// vLLM `kv_transfer_config.kv_connector`.
fn transfer_backend(lo: &LaunchOutcome) -> Option<(String, Loc)> {
    let a = &lo.args;
    if a.engine == Engine::Sglang {
        let dest = "disaggregation_transfer_backend";
        if a.get(dest).is_some() && !known_setting(lo, dest) {
            return None;
        }
        let v = a.text(dest).unwrap_or("mooncake").to_string();
        let at = a.get(dest).or_else(|| a.get("disaggregation_mode"));
        return Some((v, at.map_or(lo.launch.command, |s| s.value_loc)));
    }
    if a.get("kv_transfer_config").is_some() && !known_setting(lo, "kv_transfer_config") {
        return None;
    }
    let v = deployment::kv_transfer(a)
        .and_then(|j| j.get("kv_connector")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "none".into());
    Some((v, setting_loc(lo, "kv_transfer_config")))
}

/// PD001–PD005: a setting both halves must share differs between them.
fn pd_agree(
    r: &'static Rule,
    (pi, p): (usize, &LaunchOutcome),
    (_, d): (usize, &LaunchOutcome),
) -> Option<Finding> {
    let setting = r.params.get("setting")?.as_str()?;
    let (pf, df) = (pd_fact(setting, p)?, pd_fact(setting, d)?);
    if pf.value == df.value {
        return None;
    }
    let mut f = Finding::new(&r.id, Some(pf.at))
        .var("prefill", &pf.value)
        .var("decode", &df.value)
        .label(format!("prefill: {}", pf.value))
        .also(df.at, format!("decode: {}", df.value));
    f.launch = Some(pi);
    Some(f)
}

/// VER001: an SGLang prefill or decode server on a release that hands intake-rejected requests to
/// decode or releases KV pages under in-flight transfers.
fn disaggregated_version(r: &'static Rule, i: usize, lo: &LaunchOutcome) -> Option<Finding> {
    let a = &lo.args;
    if a.engine != Engine::Sglang || lo.version_source == "latest known" {
        return None;
    }
    let role = deployment::engine_role(a)?;
    let fixed = Version::parse(r.params.get("fixed_in")?.as_str()?)?;
    if a.version.release() >= fixed {
        return None;
    }
    let at = lo
        .launch
        .engine_version
        .as_ref()
        .filter(|_| lo.version_source == "image tag")
        .map_or(lo.launch.command, |(_, l)| *l);
    let mut f = Finding::new(&r.id, Some(at))
        .var("version", &a.version)
        .var("role", role.name())
        .var("fixed", &fixed)
        .var("source", lo.version_source)
        .label(format!("SGLang {} ({})", a.version, lo.version_source));
    if let Some(mode) = a.get("disaggregation_mode") {
        f = f.also(mode.loc(), "prefill/decode disaggregation");
    }
    f.launch = Some(i);
    Some(f)
}

/// VER002: no `--engine-version` for this engine and no release in the image tag.
fn unknown_version(r: &'static Rule, i: usize, lo: &LaunchOutcome) -> Option<Finding> {
    if lo.version_source != "latest known" {
        return None;
    }
    let a = &lo.args;
    let image = lo.launch.placement.image.as_ref();
    let why = image.map_or_else(
        || format!("no image and no --engine-version for {}", a.engine.name()),
        |(name, _)| format!("the image {name} names no release"),
    );
    let oldest = a.could_run.first().unwrap_or(&a.version);
    // VER001 is only ruled out when every release the launch could run has its fix.
    let fixed = super::find("VER001")
        .and_then(|v| v.params.get("fixed_in")?.as_str())
        .and_then(Version::parse);
    let pd = match (a.engine, deployment::engine_role(a)) {
        (Engine::Sglang, Some(role)) if fixed.is_none_or(|f| oldest.release() < f) => format!(
            "; as an SGLang {} server it may run a release before 0.5.22, so VER001 cannot be ruled out",
            role.name()
        ),
        _ => String::new(),
    };
    let releases = match (a.engine, a.could_run.last()) {
        (Engine::Trtllm, _) => {
            "every 1.x release (TensorRT-LLM's math has no per-release table)".to_string()
        }
        (_, Some(newest)) if newest != oldest => format!("releases {oldest}–{newest}"),
        _ => format!("release {oldest} only"),
    };
    let mut f = Finding::new(&r.id, Some(image.map_or(lo.launch.command, |(_, l)| *l)))
        .var("engine", a.engine.name())
        .var("why", why)
        .var("releases", releases)
        .var("latest", &a.version)
        .var("pd", pd)
        .label("release unknown");
    f.launch = Some(i);
    Some(f)
}

/// GPUs the launch's parallel layout needs: per pod when the engine runs one process per pod
/// (vLLM `--data-parallel-size-local`), else in total. None when a size is not known.
fn gpus_needed(a: &EngineArgs) -> Option<(u32, bool)> {
    let size = |dest: &str| -> Option<u32> {
        match a.get(dest) {
            None => Some(1),
            Some(s) if !s.usable() => None,
            Some(_) => a
                .int(dest)
                .and_then(|v| u32::try_from(v).ok())
                .filter(|v| *v > 0),
        }
    };
    if a.engine == Engine::Sglang {
        // data_parallel_controller.py: with DP attention the DP ranks live inside the TP group;
        // without it every DP replica is its own TP group.
        let (tp, pp, dp) = (size("tp_size")?, size("pp_size")?, size("dp_size")?);
        let dp_attention =
            a.flag("enable_dp_attention") || a.int("attn_dp_size").is_some_and(|n| n > 1);
        let dp = if dp_attention { 1 } else { dp };
        return Some((tp.checked_mul(pp)?.checked_mul(dp)?, false));
    }
    if a.get("data_parallel_rank").is_some() || a.flag("headless") {
        return None; // one rank of an externally balanced DP group: the pod count says nothing
    }
    let (tp, pp) = (
        size("tensor_parallel_size")?,
        size("pipeline_parallel_size")?,
    );
    match a.get("data_parallel_size_local") {
        Some(_) => Some((
            tp.checked_mul(pp)?
                .checked_mul(size("data_parallel_size_local")?)?,
            true,
        )),
        None => Some((
            tp.checked_mul(pp)?
                .checked_mul(size("data_parallel_size")?)?,
            false,
        )),
    }
}

/// PAR002: the GPUs the input gives the launch differ from what its parallel layout asks for.
fn gpus_vs_parallelism(r: &'static Rule, i: usize, lo: &LaunchOutcome) -> Option<Finding> {
    let pl = &lo.launch.placement;
    let (needed, per_pod_only) = gpus_needed(&lo.args)?;
    // Without a count in the input, the count of `--gpu h200xN` (the plan's GPUs): a layout
    // that needs more GPUs than that cannot start; fewer is a node with spare GPUs.
    let Some(per_pod) = pl.gpus_per_pod else {
        let given = lo.plan.as_ref()?.gpu_count;
        return (given < needed).then(|| too_few(r, i, lo, gpus(given), needed));
    };
    // A pod asking for more GPUs than its node type has is never scheduled.
    if let Some(node) = pl.gpus_per_node.filter(|n| per_pod > *n) {
        return Some(too_few(
            r,
            i,
            lo,
            format!("nodes with {}", gpus(node)),
            per_pod,
        ));
    }
    let pods = pl.pods.unwrap_or(1);
    let stated = if per_pod_only {
        per_pod
    } else {
        per_pod.checked_mul(pods)?
    };
    if stated == needed {
        return None;
    }
    let given = if pods > 1 && !per_pod_only {
        format!("{per_pod} per pod × {pods} pods = {}", gpus(stated))
    } else {
        gpus(stated)
    };
    Some(too_few(r, i, lo, given, needed))
}

/// `1 GPU`, `8 GPUs`.
fn gpus(n: u32) -> String {
    match n {
        1 => "1 GPU".to_string(),
        n => format!("{n} GPUs"),
    }
}

fn too_few(r: &'static Rule, i: usize, lo: &LaunchOutcome, given: String, needed: u32) -> Finding {
    let layout = parallel_flags(&lo.args);
    let at = layout.first().map_or(lo.launch.command, |(_, l)| *l);
    let mut f = Finding::new(&r.id, Some(at))
        .var("given", given)
        .var("needed", needed)
        .label(format!("the layout needs {}", gpus(needed)));
    for (_, l) in layout.iter().skip(1) {
        f = f.also(*l, "part of the layout");
    }
    f.launch = Some(i);
    f
}

/// The parallel-size options a launch writes, with where.
fn parallel_flags(a: &EngineArgs) -> Vec<(&'static str, Loc)> {
    let dests: &[&str] = if a.engine == Engine::Sglang {
        &["tp_size", "pp_size", "dp_size"]
    } else {
        &[
            "tensor_parallel_size",
            "pipeline_parallel_size",
            "data_parallel_size",
            "data_parallel_size_local",
        ]
    };
    dests
        .iter()
        .filter_map(|d| Some((*d, a.get(d)?.loc())))
        .collect()
}

/// A GPU id and where it is written.
type GpuId = (String, Loc);

/// GPUs one launch reserves, where, and the compose profiles it runs under.
struct Claim {
    launch: usize,
    ids: Vec<GpuId>,
    profiles: Vec<String>,
}

/// GPU001: two launches of one deployment promised the same GPU.
fn gpu_double_booked(
    r: &'static Rule,
    d: &Deployment,
    launches: &[LaunchOutcome],
    sources: &Sources,
) -> Vec<Finding> {
    let claims: Vec<Claim> = members(d, launches)
        .filter_map(|(i, lo)| claim(i, lo, sources))
        .collect();
    let mut out = Vec::new();
    for (j, b) in claims.iter().enumerate() {
        for a in &claims[..j] {
            let together = a.profiles.is_empty()
                || b.profiles.is_empty()
                || a.profiles.iter().any(|p| b.profiles.contains(p));
            let shared: Vec<(&GpuId, &GpuId)> = b
                .ids
                .iter()
                .filter_map(|g| Some((g, a.ids.iter().find(|x| x.0 == g.0)?)))
                .collect();
            let Some(((_, b_at), (_, a_at))) = shared.first() else {
                continue;
            };
            if !together || a_at == b_at {
                continue;
            }
            let gpus: Vec<&str> = shared.iter().map(|(g, _)| g.0.as_str()).collect();
            let other = launches
                .get(a.launch)
                .map_or_else(String::new, |l| launch_name(l, sources));
            let mut f = Finding::new(&r.id, Some(*b_at))
                .var("gpus", gpus.join(", "))
                .var("other", other)
                .label("reserved again here")
                .also(*a_at, "first reserved here");
            f.launch = Some(b.launch);
            out.push(f);
        }
    }
    out
}

fn launch_name(lo: &LaunchOutcome, sources: &Sources) -> String {
    match &lo.launch.object {
        Some(o) => format!("{} {}", o.kind, o.name),
        None => format!(
            "the {} launch on line {}",
            lo.launch.engine.name(),
            sources.position(lo.launch.command).line
        ),
    }
}

/// A launch's GPU reservation: a compose service's `device_ids`, or `CUDA_VISIBLE_DEVICES` set for
/// a launch in a script (inside a container the variable indexes the container's own GPUs).
fn claim(i: usize, lo: &LaunchOutcome, sources: &Sources) -> Option<Claim> {
    match &lo.launch.object {
        Some(o) if o.kind == "ComposeService" => compose_claim(i, lo, &o.name, sources),
        Some(_) => None,
        None => {
            let (_, v) = lo
                .launch
                .env
                .iter()
                .rev()
                .find(|(k, _)| k == "CUDA_VISIBLE_DEVICES")?;
            if !v.unresolved.is_empty() {
                return None;
            }
            let ids = v.text.split(',').map(|g| (g.trim().to_string(), v.loc));
            Some(Claim {
                launch: i,
                ids: ids.filter(|(g, _)| !g.is_empty()).collect(),
                profiles: Vec::new(),
            })
        }
    }
}

/// `services.<name>.deploy.resources.reservations.devices[].device_ids` and `profiles`, read
/// again from the compose file (the launch keeps only the GPU count).
fn compose_claim(i: usize, lo: &LaunchOutcome, name: &str, sources: &Sources) -> Option<Claim> {
    let doc = crate::yaml::parse_documents(lo.file, sources.get(lo.file))
        .into_iter()
        .find_map(Result::ok)?;
    let svc = doc.get("services")?.get(name)?;
    let devices = svc
        .get("deploy")?
        .get("resources")?
        .get("reservations")?
        .get("devices")?;
    let list = seq(Some(devices))
        .iter()
        .find_map(|dev| dev.get("device_ids"))?;
    let ids = seq(Some(list))
        .iter()
        .filter_map(|n| Some((n.scalar_text()?.trim().to_string(), n.loc)))
        .collect();
    let profiles = seq(svc.get("profiles"))
        .iter()
        .filter_map(|n| n.scalar_text())
        .collect();
    Some(Claim {
        launch: i,
        ids,
        profiles,
    })
}

fn seq(node: Option<&crate::yaml::Node>) -> &[crate::yaml::Node] {
    match node.map(|n| &n.value) {
        Some(crate::yaml::Value::Seq(items)) => items,
        _ => &[],
    }
}
