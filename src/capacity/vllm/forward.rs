//! A floor under vLLM's profile-run peak from the language model's own forward pass.

use crate::model::Geometry;

/// The bf16 tensors one dense decoder layer holds at once in the profile's dummy forward over
/// `tokens` tokens (`gpu_model_runner.py :: _dummy_run(max_num_tokens)`): the residual and the
/// normed input (`T × H` each), the fused gate-up projection's output (`T × 2I/TP`) and the
/// activation's (`T × I/TP`), which `SiluAndMul` reads while the gate-up output is alive
/// (`models/llama.py :: LlamaMLP.forward`). kvlint's fitted estimate (12 bytes per hidden unit
/// per token, plus the sampler's buffers) can fall under it when many tokens go through a wide
/// MLP (65,536 tokens through Qwen3.6-27B: 7.6 GiB against 3.8), so the peak is at least this.
/// MoE layers' buffers are the fused-expert workspace (`moe.rs`); a dense model only.
pub(super) fn mlp_floor(m: &Geometry, tokens: f64, tp: u32) -> f64 {
    if m.moe || m.intermediate == 0 {
        return 0.0;
    }
    let width = (m.intermediate as f64 / f64::from(tp.max(1))).ceil();
    tokens * (2.0 * m.hidden_size as f64 + 3.0 * width) * 2.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::testing::dense;

    /// Qwen3.6-27B's shape (hidden 5120, MLP 17408) at 65,536 tokens:
    /// 65,536 × (2 × 5120 + 3 × 17408) × 2 B = 8,187,281,408 B; TP 2 halves the MLP part.
    #[test]
    fn the_floor_is_the_live_mlp_tensors_of_one_layer() {
        let mut m = dense(64, 40, 8, 128);
        m.hidden_size = 5120;
        m.intermediate = 17408;
        assert_eq!(mlp_floor(&m, 65536.0, 1), 8_187_281_408.0);
        assert_eq!(
            mlp_floor(&m, 65536.0, 2),
            65536.0 * (10240.0 + 3.0 * 8704.0) * 2.0
        );
        m.moe = true;
        assert_eq!(mlp_floor(&m, 65536.0, 1), 0.0);
    }
}
