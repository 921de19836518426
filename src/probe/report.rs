//! What the probe is asked (a plan per rank) and what it answers (a report per rank, or why it
//! could not run).

use super::GIB;
use serde::Serialize;

/// What one GPU rank of a launch will hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RankPlan {
    /// CUDA device ordinal, as the engine's rank sees it (after `CUDA_VISIBLE_DEVICES`).
    pub gpu_index: u32,
    pub weights_bytes: u64,
    pub pool_bytes: u64,
    /// The engine's KV page (block) size in bytes.
    pub page_bytes: u64,
    pub pool_tokens: u64,
    /// The context the launch advertises.
    pub context_tokens: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProbeRequest {
    pub ranks: Vec<RankPlan>,
    /// Test hook: after writing, overwrite this page (index within each rank's pool) so that
    /// verification must report it.
    pub corrupt_page: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeReport {
    /// Mixed into every pattern, so one run's data never verifies in another.
    pub nonce: u64,
    pub ranks: Vec<RankReport>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankReport {
    pub plan: RankPlan,
    pub gpu_name: String,
    pub uuid: String,
    pub total_bytes: u64,
    /// `cuMemGetInfo` free memory before anything was allocated (context and kernels loaded).
    pub free_before_bytes: u64,
    pub free_after_bytes: u64,
    pub outcome: RankOutcome,
    /// Pool pages allocated, written and verified.
    pub pages: u64,
    pub pool_allocated_bytes: u64,
    pub alloc_seconds: f64,
    pub write_seconds: f64,
    pub verify_seconds: f64,
    /// Bytes written per second by the fill kernel.
    pub write_gbs: Option<f64>,
    /// Bytes read per second by the verify kernel.
    pub verify_gbs: Option<f64>,
    /// Device-to-device copy on the same GPU, counting read + written bytes.
    pub d2d_copy_gbs: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum RankOutcome {
    /// Allocated, written, verified and released; `pool_covers_context` says if it is big enough.
    Verified {
        pool_covers_context: bool,
    },
    /// Refused before any large allocation.
    DoesNotFit {
        need_bytes: u64,
        free_bytes: u64,
    },
    AllocFailed {
        allocated_bytes: u64,
        error: String,
    },
    Corrupt {
        mismatched_words: u64,
        first_bad_page: Option<u64>,
    },
    /// Verified, but free memory did not return to where it was.
    NotReleased {
        free_before_bytes: u64,
        free_after_bytes: u64,
    },
}

impl RankReport {
    fn render_text(&self) -> String {
        let gib = |b: u64| b as f64 / GIB as f64;
        let rate = |r: Option<f64>| r.map_or("-".to_string(), |v| format!("{v:.0} GB/s"));
        let p = &self.plan;
        let verdict = match &self.outcome {
            RankOutcome::Verified { pool_covers_context: true } => "ok: pool allocated, verified and released".to_string(),
            RankOutcome::Verified { pool_covers_context: false } => format!(
                "FAIL: pool verified but holds {} tokens, less than the advertised context of {}",
                p.pool_tokens, p.context_tokens
            ),
            RankOutcome::DoesNotFit { need_bytes, free_bytes } => format!(
                "FAIL: weights + pool need {:.2} GiB but only {:.2} GiB is free (nothing allocated)",
                gib(*need_bytes),
                gib(*free_bytes)
            ),
            RankOutcome::AllocFailed { allocated_bytes, error } => {
                format!("FAIL: allocation failed after {:.2} GiB: {error}", gib(*allocated_bytes))
            }
            RankOutcome::Corrupt { mismatched_words, first_bad_page } => format!(
                "FAIL: {mismatched_words} words read back wrong (first bad page {})",
                first_bad_page.map_or("?".into(), |x| x.to_string())
            ),
            RankOutcome::NotReleased { free_before_bytes, free_after_bytes } => format!(
                "FAIL: free memory {:.3} GiB before, {:.3} GiB after",
                gib(*free_before_bytes),
                gib(*free_after_bytes)
            ),
        };
        format!(
            "GPU {} {} ({})\n  plan: weights {:.2} GiB, pool {:.2} GiB = {} tokens, context {}\n  \
             free before {:.2} GiB, after {:.2} GiB; {} pages in {:.3} s; write {}, verify {}, D2D copy {}\n  {verdict}\n",
            p.gpu_index,
            self.gpu_name,
            self.uuid,
            gib(p.weights_bytes),
            gib(p.pool_bytes),
            p.pool_tokens,
            p.context_tokens,
            gib(self.free_before_bytes),
            gib(self.free_after_bytes),
            self.pages,
            self.alloc_seconds,
            rate(self.write_gbs),
            rate(self.verify_gbs),
            rate(self.d2d_copy_gbs),
        )
    }

    pub fn passed(&self) -> bool {
        matches!(
            self.outcome,
            RankOutcome::Verified {
                pool_covers_context: true
            }
        )
    }
}

impl ProbeReport {
    /// Human summary, one block per rank.
    pub fn render_text(&self) -> String {
        self.ranks.iter().map(RankReport::render_text).collect()
    }

    /// Exit 0 when every rank's pool fits, verifies, is released and covers the context; 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        if self.ranks.iter().all(RankReport::passed) {
            0
        } else {
            1
        }
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProbeError {
    #[error("no NVIDIA driver: {0}")]
    NoDriver(String),
    #[error("no usable CUDA device: {0}")]
    NoDevice(String),
    #[error("CUDA {during} failed: {error}")]
    Cuda { during: String, error: String },
    #[error("the CUDA driver library panicked: {0}")]
    Panicked(String),
    #[error("bad probe plan: {0}")]
    BadPlan(String),
}

impl ProbeError {
    /// 2 for a bad plan, 4 when the probe could not run on this machine.
    pub fn exit_code(&self) -> i32 {
        match self {
            ProbeError::BadPlan(_) => 2,
            _ => 4,
        }
    }
}
