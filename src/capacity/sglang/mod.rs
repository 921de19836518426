//! SGLang's KV pool, mirroring `python/sglang/srt/model_executor/pool_configurator.py`
//! (`DefaultPoolConfigurator`, `HybridSWAPoolConfigurator`), `mem_cache/kv_cache_configurator.py`
//! (`_profile_available_bytes`, `calculate_mla_kv_cache_dim`) and
//! `arg_groups/memory_hook.py :: handle_gpu_memory_settings` of 0.5.23, with the older
//! versions' differences (0.5.9 `model_runner_kv_cache_mixin.py`, 0.4.6 `model_runner.py`).
//! Reference: `sglang-capacity.md`.

mod budget;
mod cell;
mod dsv4;
mod fraction;
mod mamba;
mod nvfp4_moe;
#[cfg(test)]
mod tests;

use super::{
    int_or, page_floor, part_scale, rope_tables, unresolved, weights_per_rank_with_headroom,
    ContextSource, Estimate, Inputs, Notes, Plan, Role,
};
use crate::engine::EngineArgs;
use crate::finding::Finding;
use crate::launch::Engine;
use crate::model::{Geometry, LayerKind};
use crate::units::GIB;
use crate::version::Version;
use budget::{
    after_mamba, baseline, mamba_per_request, mla_absorbed_copies, mm_feature_pool,
    model_code_weights, mtp_vocab_copies, rope_elem_bytes, WEIGHTS_HEADROOM,
};
use cell::{cell, is_dsa, kv_dtype, page_size, Cell};
use fraction::{default_fraction, rocm_aiter_scale, speculative};

const V0_5_0: Version = Version::new(0, 5, 0);
const V0_5_3: Version = Version::new(0, 5, 3);
const V0_5_5: Version = Version::new(0, 5, 5);
const V0_5_6: Version = Version::new(0, 5, 6);
const V0_5_7: Version = Version::new(0, 5, 7);
const V0_5_10: Version = Version::new(0, 5, 10);
const V0_5_12: Version = Version::new(0, 5, 12);
const V0_5_13: Version = Version::new(0, 5, 13);
const V0_5_14: Version = Version::new(0, 5, 14);
const V0_5_16: Version = Version::new(0, 5, 16);
const V0_5_17: Version = Version::new(0, 5, 17);
const V0_5_18: Version = Version::new(0, 5, 18);
const V0_5_19: Version = Version::new(0, 5, 19);
const V0_5_22: Version = Version::new(0, 5, 22);
const V0_5_23: Version = Version::new(0, 5, 23);
/// Every release above: the math is the same between two of them, so a launch whose release is
/// unknown is planned once per stretch (capacity::releases). A new threshold belongs here too.
pub const MATH_CHANGES: &[Version] = &[
    V0_5_0, V0_5_5, V0_5_7, V0_5_10, V0_5_12, V0_5_13, V0_5_14, V0_5_16, V0_5_17, V0_5_18, V0_5_19,
    V0_5_22, V0_5_23,
];

/// Settings the pool math reads; an unresolved variable in any of them stops the plan.
pub(crate) const NEEDED: &[&str] = &[
    "model_path",
    "tp_size",
    "pp_size",
    "dp_size",
    "attn_dp_size",
    "context_length",
    "mem_fraction_static",
    "kv_cache_dtype",
    "page_size",
    "max_total_tokens",
    "chunked_prefill_size",
    "max_running_requests",
    "disaggregation_mode",
    "swa_full_tokens_ratio",
    "dcp_size",
];

/// Parallel layout of one SGLang server.
#[derive(Clone, Copy)]
struct Layout {
    tp: u32,
    pp: u32,
    dp: u32,
    attn_dp: u32,
    attn_tp: u32,
    dcp: u32,
}

impl Layout {
    /// GPUs of one server: attention-DP ranks live inside the TP group, while plain
    /// `--dp-size` starts `dp` copies of the TP×PP group
    /// (managers/data_parallel_controller.py :: DataParallelController).
    fn gpus(&self) -> u32 {
        let replicas = if self.attn_dp > 1 { 1 } else { self.dp };
        self.tp * self.pp * replicas
    }
}

fn layout(args: &EngineArgs) -> Layout {
    let tp = int_or(args, "tp_size", 1);
    let pp = int_or(args, "pp_size", 1);
    let dp = int_or(args, "dp_size", 1);
    // 0.5.22 added --attn-dp-size; --enable-dp-attention means attention-DP over dp_size.
    let attn_dp = match args.int("attn_dp_size") {
        Some(n) if n > 1 && args.version >= V0_5_22 => u32::try_from(n).unwrap_or(u32::MAX),
        _ if args.flag("enable_dp_attention") => dp,
        _ => 1,
    };
    let dcp = int_or(args, "dcp_size", 1);
    Layout {
        tp,
        pp,
        dp,
        attn_dp,
        attn_tp: (tp / attn_dp).max(1),
        dcp,
    }
}

/// 0.5.3 – 0.5.5 `ServerArgs._handle_model_specific_adjustments` (server_args.py): on a GPU a
/// DeepSeek DSA checkpoint (`is_deepseek_nsa`) always runs attention-DP over the whole TP group
/// (`enable_dp_attention = True; dp_size = tp_size`). 0.5.6 keeps the flag but no longer sets
/// `dp_size`, which leaves attention TP over the group.
fn dsa_forces_attention_dp(v: &Version, m: &Geometry) -> bool {
    const ARCHS: [&str; 3] = [
        "DeepseekV3ForCausalLM",
        "DeepseekV32ForCausalLM",
        "DeepseekV3ForCausalLMNextN",
    ];
    *v >= V0_5_3
        && *v < V0_5_6
        && is_dsa(m)
        && m.architectures
            .first()
            .is_some_and(|a| ARCHS.contains(&a.as_str()))
}

/// 0.5.3 (only that release) also sets `mem_fraction_static = 0.8` for DSA in the same
/// function, over any `--mem-fraction-static`.
fn dsa_fixed_fraction(v: &Version, m: &Geometry) -> Option<f64> {
    (v.release() == V0_5_3 && v.suffix.is_none() && dsa_forces_attention_dp(v, m)).then_some(0.8)
}

/// Whether an EAGLE-family draft (its weights, and its KV in the target's cell) is inside the
/// budget the target pool is sized from. From 0.5.14 `managers/scheduler.py :: init_model_worker`
/// builds the draft worker (`maybe_init_draft_worker`) before `init_memory_pools` profiles the free
/// memory, and `model_executor/pool_configurator.py` grows the target cell by
/// `1 + eagle_draft_num_layers / num_layers`; up to 0.5.13 the target `ModelRunner` sized its pool
/// while it was built, before the draft loaded, and neither term was in the pool.
fn draft_before_pool(v: &Version) -> bool {
    *v >= V0_5_14
}

/// The layer count the draft's cell share is taken over (`model_executor/pool_configurator.py`,
/// the pool configurator's `__init__`, 0.5.14–0.5.23): on a hybrid with linear-attention or
/// Mamba layers (`mambaish_config`) only the full-attention layers, whose KV the cell holds;
/// otherwise every layer.
fn cell_layers(m: &Geometry) -> u32 {
    let full = m
        .layers
        .iter()
        .filter(|l| matches!(l, LayerKind::Full))
        .count() as u32;
    if m.linear.is_some() || m.recurrent.is_some() {
        full.max(1)
    } else {
        m.num_layers.max(1)
    }
}

fn role(args: &EngineArgs) -> Role {
    match args.text("disaggregation_mode") {
        Some("prefill") => Role::Prefill,
        Some("decode") => Role::Decode,
        _ => Role::Unified,
    }
}

/// Tokens the pool holds for a KV budget, after page alignment and `--max-total-tokens`.
fn tokens(rest: f64, cell: &Cell, page: u32, cap: Option<u64>) -> u64 {
    if rest <= 0.0 || cell.bytes <= 0.0 {
        return 0;
    }
    let t = page_floor((rest.floor() / cell.bytes).floor() as u64, page);
    cap.map_or(t, |c| t.min(page_floor(c, page)))
}

pub fn plan(inp: &Inputs) -> Result<Plan, Vec<Finding>> {
    let args = inp.args;
    let missing = unresolved(args, NEEDED);
    if !missing.is_empty() {
        return Err(missing);
    }
    let (m, gpu) = (inp.model, inp.gpu);
    let v = &args.version;
    super::check_ints(
        args,
        &["tp_size", "pp_size", "dp_size"],
        &["page_size", "attn_dp_size", "dcp_size"],
    )?;
    let mut notes = Notes::default();
    // The default fraction is computed before the DSA adjustment forces attention-DP
    // (`__post_init__` calls `_handle_gpu_memory_settings` first), so it sees the flags as given.
    let given = layout(args);
    let lay = if dsa_forces_attention_dp(v, m) {
        notes.exact(
            "dp_size",
            f64::from(given.tp),
            "attention-DP over the TP group, forced for DeepSeek DSA on GPUs \
             (0.5.3–0.5.5 server_args.py :: _handle_model_specific_adjustments)",
        );
        Layout {
            dp: given.tp,
            attn_dp: given.tp,
            attn_tp: 1,
            ..given
        }
    } else {
        given
    };
    let role = role(args);

    let (mut kv_name, kvb) = kv_dtype(args, m, gpu, &mut notes);
    // DeepSeek-V4: its own pools, page and KV dtype (capacity/sglang/dsv4.rs).
    let dsv4 = match &m.compressed {
        Some(c) => {
            let at = args.get("model_path").map_or(inp.at, |s| s.loc());
            let setup = dsv4::Setup {
                role,
                pp: lay.pp,
                attn_dp: lay.attn_dp,
                cc: gpu.compute_capability.0,
                at,
            };
            Some(dsv4::pool(args, m, c, &setup, &mut notes)?)
        }
        None => None,
    };
    let page = match &dsv4 {
        Some(_) => dsv4::PAGE,
        None => page_size(args, m, gpu),
    };
    let mut cell = match &dsv4 {
        Some(d) => {
            if args.text("kv_cache_dtype").unwrap_or("auto") == "auto" {
                kv_name = "fp8_e4m3".into(); // apply_deepseek_v4_defaults: auto → fp8_e4m3
            }
            Cell {
                bytes: d.bytes_per_full_token,
                swa_ratio: None,
                how: d.how.clone(),
            }
        }
        None => cell(args, m, gpu, &lay, kvb, &kv_name),
    };
    let spec = speculative(args);
    let eagle_like = spec.is_some_and(|a| {
        ["eagle", "eagle3", "nextn", "mtp", "standalone"].contains(&a.to_ascii_lowercase().as_str())
    });
    let draft = super::adapters::sglang_draft(args, m, lay.tp, kvb)?;
    if let (Some(d), true) = (&draft, eagle_like && draft_before_pool(v)) {
        // A draft model of its own: its KV shares the budget and its weights load first.
        cell.bytes += d.kv_per_token;
        cell.how
            .push_str(&format!(" + {} B for the {}", d.kv_per_token, d.how));
    } else if eagle_like && draft_before_pool(v) {
        // 0.5.14+: the draft KV shares the budget, so the cell grows by draft/target layers.
        let draft_layers = if m.nextn_layers > 0 {
            m.nextn_layers
        } else {
            1
        };
        let grow = (cell.bytes * f64::from(draft_layers) / f64::from(cell_layers(m))).floor();
        cell.bytes += grow;
        cell.how
            .push_str(&format!(" + {grow} B for {draft_layers} draft layer(s)"));
    }
    notes.exact("kv_bytes_per_token", cell.bytes, cell.how.clone());

    let flag_fraction = match dsa_fixed_fraction(v, m) {
        Some(f) => Some((
            f,
            "0.8 for DeepSeek DSA over any flag (0.5.3 server_args.py :: _handle_model_specific_adjustments)"
                .to_string(),
            None,
        )),
        None => args.float("mem_fraction_static").map(|f| {
            (
                f,
                "--mem-fraction-static".to_string(),
                args.get("mem_fraction_static").map(|s| s.loc()),
            )
        }),
    };
    let (fraction, fraction_how, fraction_loc) = match flag_fraction {
        Some(given_fraction) => given_fraction,
        None => {
            let (f, how) = default_fraction(args, m, gpu, &given, role);
            (f, how, None)
        }
    };
    let model_max = crate::model::derived_context_length_sglang(m);
    let context_len = args
        .int("context_length")
        .map_or(model_max, |c| c.max(0) as u64);
    let aiter_scale = rocm_aiter_scale(args, m, gpu, context_len);
    let (fraction, fraction_how) = match aiter_scale {
        Some((s, why)) => (fraction * s, format!("{fraction_how}, {why}")),
        None => (fraction, fraction_how),
    };
    notes.exact("mem_fraction_static", fraction, fraction_how);

    let b = baseline(gpu, &lay, args, &mut notes);
    let quant = args.text("quantization");
    let extras = model_code_weights(m, &lay, v, part_scale(m, quant))
        .into_iter()
        .chain(mla_absorbed_copies(m, &lay, gpu))
        .chain(budget::uneven_stage(m, &lay))
        .chain(nvfp4_moe::swizzled_scale_copies(m, &lay, v, args, gpu))
        .chain(rope_tables(m, rope_elem_bytes(m, gpu)))
        // model_config.py::_get_and_verify_dtype: `--dtype float32` loads weights at 4 bytes.
        .chain(super::dtype_weights(args, m, quant, lay.tp * lay.pp))
        .chain(super::adapters::lora(args, m, lay.tp))
        .chain(mm_feature_pool(m, args, gpu, fraction))
        .chain(
            draft
                .as_ref()
                .filter(|_| eagle_like && draft_before_pool(v))
                .map(|d| (Estimate::rel(d.weights, 0.1), d.how.clone())),
        );
    let mut w = weights_per_rank_with_headroom(
        m,
        quant,
        (lay.tp, lay.pp),
        extras,
        &mut notes,
        WEIGHTS_HEADROOM,
    );
    // A draft from the target's own checkpoint (NEXTN/MTP). Its layers are priced when the
    // config counts them (`num_nextn_predict_layers`, or Qwen3.5/3.6's `mtp_num_hidden_layers`); its
    // vocabulary tensors either way.
    if eagle_like && draft_before_pool(v) && draft.is_none() {
        let draft = m.nextn_weight_bytes as f64 / f64::from(lay.tp);
        let vocab = mtp_vocab_copies(m, &lay, args);
        let e = Estimate::range(
            draft + vocab.point,
            draft * 0.9 + vocab.low,
            draft * 1.1 + vocab.high,
        );
        notes.estimate(
            "draft_weights_bytes",
            e,
            format!(
                "MTP layers load before profiling (0.5.14+), and the draft's own embed_tokens \
                 and lm_head ({:.2} GiB), shared with the target only after the pool is sized",
                vocab.point / GIB
            ),
        );
        w = Estimate::range(w.point + e.point, w.low + e.low, w.high + e.high);
    }
    let per_req = mamba_per_request(m, lay.attn_tp, args);
    if per_req > 0.0 {
        notes.exact(
            "mamba_state_bytes_per_request",
            per_req,
            "conv + fp32 SSM state of the linear-attention layers",
        );
    }

    // No DeepEP or DP-gather term: DeepEP's buffers are made at the first dispatch, after the
    // pool (layers/moe/token_dispatcher/deepep.py :: DeepEPBuffer.get_deepep_buffer), and the
    // DP-attention gather buffer per forward (layers/dp_attention.py :: get_global_dp_buffer);
    // both take from the headroom the fraction leaves, not from the pool.
    let scratch =
        match budget::spec_mamba_scratch(v, args, per_req, lay.attn_dp, role == Role::Prefill) {
            Ok(x) => x,
            Err(need) => {
                notes.exact(
                    "spec_mamba_scratch_bytes",
                    0.0,
                    format!(
                        "not counted: the speculative intermediate mamba states come out of the \
                     budget before the pool, and sizing them needs {need}"
                    ),
                );
                0.0
            }
        };
    if scratch > 0.0 {
        notes.exact(
            "spec_mamba_scratch_bytes",
            scratch,
            "intermediate mamba states per draft token, set apart before the pool \
             (_handle_max_mamba_cache)",
        );
    }
    let rest_at =
        |b: f64, w: f64| after_mamba(fraction * b - w - scratch, per_req, args, lay.attn_dp);
    let cap = args.int("max_total_tokens").map(|t| t.max(0) as u64);
    let logical = |t: u64| t * u64::from(lay.dcp.max(1));
    // DeepSeek-V4 0.5.23 sets its per-request c128 states apart before the tokens.
    let fixed = dsv4.as_ref().map_or(0.0, |d| d.fixed_bytes);
    let pool = |rest: f64| logical(tokens(rest - fixed, &cell, page, cap));
    let rest = rest_at(b.point, w.point);
    let (pool_point, pool_low, pool_high) = (
        pool(rest),
        pool(rest_at(b.low, w.high)),
        pool(rest_at(b.high, w.low)),
    );

    if let Some(d) = &dsv4 {
        let how = if d.usable(pool_point) < pool_point {
            "the SWA pool; a 0.5.12 PD prefill server admits no prompt longer than it \
             (disaggregation/prefill.py :: PrefillBootstrapQueue)"
        } else {
            "the SWA pool (pool_configurator.py :: DSV4PoolConfigurator._compute_dsv4_sizes)"
        };
        notes.exact("swa_pool_tokens", d.swa_tokens(pool_point) as f64, how);
    }

    // 0.5.9 and older used min(swa, full) tokens as the request capacity for hybrid SWA.
    let usable = |t: u64| match cell.swa_ratio {
        _ if dsv4.is_some() => dsv4.as_ref().map_or(t, |d| d.usable(t)),
        Some(r) if *v < V0_5_18 => page_floor((t as f64 * r) as u64, page).min(t),
        _ => t,
    };

    let (context_length, context_source) = match args.int("context_length") {
        Some(c) => (
            c.max(0) as u64,
            ContextSource::Flag(args.get("context_length").map_or(inp.at, |s| s.loc())),
        ),
        None => (model_max, ContextSource::Model),
    };

    // Fraction at which the low end of the band holds the context.
    let need_tokens = context_length.div_ceil(u64::from(lay.dcp.max(1))) + u64::from(page);
    // The flag a user sets is scaled by aiter's factor before it sizes the pool.
    let needed =
        (need_tokens as f64 * cell.bytes + w.high) / b.low / aiter_scale.map_or(1.0, |(s, _)| s);
    let needed_fraction =
        (per_req == 0.0 && cell.swa_ratio.is_none() && dsv4.is_none() && needed < 0.99)
            .then_some((needed * 1000.0).ceil() / 1000.0);

    Ok(Plan {
        engine: Engine::Sglang,
        engine_version: v.to_string(),
        role,
        model: m.id.clone(),
        gpu: gpu.name.clone(),
        gpu_count: inp.gpu_count.unwrap_or(lay.gpus()),
        tp: lay.tp,
        pp: lay.pp,
        dp: lay.dp,
        context_length,
        context_source,
        model_max_context: model_max,
        kv_cache_dtype: kv_name,
        page_size: page,
        kv_bytes_per_token: cell.bytes.round() as u64,
        pool_tokens: pool_point,
        pool_tokens_low: pool_low,
        pool_tokens_high: pool_high,
        usable_tokens: usable(pool_point),
        usable_tokens_low: usable(pool_low),
        usable_tokens_high: usable(pool_high),
        budget_bytes: rest.round() as i64,
        weights_bytes: w.point.round() as u64,
        memory_fraction: fraction,
        memory_fraction_loc: fraction_loc,
        memory_fraction_flag: "--mem-fraction-static",
        needed_fraction,
        max_context_fit: usable(pool_low),
        assumptions: notes.0,
    })
}
