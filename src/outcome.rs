//! What kvlint learned about one launch. It lives below the pipeline, the deployment grouping and
//! the rule evaluators, which all read it, so that none of them imports another for it.

use crate::capacity::Plan;
use crate::engine::EngineArgs;
use crate::gpu::{GpuSource, GpuSpec};
use crate::launch::Launch;
use crate::model::Geometry;
use crate::source::FileId;
use std::sync::Arc;

/// Everything kvlint learned about one launch.
#[derive(Debug)]
pub struct LaunchOutcome {
    pub launch: Launch,
    pub file: FileId,
    pub args: EngineArgs,
    pub model: Option<Arc<Geometry>>,
    pub gpu: Option<GpuSpec>,
    /// Where `gpu` came from (DESIGN.md "Provenance and precedence").
    pub gpu_source: Option<GpuSource>,
    pub plan: Option<Plan>,
    /// Where the engine version came from: `--engine-version`, `image tag`, or `latest known`.
    pub version_source: &'static str,
}
