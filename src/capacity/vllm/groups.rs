//! The KV cache groups of one rank and what one request takes of them:
//! `vllm/v1/core/kv_cache_utils.py :: get_kv_cache_groups`, `unify_kv_cache_spec_page_size`,
//! `_get_kv_cache_groups_uniform_page_size` and `get_max_concurrency_for_kv_cache_config`.

use super::{busiest_stage, V0_17, V0_24, V0_33};
use crate::model::{Geometry, LayerKind};
use crate::version::Version;

/// One KV cache spec kind and how many layers of it the binding rank holds.
pub(super) struct LayerGroup {
    pub(super) kind: LayerKind,
    pub(super) layers: u32,
    /// Page bytes of one layer for one block.
    pub(super) page: f64,
    /// Tokens per block as a multiple of the launch's block size: a layer whose page is smaller
    /// takes more tokens per block once pages are unified (`unify_kv_cache_spec_page_size`).
    pub(super) mult: u32,
}

/// Bytes per token of one attention layer on one rank (`AttentionSpec.page_size_bytes / block_size`).
pub(super) fn layer_bytes(m: &Geometry, tp: u32, dcp: u32, kv: &str, kvb: f64) -> f64 {
    if let Some(mla) = &m.mla {
        let latent = if kv == "fp8_ds_mla" {
            656.0
        } else {
            f64::from(mla.kv_lora_rank + mla.qk_rope_head_dim) * kvb
        };
        return latent / f64::from(dcp.max(1));
    }
    let heads = (m.num_kv_heads / tp.max(1)).max(1);
    2.0 * f64::from(heads) * f64::from(m.head_dim) * kvb
}

/// Bytes per token of one sliding-window layer where its heads differ from the full-attention
/// layers' (Gemma 4: 16 KV heads of 256 on sliding layers, 4 of 512 on full ones): each
/// `Attention` of `models/gemma4.py :: Gemma4Attention.__init__` gets its own `num_kv_heads` and
/// `head_dim`, so its `SlidingWindowSpec` has its own page.
fn window_layer_bytes(m: &Geometry, tp: u32, kvb: f64) -> Option<f64> {
    let s = m.swa_heads.as_ref().filter(|_| m.mla.is_none())?;
    let heads = (s.num_kv_heads / tp.max(1)).max(1);
    Some(f64::from(heads) * f64::from(s.head_dim + s.v_head_dim) * kvb)
}

/// `unify_kv_cache_spec_page_size`: the smaller page takes `ratio` times the block size so that
/// both pages match; a page that does not divide the larger one is left as it is (vLLM pads it
/// only for backends that index by block stride).
fn unify(a: &mut LayerGroup, b: &mut LayerGroup) {
    let (small, large) = if a.page < b.page { (a, b) } else { (b, a) };
    let ratio = large.page / small.page;
    if small.page > 0.0 && ratio > 1.0 && (ratio - ratio.round()).abs() < 1e-9 {
        small.mult *= ratio.round() as u32;
        small.page = large.page;
    }
}

/// How a launch lays out its KV cache on one rank.
pub(super) struct Shape<'a> {
    pub(super) tp: u32,
    pub(super) pp: u32,
    pub(super) dcp: u32,
    pub(super) kv: &'a str,
    pub(super) kvb: f64,
    pub(super) bs: u32,
    /// The hybrid KV cache manager (separate groups for window layers) is on.
    pub(super) hma: bool,
    pub(super) version: &'a Version,
    /// The drafter's MTP attention layers counted with the full-attention layers
    /// (`hybrid::mtp_group_layers`); they sit on the last PP stage, counted here on the busiest.
    pub(super) mtp_layers: u32,
}

/// The layers that hold their own KV (0.24.0, 0.33.0): Gemma 3n / Gemma 4 point their last
/// `num_kv_shared_layers` at an earlier layer's cache (`models/gemma3n.py ::
/// Gemma3nAttention.__init__`, `models/gemma4.py :: Gemma4Attention.__init__`:
/// `kv_sharing_target_layer_name`) and `v1/worker/gpu_model_runner.py :: get_kv_cache_spec`
/// gives those no spec. Gemma 3n's targets are layers `first - 2` and `first - 1`: with fewer than
/// two owners some keep their own cache, and before 0.24.0 the code is unread: all counted there.
pub(super) fn kv_layers<'a>(m: &'a Geometry, v: &Version) -> &'a [LayerKind] {
    let own = m.layers.len().saturating_sub(m.kv_shared_layers as usize);
    if *v >= V0_24 && own >= 2 {
        &m.layers[..own]
    } else {
        &m.layers
    }
}

/// Layer groups of the binding PP stage (`get_pp_indices`: the remainder goes to later stages).
pub(super) fn groups(m: &Geometry, sh: &Shape) -> Vec<LayerGroup> {
    let (bs, hma) = (sh.bs, sh.hma);
    let per_token = layer_bytes(m, sh.tp, sh.dcp, sh.kv, sh.kvb);
    let page = per_token * f64::from(bs);
    let window_page = window_layer_bytes(m, sh.tp, sh.kvb).map_or(page, |b| b * f64::from(bs));
    let stage = |n: u32| n.div_ceil(sh.pp.max(1));
    let layers = kv_layers(m, sh.version);
    let full = layers
        .iter()
        .filter(|l| matches!(l, LayerKind::Full))
        .count() as u32;
    let mut out = Vec::new();
    let windowed: Vec<LayerKind> = layers
        .iter()
        .copied()
        .filter(|l| matches!(l, LayerKind::Sliding { .. } | LayerKind::Chunked { .. }))
        .collect();
    // Nemotron-NAS spreads its attention layers unevenly over the decoder, so the busiest
    // stage is counted from `get_pp_indices`' split rather than from an even share.
    let full_on_stage = if m.layers.contains(&LayerKind::NoAttention) {
        busiest_stage(m, sh.pp, |l| matches!(l, LayerKind::Full))
    } else {
        stage(full)
    } + sh.mtp_layers;
    if hma && !windowed.is_empty() {
        let mut f = LayerGroup {
            kind: LayerKind::Full,
            layers: full_on_stage,
            page,
            mult: 1,
        };
        let mut w = LayerGroup {
            kind: windowed[0],
            layers: stage(windowed.len() as u32),
            page: window_page,
            mult: 1,
        };
        unify(&mut f, &mut w);
        out.extend([f, w]);
    } else {
        let attn = full + if hma { 0 } else { windowed.len() as u32 };
        // Without the hybrid manager every window layer becomes a full-attention spec
        // (`unify_hybrid_kv_cache_specs`) and all share one group whose page is the sum of the
        // layers' own pages (`UniformTypeKVCacheSpecs.page_size_bytes`): here their mean.
        let window = if hma { 0 } else { windowed.len() as u32 };
        let mean = (f64::from(full) * page + f64::from(window) * window_page)
            / f64::from((full + window).max(1));
        out.push(LayerGroup {
            kind: LayerKind::Full,
            layers: if windowed.is_empty() {
                full_on_stage
            } else {
                stage(attn)
            },
            page: mean,
            mult: 1,
        });
    }
    let linear = m.state_layers();
    if linear > 0 {
        out.push(LayerGroup {
            kind: LayerKind::Linear,
            layers: stage(linear),
            page,
            mult: 1,
        });
    }
    if let Some(dsa) = m.dsa.as_ref().filter(|_| m.mla.is_some()) {
        // DeepSeek-V3.2 indexer keys: fp8 plus an fp32 scale per 128 elements, one spec per layer.
        let idx = f64::from(dsa.index_head_dim + dsa.index_head_dim / 128 * 4) * f64::from(bs);
        out[0].page += idx * f64::from(stage(dsa.indexer_layers)) / f64::from(stage(full).max(1));
    }
    out
}

/// The request-capacity model of `_get_kv_cache_groups_uniform_page_size`: each spec kind is
/// split into groups of `group_size` layers; one physical block holds `group_size` pages.
pub(super) struct Grouping {
    pub(super) group_size: u32,
    /// (kind, number of groups of that kind, tokens per block as a multiple of the block size)
    pub(super) kinds: Vec<(LayerKind, u32, u32)>,
    pub(super) bytes_per_block: f64,
}

pub(super) fn grouping(groups: &[LayerGroup]) -> Grouping {
    let sizes: Vec<u32> = groups.iter().map(|g| g.layers).filter(|n| *n > 0).collect();
    let (min, max) = (
        sizes.iter().copied().min().unwrap_or(1),
        sizes.iter().copied().max().unwrap_or(1),
    );
    let group_size = if f64::from(max) < 1.5 * f64::from(min) {
        max
    } else {
        min
    };
    let kinds = groups
        .iter()
        .filter(|g| g.layers > 0)
        .map(|g| (g.kind, g.layers.div_ceil(group_size), g.mult))
        .collect();
    let page = groups.iter().map(|g| g.page).fold(0.0, f64::max);
    Grouping {
        group_size,
        kinds,
        bytes_per_block: f64::from(group_size) * page,
    }
}

/// Blocks one request of `len` tokens needs, summed over groups (`max_memory_usage_bytes`).
pub(super) fn blocks_per_request(
    g: &Grouping,
    len: u64,
    bs: u32,
    in_flight: u64,
    v: &Version,
    prefix: bool,
) -> u64 {
    let bs = u64::from(bs.max(1));
    g.kinds
        .iter()
        .map(|(kind, n, mult)| {
            let bs = bs * u64::from(*mult);
            let per = match kind {
                LayerKind::Full => len.div_ceil(bs),
                // `kv_cache_interface.py :: SlidingWindowSpec.max_memory_usage_bytes` (0.17.0,
                // 0.20.2, 0.26.0, 0.33.0): ⌈min(window − 1 + in flight, len) / bs⌉ + 1, the
                // window not starting on a block boundary, even when it spans the request;
                // from 0.17.0 `ChunkedLocalAttentionSpec` takes the chunk plus in flight with no
                // extra block; before, kvlint prices chunked layers as sliding ones.
                LayerKind::Chunked { size: w } if *v >= V0_17 => {
                    (u64::from(*w) + in_flight).min(len).div_ceil(bs)
                }
                LayerKind::Sliding { window: w } | LayerKind::Chunked { size: w } => {
                    let n = (u64::from(*w).saturating_sub(1) + in_flight).min(len);
                    n.div_ceil(bs) + 1
                }
                // `MambaSpec.max_memory_usage_bytes` (0.30, 0.33): one state block, two in
                // "align" mode, which prefix caching turns on (a 0.24 Qwen3.6 log: 63 + 3 × 2).
                LayerKind::Linear => 1 + u64::from(prefix),
                LayerKind::NoAttention => 0,
            };
            per * u64::from(*n)
        })
        .sum()
}

/// Largest context one request can use with `blocks` free blocks (the startup check of
/// `_check_enough_kv_cache_memory`, which keeps one null block back from 0.33).
pub(super) fn max_len(
    g: &Grouping,
    blocks: u64,
    bs: u32,
    in_flight: u64,
    v: &Version,
    prefix: bool,
) -> u64 {
    let avail = if *v >= V0_33 {
        blocks.saturating_sub(1)
    } else {
        blocks
    };
    // Full-attention layers only: `blocks_per_request` is groups × ⌈len / bs⌉, so the largest
    // length is whole blocks per group, which the search finds in 32 steps.
    if g.kinds
        .iter()
        .all(|(k, _, m)| matches!(k, LayerKind::Full) && *m == 1)
    {
        let groups: u64 = g.kinds.iter().map(|(_, n, _)| u64::from(*n)).sum();
        return match avail.checked_div(groups) {
            Some(per_group) => per_group
                .saturating_mul(u64::from(bs.max(1)))
                .min(MAX_LEN_LIMIT),
            None => MAX_LEN_LIMIT,
        };
    }
    search_len(g, avail, bs, in_flight, v, prefix)
}

/// The longest length [`max_len`] considers.
pub(super) const MAX_LEN_LIMIT: u64 = 1 << 32;

/// Largest length up to [`MAX_LEN_LIMIT`] whose request fits in `avail` blocks, by bisection
/// (`blocks_per_request` grows with the length).
pub(super) fn search_len(
    g: &Grouping,
    avail: u64,
    bs: u32,
    in_flight: u64,
    v: &Version,
    prefix: bool,
) -> u64 {
    let (mut lo, mut hi) = (0u64, MAX_LEN_LIMIT);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if blocks_per_request(g, mid, bs, in_flight, v, prefix) <= avail {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}
