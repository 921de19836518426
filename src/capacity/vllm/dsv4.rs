//! DeepSeek-V4's KV cache in vLLM 0.25.0 (the FlashMLA `fp8_ds_mla` layout on CUDA). Each
//! decoder layer registers several cache layers, each with its own spec
//! (`models/deepseek_v4/attention.py`, `compressor.py`, `v1/attention/backends/mla/sparse_swa.py`):
//! a sliding window of raw latents on every layer, the compressed latents of ratio-4 and
//! ratio-128 layers, the ratio-4 indexer keys, and the fp32 compressor states of both ratios
//! and of the indexer. `v1/core/kv_cache_utils.py` groups them into one full-attention group
//! and sliding groups that share one packed block pool (`group_and_unify_kv_cache_specs`,
//! `_get_kv_cache_groups_uniform_groups`, `_get_kv_cache_config_packed`). Other releases (0.20.0
//! to 0.24.0 and 0.26.0 on) change these specs and are refused by name (INP008).

use super::super::Notes;
use crate::engine::EngineArgs;
use crate::finding::Finding;
use crate::gpu::GpuSpec;
use crate::model::{Compressed, Geometry};
use crate::source::Loc;
use crate::version::Version;
use std::collections::BTreeMap;

/// The one release whose DeepSeek-V4 specs kvlint mirrors.
const MODELLED: Version = Version::new(0, 25, 0);
/// `sparse_swa.py :: DeepseekSparseSWABackend.get_preferred_block_size`: 256. The SWA cache
/// registers first (layer 0 has ratio 0), so `platforms/interface.py ::
/// update_block_size_for_backend` takes its backend's preference when `--block-size` is unset;
/// the packing assumes it ("The C4A KV block shape [256//4, head_dim]").
const BLOCK: u32 = 256;
/// `DeepseekV4SWACache.__init__`: `self.block_size = 64`.
const SWA_BLOCK: u32 = 64;
/// `MLAAttentionSpec.real_page_size_bytes` for `fp8_ds_mla` and `model_version
/// "deepseek_v4"`: 448 B NoPE + 128 B RoPE + 8 B scale per stored token.
const V4_SLOT: u64 = 584;
/// `alignment=576` of every spec under `fp8_ds_mla` (`_apply_alignment_padding`).
const ALIGN: u64 = 576;

/// `_apply_alignment_padding`: `round_up(real_page_size_bytes, alignment)`.
fn aligned(raw: u64) -> u64 {
    raw.div_ceil(ALIGN) * ALIGN
}

/// One spec kind: its page and which group key it belongs to.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Key {
    /// `MLAAttentionSpec` (`FullAttentionSpec.max_memory_usage_bytes`: ⌈len / 256⌉ pages).
    Full,
    /// `SlidingWindowMLASpec` grouped by `(block_size, sliding_window)`.
    Sliding { block: u32, window: u32 },
}

/// One KV cache group after `_get_kv_cache_groups_uniform_groups`.
#[derive(Debug, PartialEq)]
pub(super) struct Group {
    key: Key,
    /// Page bytes of its layers, padded to the full group's page sizes.
    pages: Vec<u64>,
}

impl Group {
    /// `UniformTypeKVCacheSpecs.page_size_bytes`: the sum of its layers' pages.
    fn page_sum(&self) -> u64 {
        self.pages.iter().sum()
    }

    /// `UniformTypeKVCacheSpecs.get_num_layer_tuples`: how many layers share the most common page.
    fn tuples(&self) -> u64 {
        let mut count: BTreeMap<u64, u64> = BTreeMap::new();
        for p in &self.pages {
            *count.entry(*p).or_default() += 1;
        }
        count.values().copied().max().unwrap_or(0)
    }

    /// `max_memory_usage_pages`: pages one request of `len` tokens takes (0.25.0
    /// `SlidingWindowSpec.max_admission_blocks_per_request`: ⌈min(window − 1 + batched, len) /
    /// block⌉ + 1).
    fn pages_for(&self, len: u64, batched: u64) -> u64 {
        match self.key {
            Key::Full => len.div_ceil(u64::from(BLOCK)),
            Key::Sliding { block, window } => {
                (u64::from(window) - 1 + batched)
                    .min(len)
                    .div_ceil(u64::from(block))
                    + 1
            }
        }
    }
}

/// The packed KV cache of one rank.
#[derive(Debug)]
pub(super) struct Layout {
    pub(super) groups: Vec<Group>,
    /// `_get_kv_cache_config_packed`: `total_num_bytes_per_block`, the bytes one block id
    /// takes across every page-size slot.
    pub(super) bytes_per_block: u64,
    /// `_max_memory_usage_bytes_from_groups` (the startup check): bytes per page of a request,
    /// `num_layer_tuples × sum(full_mla_spec.get_page_sizes())`.
    pub(super) check_bytes_per_page: u64,
}

/// `_approximate_gcd(values, lower_bound)`: the chunk size in [lower, max] with the least
/// upward padding, ties to the larger.
fn approximate_gcd(values: &[u64], lower: u64) -> u64 {
    let max = values.iter().copied().max().unwrap_or(1);
    let mut best = (lower.max(1), u64::MAX);
    for d in lower.max(1)..=max {
        let pad: u64 = values.iter().map(|x| (d - x % d) % d).sum();
        if pad <= best.1 {
            best = (d, pad);
        }
    }
    best.0
}

/// The spec pages of the decoder layers: (group key, page) per cache layer, in registration
/// order (attention, its SWA cache, its compressor, then the indexer's cache and compressor).
fn specs(c: &Compressed, ratios: &[u32]) -> Vec<(Key, u64)> {
    let head = u64::from(c.qk_nope_head_dim + c.qk_rope_head_dim);
    let index = u64::from(c.index_head_dim);
    let storage = |r: u32| u64::from(BLOCK / r);
    let swa = Key::Sliding {
        block: SWA_BLOCK,
        window: c.window,
    };
    // `CompressorStateCache.__init__`: coff = 1 + (ratio == 4), window coff · ratio, block 4
    // (ratio 4) or 8 (ratio 128); `state_dim = 2 · coff · head_dim` fp32 values.
    let state = |r: u32, head: u64| {
        let (coff, block) = if r == 4 { (2, 4) } else { (1, 8) };
        let key = Key::Sliding {
            block,
            window: coff * r,
        };
        (
            key,
            aligned(u64::from(block) * 2 * u64::from(coff) * head * 4),
        )
    };
    let mut out = Vec::new();
    for r in ratios.iter().map(|r| (*r).max(1)) {
        // `DeepseekV4SWACache.get_kv_cache_spec`: 64 tokens of 584 B.
        out.push((swa, aligned(u64::from(SWA_BLOCK) * V4_SLOT)));
        if r == 1 {
            continue; // `DeepseekV4Attention.get_kv_cache_spec` returns None
        }
        out.push((Key::Full, aligned(storage(r) * V4_SLOT)));
        out.push(state(r, head));
        if r == 4 {
            // `DeepseekV4IndexerCache`: uint8 keys of `index_head_dim + index_head_dim / 128 · 4`
            // bytes (fp8 and a scale per 128) per stored token; its compressor over head 128.
            out.push((Key::Full, aligned(storage(r) * (index + index / 128 * 4))));
            out.push(state(r, index));
        }
    }
    out
}

/// `group_and_unify_kv_cache_specs` then `_get_kv_cache_groups_uniform_groups`.
fn group(specs: &[(Key, u64)]) -> Result<(Vec<Group>, u64), String> {
    let full: Vec<u64> = specs
        .iter()
        .filter(|(k, _)| *k == Key::Full)
        .map(|s| s.1)
        .collect();
    let mut sliding: Vec<(Key, Vec<u64>)> = Vec::new();
    for (k, p) in specs.iter().filter(|(k, _)| *k != Key::Full) {
        match sliding.iter_mut().find(|(key, _)| key == k) {
            Some((_, pages)) => pages.push(*p),
            None => sliding.push((*k, vec![*p])),
        }
    }
    let full = Group {
        key: Key::Full,
        pages: full,
    };
    let mut sizes: Vec<u64> = full.pages.clone();
    sizes.sort_unstable();
    sizes.dedup();
    let mut counts = vec![full.tuples()];
    counts.extend(sliding.iter().map(|(k, p)| {
        Group {
            key: *k,
            pages: p.clone(),
        }
        .tuples()
    }));
    let tuples = approximate_gcd(&counts, counts[0]);
    let mut groups = vec![full];
    for (key, pages) in sliding {
        // Pad each page to the nearest larger page of the full group.
        let padded = pages
            .iter()
            .map(|p| sizes.iter().copied().find(|s| s >= p))
            .collect::<Option<Vec<u64>>>()
            .ok_or("a sliding page is larger than every full-group page (the engine asserts)")?;
        let mut per_size: BTreeMap<u64, u64> = BTreeMap::new();
        for p in &padded {
            *per_size.entry(*p).or_default() += 1;
        }
        let n = *per_size.values().next().unwrap_or(&0);
        if per_size.values().any(|c| *c != n) {
            return Err("page sizes of a sliding group hold different layer counts".into());
        }
        // `layer_tuples[i::num_tuple_groups]`: split into ⌈n / tuples⌉ groups.
        let k = n.div_ceil(tuples);
        for i in 0..k {
            let share = (n - i).div_ceil(k);
            let pages = per_size
                .keys()
                .flat_map(|p| std::iter::repeat_n(*p, share as usize))
                .collect();
            groups.push(Group { key, pages });
        }
    }
    Ok((groups, sizes.iter().sum::<u64>()))
}

impl Layout {
    /// `_bucket_layers_by_page_size`: each page size takes as many slots as the group with
    /// the most layers of that page.
    fn packed_bytes(groups: &[Group]) -> u64 {
        let mut slots: BTreeMap<u64, u64> = BTreeMap::new();
        for g in groups {
            let mut own: BTreeMap<u64, u64> = BTreeMap::new();
            for p in &g.pages {
                *own.entry(*p).or_default() += 1;
            }
            for (p, n) in own {
                let s = slots.entry(p).or_default();
                *s = (*s).max(n);
            }
        }
        slots.iter().map(|(p, n)| p * n).sum()
    }

    /// Bytes per token of the full group (the compressed latents and indexer keys), which the
    /// plan reports as its per-token figure.
    pub(super) fn full_bytes_per_token(&self) -> f64 {
        self.groups[0].page_sum() as f64 / f64::from(BLOCK)
    }

    pub(super) fn block(&self) -> u32 {
        BLOCK
    }

    /// `get_kv_cache_config_from_groups` (packed): `available_memory // total_num_bytes_per_block`.
    pub(super) fn num_blocks(&self, available: f64) -> u64 {
        if available <= 0.0 {
            return 0;
        }
        (available / self.bytes_per_block as f64).floor() as u64
    }

    /// Block ids one request of `len` tokens takes over every group.
    pub(super) fn blocks_for(&self, len: u64, batched: u64) -> u64 {
        self.groups.iter().map(|g| g.pages_for(len, batched)).sum()
    }

    /// "GPU KV cache size": `get_max_concurrency_for_kv_cache_config`: the request's bytes over
    /// every group (`max_memory_usage_bytes`: pages × the group's page sum) in units of the
    /// first group's page, then `num_blocks / that × max_model_len`.
    pub(super) fn logged(&self, blocks: u64, len: u64, batched: u64) -> u64 {
        let bytes: u64 = self
            .groups
            .iter()
            .map(|g| g.pages_for(len, batched) * g.page_sum())
            .sum();
        let per_request = bytes.div_ceil(self.groups[0].page_sum().max(1)).max(1);
        (blocks as f64 / per_request as f64 * len as f64) as u64
    }

    /// The longest request that both passes the startup check (`_check_enough_kv_cache_memory`
    /// with `_max_memory_usage_bytes_from_groups`) and fits the block pool, less the null block.
    pub(super) fn fit(&self, blocks: u64, available: f64, batched: u64) -> u64 {
        let fits = |len: u64| {
            let pages = self.blocks_for(len, batched);
            pages < blocks && (pages * self.check_bytes_per_page) as f64 <= available
        };
        let (mut lo, mut hi) = (0u64, super::groups::MAX_LEN_LIMIT);
        if !fits(1) {
            return 0;
        }
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if fits(mid) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    }
}

/// The layout of this launch, or INP008 where vLLM's DeepSeek-V4 specs are not modelled.
pub(super) fn layout(
    args: &EngineArgs,
    m: &Geometry,
    c: &Compressed,
    gpu: &GpuSpec,
    at: Loc,
    notes: &mut Notes,
) -> Result<Layout, Vec<Finding>> {
    let refuse = |why: String| {
        let at = args.get("model").map_or(at, |s| s.loc());
        vec![Finding::new("INP008", Some(at))
            .var("model", &m.id)
            .var(
                "architecture",
                m.architectures.first().map_or("", String::as_str),
            )
            .var("why", why)
            .var(
                "need",
                "vLLM's DeepSeek-V4 KV cache specs of that release and setup (models/deepseek_v4, kv_cache_utils.py :: _get_kv_cache_groups_uniform_groups)",
            )
            .label("KV layout not modelled")]
    };
    let v = &args.version;
    if v.release() != MODELLED {
        return Err(refuse(format!(
            "kvlint models vLLM's DeepSeek-V4 KV cache of 0.25.0 only, not {v}"
        )));
    }
    let kv = args.text("kv_cache_dtype").unwrap_or("auto");
    if !kv.starts_with("fp8") {
        return Err(refuse(format!(
            "--kv-cache-dtype {kv}: the FlashMLA path asserts an fp8 KV cache \
             (_resolve_dsv4_kv_cache_dtype), and kvlint models only its fp8_ds_mla layout"
        )));
    }
    if gpu.compute_capability.0 == 12 || args.text("attention_backend").is_some() {
        return Err(refuse(
            "compute capability 12 or an explicit --attention-backend selects FlashInfer's plain-row DeepSeek-V4 cache (nvidia/model.py :: _select_dsv4_attn_cls), which kvlint does not model".into(),
        ));
    }
    if args
        .int("block_size")
        .is_some_and(|b| b != i64::from(BLOCK))
    {
        return Err(refuse(
            "a --block-size other than 256 changes the compressed pages, which the packed layout assumes to be 256 tokens".into(),
        ));
    }
    let unsupported = [
        "speculative_config",
        "kv_transfer_config",
        "disable_hybrid_kv_cache_manager",
    ];
    let many = |k: &str| args.int(k).is_some_and(|n| n > 1);
    if let Some(k) = unsupported.iter().find(|k| args.get(k).is_some()) {
        return Err(refuse(format!(
            "--{} changes which DeepSeek-V4 cache layers exist or how they are grouped; kvlint does not model it",
            k.replace('_', "-")
        )));
    }
    if many("pipeline_parallel_size") || many("decode_context_parallel_size") {
        return Err(refuse(
            "pipeline and decode-context parallelism project the packed groups per stage; kvlint does not model it".into(),
        ));
    }
    let ratios = &c.ratios[..c.ratios.len().min(m.num_layers as usize)];
    let (groups, tuple_bytes) = group(&specs(c, ratios)).map_err(refuse)?;
    let tuples = groups.iter().map(Group::tuples).max().unwrap_or(1);
    let layout = Layout {
        bytes_per_block: Layout::packed_bytes(&groups),
        check_bytes_per_page: tuples * tuple_bytes,
        groups,
    };
    notes.exact(
        "kv_bytes_per_block",
        layout.bytes_per_block as f64,
        format!(
            "DeepSeek-V4 fp8_ds_mla: {} cache groups over {} layers ({} with ratio 4, {} with ratio 128) share one packed block of {} B \
             (kv_cache_utils.py :: _get_kv_cache_config_packed, 0.25.0)",
            layout.groups.len(),
            ratios.len(),
            Compressed::layers_with(ratios, 4),
            Compressed::layers_with(ratios, 128),
            layout.bytes_per_block
        ),
    );
    Ok(layout)
}

#[cfg(test)]
#[path = "dsv4_tests.rs"]
mod tests;
