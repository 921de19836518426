//! Parameters of the recurrent mixers (`state.rs`) and of Nemotron-H's single-module blocks, for
//! the weight estimate of `params.rs` (used when no safetensors index gives the size).

use super::{Recurrent, StateShape};

/// Weights of one recurrent mixer, split as the skip lists name them.
pub(super) struct MixerWeights {
    /// Every projection but the output one (`in_proj`; Mamba1's `x_proj` and `dt_proj`; KDA's
    /// and Lightning's q, k, v and gates).
    pub input: u64,
    /// The projection back to the hidden width (`out_proj`), which a checkpoint may list
    /// apart from `in_proj`.
    pub output: u64,
    /// The small per-channel or per-head vectors and norms, never quantized.
    pub small: u64,
}

/// Weights of one recurrent mixer of hidden width `h`.
pub(super) fn mixer(r: &Recurrent, h: u64) -> MixerWeights {
    let w = |input, output, small| MixerWeights {
        input,
        output,
        small,
    };
    match r.shape {
        // transformers `Mamba2Mixer`: in_proj to (2·inter + 2·groups·state + heads), a
        // depthwise conv over inter + 2·groups·state channels, A/D/dt_bias per head, a gated
        // norm over inter, out_proj back to h.
        StateShape::Mamba2 {
            intermediate,
            groups,
            heads,
            state,
            conv_kernel,
            ..
        } => {
            let conv_dim = intermediate + 2 * groups * state;
            w(
                h * (intermediate + conv_dim + heads),
                intermediate * h,
                conv_dim * conv_kernel + 3 * heads + intermediate,
            )
        }
        // `MambaMixer` (Jamba): in_proj h → 2·inter, x_proj inter → dt_rank + 2·state,
        // dt_proj dt_rank → inter, out_proj; conv, A (inter × state) and D.
        StateShape::Mamba1 {
            intermediate,
            state,
            conv_kernel,
        } => {
            let dt_rank = h.div_ceil(16);
            w(
                2 * h * intermediate
                    + intermediate * (dt_rank + 2 * state)
                    + dt_rank * intermediate,
                intermediate * h,
                intermediate * (conv_kernel + state + 2),
            )
        }
        // LFM2 `ShortConv`: in_proj h → 3·dim, a depthwise conv, out_proj dim → h.
        StateShape::ShortConv {
            conv_dim,
            conv_kernel,
            ..
        } => w(3 * h * conv_dim, conv_dim * h, conv_dim * conv_kernel),
        // KDA: q/k/v/o and gate projections of heads × head_dim, short convs on q, k and v.
        StateShape::Kda {
            heads,
            head_dim,
            conv_kernel,
        } => {
            let d = heads * head_dim;
            w(
                4 * h * d + h * heads,
                d * h,
                3 * d * conv_kernel + 2 * heads,
            )
        }
        // Lightning attention: q, k, v, a gate and the output, each h × heads·head_dim.
        StateShape::Lightning { heads, head_dim } => {
            w(4 * h * heads * head_dim, heads * head_dim * h, h)
        }
    }
}

/// Plamo2's Mamba mixer (vLLM `plamo2.py :: Plamo2MambaMixer.__init__`, 0.26.0): `in_proj`
/// h → 2·inter, `bcdt_proj` inter → rank + 2·state, `dt_proj` rank → heads, `out_proj` inter →
/// h (rank = max(64, h / 16)); a depthwise conv over inter, A, D and dt_bias per head, and the
/// dt, B and C norms.
pub(super) fn plamo2(r: &Recurrent, h: u64) -> MixerWeights {
    let StateShape::Mamba2 {
        intermediate,
        heads,
        state,
        conv_kernel,
        ..
    } = r.shape
    else {
        return mixer(r, h);
    };
    let rank = (h / 16).max(64);
    MixerWeights {
        input: 2 * h * intermediate + intermediate * (rank + 2 * state) + rank * heads,
        output: intermediate * h,
        small: intermediate * conv_kernel + 3 * heads + rank + 2 * state,
    }
}
