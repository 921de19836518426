//! DeepSeek-V4's pools in SGLang 0.5.12 and 0.5.13: `model_executor/pool_configurator.py ::
//! DSV4PoolConfigurator` ("DSV4 memory calculation"). One coefficient, bytes per full-pool
//! token, covers the sliding-window pool (a `swa_full_tokens_ratio` share of the full tokens),
//! the ratio-4 and ratio-128 compressed latents, the ratio-4 indexer keys and the compress
//! states, which are addressed per SWA page. A PD prefill server of 0.5.12 admits no prompt
//! longer than its SWA pool (`disaggregation/prefill.py :: PrefillBootstrapQueue.__init__`,
//! removed in 0.5.13 by sgl-project/sglang#26607).
//! Later releases size these pools differently (request-cap SWA mode, V4.1 layouts, unified
//! rings): they are refused by name until modelled.

use super::{Role, V0_5_12, V0_5_13, V0_5_14};
use crate::capacity::{page_floor, Notes};
use crate::engine::EngineArgs;
use crate::finding::Finding;
use crate::model::{Compressed, Geometry};
use crate::source::Loc;

/// `deepseek_v4_hook.py :: apply_deepseek_v4_defaults` (0.5.12): `page_size = 256`.
pub(super) const PAGE: u32 = 256;
/// `apply_deepseek_v4_defaults`: a `--swa-full-tokens-ratio` equal to the ServerArgs default
/// (0.8) becomes 0.1.
const SERVER_ARGS_SWA_RATIO: f64 = 0.8;
const DSV4_SWA_RATIO: f64 = 0.1;

/// How one SGLang release sizes a DeepSeek-V4 server.
pub(super) struct Dsv4 {
    /// `bytes_per_full_token`, speculative inflation included.
    pub(super) bytes_per_full_token: f64,
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
    role: Role,
    pp: u32,
    at: Loc,
    notes: &mut Notes,
) -> Result<Dsv4, Vec<Finding>> {
    let v = &args.version;
    let refuse = |why: String| {
        vec![Finding::new("INP008", Some(at))
            .var("model", &m.id)
            .var("architecture", m.architectures.first().map_or("", String::as_str))
            .var("why", why)
            .var(
                "need",
                "SGLang's DSv4 pool calculation of that release (pool_configurator.py :: DSV4PoolConfigurator)",
            )
            .label("KV layout not modelled")]
    };
    if *v < V0_5_12 || *v >= V0_5_14 {
        return Err(refuse(format!(
            "kvlint models SGLang's DeepSeek-V4 pools of 0.5.12 and 0.5.13 only, not {v}"
        )));
    }
    if args.flag("enable_hisparse") {
        return Err(refuse(
            "--enable-hisparse shrinks the c4 pool by the HiSparse host ratio, which kvlint does not read".into(),
        ));
    }
    // 0.5.13 slices compress_ratios to the PP stage (`cfg.compress_ratios[start:end]`); 0.5.12
    // budgets the whole list on every stage.
    let ratios: &[u32] = if *v >= V0_5_13 {
        if pp > 1 {
            return Err(refuse(
                "0.5.13 sizes each pipeline stage from its own layers; kvlint does not split DeepSeek-V4 stages".into(),
            ));
        }
        &c.ratios[..c.ratios.len().min(m.num_layers as usize)]
    } else {
        &c.ratios
    };
    let given = args.float("swa_full_tokens_ratio");
    let swa_ratio = match given {
        None => DSV4_SWA_RATIO,
        Some(r) if r == SERVER_ARGS_SWA_RATIO => DSV4_SWA_RATIO,
        Some(r) => r,
    };
    notes.exact(
        "swa_full_tokens_ratio",
        swa_ratio,
        "0.1 for DeepSeek-V4 unless another value is given (deepseek_v4_hook.py :: apply_deepseek_v4_defaults)",
    );
    let spec = args.text("speculative_algorithm").is_some();
    let mut b = bytes_per_full_token(c, ratios, swa_ratio, spec);
    let layers = ratios.len() as f64;
    if spec {
        // One draft layer: tokens = avail / (bpft · (T + 1) / T).
        b *= (layers + 1.0) / layers;
    }
    notes.exact(
        "dsv4_online_c128",
        0.0,
        "SGLANG_OPT_USE_ONLINE_COMPRESS off (its default; kvlint does not see the environment)",
    );
    Ok(Dsv4 {
        bytes_per_full_token: b,
        swa_ratio,
        prefill_swa_cap: *v < V0_5_13 && role == Role::Prefill,
        how: format!(
            "DSv4: {b:.2} B per full token over {} layers ({} with ratio 4, {} with ratio 128), SWA pool {swa_ratio} of the full pool \
             (pool_configurator.py :: DSV4PoolConfigurator._get_bytes_per_full_token)",
            ratios.len(),
            Compressed::layers_with(ratios, 4),
            Compressed::layers_with(ratios, 128)
        ),
    })
}

/// `DSV4PoolConfigurator._get_bytes_per_full_token` (0.5.12), hisparse and online c128 off.
fn bytes_per_full_token(c: &Compressed, ratios: &[u32], swa_ratio: f64, spec: bool) -> f64 {
    // One FlashMLA latent slot: fp8 nope, bf16 rope, 8 scale bytes.
    let kv = f64::from(c.qk_nope_head_dim + c.qk_rope_head_dim * 2 + 8);
    let ihd = c.index_head_dim;
    let indexer = f64::from(ihd + ihd / 128 * 4);
    let head = f64::from(c.qk_nope_head_dim + c.qk_rope_head_dim);
    // fp32 states: c4 keeps (kv, score) for two overlapping windows, c128 one.
    let c4_state = 2.0 * 2.0 * head * 4.0;
    let c128_state = 2.0 * head * 4.0;
    let c4_indexer_state = 2.0 * 2.0 * f64::from(ihd) * 4.0;
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
        + 0.25 * indexer * ca4
        + swa_ratio * c4_ratio * c4_state * ca4
        + swa_ratio * c128_ratio * c128_state * ca128
        + swa_ratio * c4_ratio * c4_indexer_state * ca4
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

    fn coefficient(
        version: &str,
        role: Role,
        pairs: &[(&str, crate::engine::SettingValue)],
    ) -> Result<Dsv4, Vec<Finding>> {
        let m = flash();
        let c = m.compressed.clone().unwrap();
        let a = args(Engine::Sglang, version, pairs);
        let at = Loc::new(FileId(0), 0..0);
        pool(&a, &m, &c, role, 1, at, &mut Notes::default())
    }

    /// Worked by hand from `_get_bytes_per_full_token` (0.5.12): kv = 448 + 2·64 + 8 = 584 B,
    /// indexer = 128 + 4 = 132 B, states fp32 over head 512: c4 2·2·512·4 = 8,192 B, c128
    /// 2·512·4 = 4,096 B, c4 indexer 2·2·128·4 = 2,048 B; rings 8 and 128 over the window 128.
    /// 0.1·584·46 + 584/4·21 + 584/128·20 + 132/4·21 + 0.1·(8/128)·8,192·21
    /// + 0.1·(128/128)·4,096·20 + 0.1·(8/128)·2,048·21
    /// = 2,686.4 + 3,066 + 91.25 + 693 + 1,075.2 + 8,192 + 268.8 = 16,072.65 B.
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
        for v in ["0.5.11", "0.5.14", "0.5.23"] {
            let Err(f) = coefficient(v, Role::Unified, &[]) else {
                panic!("{v} planned");
            };
            assert_eq!(f[0].rule, "INP008", "{v}");
        }
        let hisparse = [("enable_hisparse", crate::engine::SettingValue::Flag(true))];
        assert!(coefficient("0.5.12", Role::Unified, &hisparse).is_err());
        let m = flash();
        let a = args(Engine::Sglang, "0.5.13", &[("pp_size", Int(2))]);
        let at = Loc::new(FileId(0), 0..0);
        let c = m.compressed.clone().unwrap();
        assert!(pool(&a, &m, &c, Role::Unified, 2, at, &mut Notes::default()).is_err());
    }
}
