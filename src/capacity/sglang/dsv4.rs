//! DeepSeek-V4's pools in SGLang: `model_executor/pool_configurator.py :: DSV4PoolConfigurator`
//! ("DSV4 memory calculation"). One coefficient, bytes per full-pool token, covers the
//! sliding-window pool (a `swa_full_tokens_ratio` share of the full tokens), the ratio-4 and
//! ratio-128 compressed latents, the ratio-4 indexer keys and the compress states addressed per
//! SWA page; 0.5.23 also sets the ratio-128 compress states apart as fixed bytes per request
//! slot. A PD prefill server of 0.5.12 admits no prompt longer than its SWA pool
//! (`disaggregation/prefill.py :: PrefillBootstrapQueue.__init__`, removed in 0.5.13 by
//! sgl-project/sglang#26607). Modelled: 0.5.12, 0.5.13 and 0.5.23 on the default NVIDIA path;
//! 0.5.14–0.5.22 size these pools in ways in between, and are refused by name.

use super::{Role, V0_5_12, V0_5_13, V0_5_14, V0_5_23};
use crate::capacity::{page_floor, Notes};
use crate::engine::EngineArgs;
use crate::finding::Finding;
use crate::model::{Compressed, Geometry};
use crate::source::Loc;

/// `page_size = 256` on CUDA (0.5.12 `deepseek_v4_hook.py :: apply_deepseek_v4_defaults`,
/// 0.5.23 `arg_groups/model_overrides/deepseek_v4.py :: _deepseek_v4_overrides`).
pub(super) const PAGE: u32 = 256;
/// 0.5.12 `apply_deepseek_v4_defaults`: a `--swa-full-tokens-ratio` equal to the ServerArgs
/// default (0.8) becomes 0.1. 0.5.23 declares 0.1 when none is given, before
/// `kv_cache_hook.py :: handle_cache_compatibility` records the ratio as set, so the
/// configurator sizes the SWA pool by ratio, never by the request cap.
const SERVER_ARGS_SWA_RATIO: f64 = 0.8;
const DSV4_SWA_RATIO: f64 = 0.1;
/// 0.5.23 `apply_deepseek_v4_defaults`: `max_running_requests = 256` when unset.
const DSV4_MAX_RUNNING_REQUESTS: i64 = 256;

/// The launch facts the DSv4 calculation reads besides its flags.
pub(super) struct Setup {
    pub(super) role: Role,
    pub(super) pp: u32,
    pub(super) attn_dp: u32,
    /// Compute capability major of the GPU.
    pub(super) cc: u32,
    pub(super) at: Loc,
}

/// How one SGLang release sizes a DeepSeek-V4 server.
pub(super) struct Dsv4 {
    /// `bytes_per_full_token`, speculative inflation included.
    pub(super) bytes_per_full_token: f64,
    /// Pools sized per request slot, taken from the budget before the tokens.
    pub(super) fixed_bytes: f64,
    swa_ratio: f64,
    /// 0.5.12 PD prefill: requests are admitted up to the SWA pool only.
    prefill_swa_cap: bool,
    pub(super) how: String,
}

impl Dsv4 {
    /// `_compute_dsv4_sizes`: `int(full_token * swa_ratio) // page_size * page_size`.
    pub(super) fn swa_tokens(&self, full: u64) -> u64 {
        page_floor((full as f64 * self.swa_ratio) as u64, PAGE)
    }

    /// Tokens one request can hold: the full pool, or on a 0.5.12 prefill server
    /// `min(max_total_num_tokens, swa_max_total_num_tokens)`.
    pub(super) fn usable(&self, full: u64) -> u64 {
        if self.prefill_swa_cap {
            full.min(self.swa_tokens(full))
        } else {
            full
        }
    }
}

/// The coefficient for this launch, or INP008 when the release's DSv4 math is not modelled.
pub(super) fn pool(
    args: &EngineArgs,
    m: &Geometry,
    c: &Compressed,
    s: &Setup,
    notes: &mut Notes,
) -> Result<Dsv4, Vec<Finding>> {
    let v = &args.version;
    let refuse = |why: String| {
        vec![Finding::new("INP008", Some(s.at))
            .var("model", &m.id)
            .var("architecture", m.architectures.first().map_or("", String::as_str))
            .var("why", why)
            .var(
                "need",
                "SGLang's DSv4 pool calculation of that release and setup (pool_configurator.py :: DSV4PoolConfigurator)",
            )
            .label("KV layout not modelled")]
    };
    let modern = v.release() == V0_5_23;
    if !modern && (*v < V0_5_12 || *v >= V0_5_14) {
        return Err(refuse(format!(
            "kvlint models SGLang's DeepSeek-V4 pools of 0.5.12, 0.5.13 and 0.5.23 only, not {v}"
        )));
    }
    if args.flag("enable_hisparse") {
        return Err(refuse(
            "--enable-hisparse shrinks the c4 pool by the HiSparse host ratio, which kvlint does not read".into(),
        ));
    }
    // 0.5.13 on slice compress_ratios to the PP stage (`cfg.compress_ratios[start:end]`);
    // 0.5.12 budgets the whole list on every stage.
    let ratios: &[u32] = if *v >= V0_5_13 {
        if s.pp > 1 {
            return Err(refuse(format!(
                "{v} sizes each pipeline stage from its own layers; kvlint does not split DeepSeek-V4 stages"
            )));
        }
        &c.ratios[..c.ratios.len().min(m.num_layers as usize)]
    } else {
        &c.ratios
    };
    let swa_ratio = match args.float("swa_full_tokens_ratio") {
        None => DSV4_SWA_RATIO,
        Some(r) if r == SERVER_ARGS_SWA_RATIO && !modern => DSV4_SWA_RATIO,
        Some(r) => r,
    };
    notes.exact(
        "swa_full_tokens_ratio",
        swa_ratio,
        "0.1 for DeepSeek-V4 unless another value is given (apply_deepseek_v4_defaults, _deepseek_v4_overrides)",
    );
    notes.exact(
        "dsv4_online_c128",
        0.0,
        "SGLANG_OPT_USE_ONLINE_COMPRESS off and the default V4 KV layout and fp32 compress states \
         (their defaults; kvlint does not see the environment)",
    );
    let spec = args.text("speculative_algorithm").is_some();
    let layers = ratios.len() as f64;
    let (b, fixed) = if modern {
        let backend = args.text("dsv4_attn_backend").unwrap_or("auto");
        if s.cc >= 10 || !matches!(backend, "auto" | "flashmla") || spec {
            return Err(refuse(
                "0.5.23 on Blackwell, with another --dsv4-attn-backend or with speculative decoding picks KV layouts and rings kvlint does not model; it models the FlashMLA V4 layout on Hopper".into(),
            ));
        }
        let mrr = args
            .int("max_running_requests")
            .unwrap_or(DSV4_MAX_RUNNING_REQUESTS);
        let per_worker = (mrr / i64::from(s.attn_dp.max(1))).max(1) as u64;
        (
            bytes_per_full_token_0_5_23(c, ratios, swa_ratio),
            c128_state_fixed_bytes(c, ratios, per_worker),
        )
    } else {
        let b = bytes_per_full_token_0_5_12(c, ratios, swa_ratio, spec);
        // One draft layer: tokens = avail / (bpft · (T + 1) / T).
        let b = if spec { b * (layers + 1.0) / layers } else { b };
        (b, 0.0)
    };
    Ok(Dsv4 {
        bytes_per_full_token: b,
        fixed_bytes: fixed,
        swa_ratio,
        prefill_swa_cap: *v < V0_5_13 && s.role == Role::Prefill,
        how: format!(
            "DSv4: {b:.2} B per full token over {} layers ({} with ratio 4, {} with ratio 128), SWA pool {swa_ratio} of the full pool, \
             {fixed} B of c128 states per request slot set apart \
             (pool_configurator.py :: DSV4PoolConfigurator._get_bytes_per_full_token)",
            ratios.len(),
            Compressed::layers_with(ratios, 4),
            Compressed::layers_with(ratios, 128)
        ),
    })
}

/// fp32 compress-state bytes per slot: c4 keeps (kv, score) over two overlapping windows of the
/// attention head and of the indexer head, c128 (kv, score) once.
fn states(c: &Compressed) -> (f64, f64, f64) {
    let head = f64::from(c.qk_nope_head_dim + c.qk_rope_head_dim);
    (
        2.0 * 2.0 * head * 4.0,
        2.0 * 2.0 * f64::from(c.index_head_dim) * 4.0,
        2.0 * head * 4.0,
    )
}

/// `get_dsv4_indexer_bytes_per_token` without FP4: fp8 keys and an fp32 scale per 128.
fn indexer_bytes(c: &Compressed) -> f64 {
    f64::from(c.index_head_dim + c.index_head_dim / 128 * 4)
}

/// 0.5.12 `DSV4PoolConfigurator._get_bytes_per_full_token`, HiSparse and online c128 off.
fn bytes_per_full_token_0_5_12(c: &Compressed, ratios: &[u32], swa_ratio: f64, spec: bool) -> f64 {
    // One FlashMLA latent slot: fp8 nope, bf16 rope, 8 scale bytes.
    let kv = f64::from(c.qk_nope_head_dim + c.qk_rope_head_dim * 2 + 8);
    let (c4_state, c4_indexer_state, c128_state) = states(c);
    // `deepseek_v4_memory_pool.py :: get_compress_state_ring_size`.
    let (c4_ring, c128_ring) = if spec { (16.0, 256.0) } else { (8.0, 128.0) };
    let window = f64::from(c.window.max(1));
    let (c4_ratio, c128_ratio) = (c4_ring / window, c128_ring / window);
    let all = ratios.len() as f64;
    let ca4 = f64::from(Compressed::layers_with(ratios, 4));
    let ca128 = f64::from(Compressed::layers_with(ratios, 128));
    swa_ratio * kv * all
        + 0.25 * kv * ca4
        + kv / 128.0 * ca128
        + 0.25 * indexer_bytes(c) * ca4
        + swa_ratio * c4_ratio * c4_state * ca4
        + swa_ratio * c128_ratio * c128_state * ca128
        + swa_ratio * c4_ratio * c4_indexer_state * ca4
}

/// One slot of the V4 KV layout, paged: `KVLayout.V4.page_bytes(p) / p` with `p` the page of
/// that ratio (`_get_paged_kv_bytes_per_token`): 584-byte rows padded to 576-byte strides
/// (kernels/ops/attention/dsv4/kv_layout.py).
fn v4_paged_bytes(ratio: u32) -> f64 {
    let p = u64::from(PAGE / ratio.max(1));
    let raw = p * 584;
    (raw.div_ceil(576) * 576) as f64 / p as f64
}

/// 0.5.23 `_get_bytes_per_full_token` in ratio mode (`swa_ratio · _get_bytes_per_swa_token()`
/// plus `_compressed_bytes_per_full_token` per owning layer), FlashMLA V4 layout, non-unified.
fn bytes_per_full_token_0_5_23(c: &Compressed, ratios: &[u32], swa_ratio: f64) -> f64 {
    let (c4_state, c4_indexer_state, _) = states(c);
    let ca4 = f64::from(Compressed::layers_with(ratios, 4));
    let ca128 = f64::from(Compressed::layers_with(ratios, 128));
    // The c4 ring (8 rows) is addressed per SWA page.
    let swa = v4_paged_bytes(0) * ratios.len() as f64
        + 8.0 / f64::from(PAGE) * (c4_state + c4_indexer_state) * ca4;
    let c4 = 0.25 * v4_paged_bytes(4) + 0.25 * indexer_bytes(c);
    let c128 = v4_paged_bytes(128) / 128.0;
    swa_ratio * swa + c4 * ca4 + c128 * ca128
}

/// 0.5.23 `_get_c128_state_fixed_bytes`: `(slots · 128 + 128 + 1)` rows rounded up to 128, of
/// `2 · head` fp32 values, on every ratio-128 layer; slots = max running requests + 1.
fn c128_state_fixed_bytes(c: &Compressed, ratios: &[u32], per_worker: u64) -> f64 {
    let rows = ((per_worker + 1) * 128 + 128 + 1).div_ceil(128) * 128;
    let (_, _, c128_state) = states(c);
    rows as f64 * c128_state * f64::from(Compressed::layers_with(ratios, 128))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::testing::args;
    use crate::engine::SettingValue::{Float, Int, Text};
    use crate::launch::Engine;
    use crate::source::FileId;

    /// The public deepseek-ai/DeepSeek-V4-Flash config.json: 43 layers and 46 `compress_ratios`
    /// (21 of ratio 4, 20 of ratio 128), head_dim 512, rope 64, window 128, index_head_dim 128.
    fn flash() -> Geometry {
        let json = include_str!("../../../fixtures/INP008/deepseek-v4-flash.json");
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        Geometry::from_config_json("deepseek-ai/DeepSeek-V4-Flash", "config.json", &v).unwrap()
    }

    fn setup(role: Role, pp: u32, cc: u32) -> Setup {
        let at = Loc::new(FileId(0), 0..0);
        Setup {
            role,
            pp,
            attn_dp: 1,
            cc,
            at,
        }
    }

    fn on(
        version: &str,
        s: &Setup,
        pairs: &[(&str, crate::engine::SettingValue)],
    ) -> Result<Dsv4, Vec<Finding>> {
        let m = flash();
        let c = m.compressed.clone().unwrap();
        let a = args(Engine::Sglang, version, pairs);
        pool(&a, &m, &c, s, &mut Notes::default())
    }

    /// On an H200 (compute capability 9), one pipeline stage.
    fn coefficient(
        version: &str,
        role: Role,
        pairs: &[(&str, crate::engine::SettingValue)],
    ) -> Result<Dsv4, Vec<Finding>> {
        on(version, &setup(role, 1, 9), pairs)
    }

    /// Worked by hand from `_get_bytes_per_full_token` (0.5.12): kv = 448 + 2·64 + 8 = 584 B,
    /// indexer = 128 + 4 = 132 B, states fp32 over head 512: c4 2·2·512·4 = 8,192 B, c128
    /// 2·512·4 = 4,096 B, c4 indexer 2·2·128·4 = 2,048 B; rings 8 and 128 over the window 128.
    /// 0.1·584·46 + 584/4·21 + 584/128·20 + 132/4·21 + 0.1·(8/128)·8,192·21 +
    /// 0.1·(128/128)·4,096·20 + 0.1·(8/128)·2,048·21, that is
    /// 2,686.4 + 3,066 + 91.25 + 693 + 1,075.2 + 8,192 + 268.8 = 16,072.65 B.
    #[test]
    fn bytes_per_full_token_of_v4_flash_match_the_hand_worked_sum() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        let d = coefficient("0.5.12", Role::Unified, &[]).unwrap();
        assert!(close(d.bytes_per_full_token, 16_072.65), "{}", d.how);
        // 0.5.13 slices the ratios to the 43 decoder layers: 0.1·584·43 = 2,511.2 replaces
        // 2,686.4.
        let d = coefficient("0.5.13", Role::Unified, &[]).unwrap();
        assert!(close(d.bytes_per_full_token, 15_897.45));
        // Speculative: rings 16 and 256 (c4 states ×2, c128 ×2), then × (46 + 1) / 46:
        // (2,686.4 + 3,066 + 91.25 + 693 + 2,150.4 + 16,384 + 537.6) · 47/46.
        let eagle = [("speculative_algorithm", Text("EAGLE".into()))];
        let d = coefficient("0.5.12", Role::Unified, &eagle).unwrap();
        assert!(close(d.bytes_per_full_token, 25_608.65 * 47.0 / 46.0));
        // The ServerArgs default 0.8 reads as "not given" and becomes 0.1; 0.3 is kept:
        // 0.3·584·46 + 3,066 + 91.25 + 693 + 3·1,075.2 + 3·8,192 + 3·268.8 = 40,517.45.
        let d = coefficient(
            "0.5.12",
            Role::Unified,
            &[("swa_full_tokens_ratio", Float(0.8))],
        );
        assert!(close(d.unwrap().bytes_per_full_token, 16_072.65));
        let d = coefficient(
            "0.5.12",
            Role::Unified,
            &[("swa_full_tokens_ratio", Float(0.3))],
        );
        assert!(close(d.unwrap().bytes_per_full_token, 40_517.45));
    }

    /// `_compute_dsv4_sizes`: swa = int(full · 0.1) // 256 · 256; a 0.5.12 prefill server
    /// admits up to the SWA pool, a 0.5.13 one (and any unified server) up to the full pool.
    #[test]
    fn a_0_5_12_prefill_server_is_capped_at_its_sliding_window_pool() {
        let full = 5_925_120;
        let prefill = coefficient("0.5.12", Role::Prefill, &[]).unwrap();
        assert_eq!(prefill.swa_tokens(full), 592_384); // 592,512 floored to a 256 page
        assert_eq!(prefill.usable(full), 592_384);
        let unified = coefficient("0.5.12", Role::Unified, &[]).unwrap();
        assert_eq!(unified.usable(full), full);
        let later = coefficient("0.5.13", Role::Prefill, &[]).unwrap();
        assert_eq!(later.usable(full), full);
    }

    #[test]
    fn releases_and_settings_outside_the_model_are_refused_by_name() {
        for v in ["0.5.11", "0.5.14", "0.5.22"] {
            let Err(f) = coefficient(v, Role::Unified, &[]) else {
                panic!("{v} planned");
            };
            assert_eq!(f[0].rule, "INP008", "{v}");
        }
        let hisparse = [("enable_hisparse", crate::engine::SettingValue::Flag(true))];
        assert!(coefficient("0.5.12", Role::Unified, &hisparse).is_err());
        let pp2 = [("pp_size", Int(2))];
        assert!(on("0.5.13", &setup(Role::Unified, 2, 9), &pp2).is_err());
        // 0.5.23: Blackwell (V4.1 layouts, flashmla_mega), other backends and MTP are refused.
        assert!(on("0.5.23", &setup(Role::Unified, 1, 10), &[]).is_err());
        let trtllm = [("dsv4_attn_backend", Text("trtllm".into()))];
        assert!(coefficient("0.5.23", Role::Unified, &trtllm).is_err());
        let eagle = [("speculative_algorithm", Text("EAGLE".into()))];
        assert!(coefficient("0.5.23", Role::Unified, &eagle).is_err());
    }

    /// Worked by hand from 0.5.23 `DSV4PoolConfigurator` (ratio mode, FlashMLA V4 layout):
    /// paged slots, 584-byte rows in 576-byte strides: SWA page 256 → ⌈256·584/576⌉·576/256 =
    /// 260·576/256 = 585 B; ratio 4, page 64 → 65·576/64 = 585 B; ratio 128, page 2 → 3·576/2 =
    /// 864 B. Bytes per SWA token: 585·43 + (8/256)·(8,192 + 2,048)·21 = 25,155 + 6,720 =
    /// 31,875. Compressed: (585/4 + 132/4)·21 + 864/128·20 = 3,764.25 + 135. Per full token:
    /// 0.1·31,875 + 3,899.25 = 7,086.75 B. Fixed c128 states at 256 requests: (257·128 + 129)
    /// = 33,025 rows → 33,152 (a multiple of 128) × 2·512·4 B × 20 layers = 2,715,811,840 B.
    #[test]
    fn release_0_5_23_sizes_v4_flash_in_ratio_mode() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        let d = coefficient("0.5.23", Role::Prefill, &[]).unwrap();
        assert!(close(d.bytes_per_full_token, 7_086.75), "{}", d.how);
        assert!(close(d.fixed_bytes, 2_715_811_840.0));
        // No prefill cap after 0.5.12; the ServerArgs default 0.8 is an explicit ratio now.
        assert_eq!(d.usable(5_925_120), 5_925_120);
        let d = coefficient(
            "0.5.23",
            Role::Unified,
            &[("swa_full_tokens_ratio", Float(0.8))],
        );
        assert!(close(
            d.unwrap().bytes_per_full_token,
            0.8 * 31_875.0 + 3_899.25
        ));
        // 64 requests: (65·128 + 129) = 8,449 rows → 8,576 × 4,096 B × 20.
        let d = coefficient(
            "0.5.23",
            Role::Unified,
            &[("max_running_requests", Int(64))],
        );
        assert!(close(d.unwrap().fixed_bytes, 8_576.0 * 4_096.0 * 20.0));
    }
}
