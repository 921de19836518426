//! Which GPU a launch runs on, and where that came from (DESIGN.md "Provenance and precedence"):
//! the GPU the input itself names wins, then NVML on this node, then the default a user gave
//! (`--gpu`, `$KVLINT_GPU`, kvlint.toml `gpu`, `webhook --gpu`). A default never replaces what
//! the input says: it could turn a refused deploy into a wrong "safe". When a default disagrees
//! with the GPU used, GPU002 names both.

use super::{lookup, GpuSelection, GpuSpec};
use crate::finding::Finding;
use crate::launch::Placement;
use crate::source::Loc;

/// The GPU name extract gives a pod whose node constraints admit nodes of any GPU: never in
/// the catalog, so it is INP003 and no default stands in.
pub const ANY_GPU: &str = "any GPU";

/// Where a launch's GPU came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GpuSource {
    /// The input names it here: a node selector or required affinity on a GPU product or
    /// accelerator label, a MIG resource name.
    Input(Loc),
    /// NVML on the node kvlint runs on.
    Nvml,
    /// `--gpu SPEC`.
    #[default]
    Flag,
    /// `$KVLINT_GPU`.
    Env,
    /// `gpu =` in kvlint.toml.
    Config,
    /// `kvlint webhook --gpu`.
    Webhook,
}

impl GpuSource {
    /// The stable name in JSON and SARIF.
    pub fn kind(self) -> &'static str {
        match self {
            GpuSource::Input(_) => "input",
            GpuSource::Nvml => "nvml",
            GpuSource::Flag => "flag",
            GpuSource::Env => "env",
            GpuSource::Config => "config",
            GpuSource::Webhook => "webhook",
        }
    }

    /// How a reader knows it; the input's place is added by the printers, which know the files.
    pub fn describe(self) -> &'static str {
        match self {
            GpuSource::Input(_) => "the input",
            GpuSource::Nvml => "NVML on this node",
            GpuSource::Flag => "--gpu",
            GpuSource::Env => "$KVLINT_GPU",
            GpuSource::Config => "kvlint.toml `gpu`",
            GpuSource::Webhook => "webhook --gpu",
        }
    }

    pub fn loc(self) -> Option<Loc> {
        match self {
            GpuSource::Input(l) => Some(l),
            _ => None,
        }
    }
}

/// The GPUs a run may fall back on when the input names none.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fallbacks<'a> {
    /// This node's GPUs, when NVML answers.
    pub node: Option<&'a GpuSelection>,
    /// The user's default and where it was given.
    pub default: Option<(&'a GpuSelection, GpuSource)>,
}

/// The GPU a launch is planned with.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    pub spec: GpuSpec,
    pub source: GpuSource,
    /// GPUs the launch gets: the input's own count, else the default's when it names the same GPU.
    pub count: Option<u32>,
}

/// Chooses the launch's GPU. `at` is where findings point when the input names no GPU. Pushes
/// INP003 when no GPU is known (or the input names one the catalog lacks: no default stands in
/// for it) and GPU002 for each fallback that disagrees with the choice.
pub fn choose(
    placement: &Placement,
    at: Loc,
    fallbacks: Fallbacks,
    findings: &mut Vec<Finding>,
) -> Option<Chosen> {
    let input_count = placement
        .gpus_per_pod
        .map(|g| g * placement.pods.unwrap_or(1));
    let (spec, source) = match &placement.gpu {
        Some((name, loc)) => match lookup(name) {
            Some(s) => (s.clone(), GpuSource::Input(*loc)),
            None if name == ANY_GPU => {
                findings.push(
                    Finding::new("INP003", Some(*loc))
                        .var(
                            "detail",
                            ": this node selector term admits nodes whatever their GPU (no GPU \
                             label, NotIn, Exists, DoesNotExist, Gt/Lt, or matchFields only), and \
                             the terms are ORed",
                        )
                        .var(
                            "fix",
                            "pin the GPU in every term (nvidia.com/gpu.product In [...]) or in the \
                             nodeSelector, which every term shares",
                        ),
                );
                return None;
            }
            None => {
                findings.push(
                    Finding::new("INP003", Some(*loc))
                        .var("detail", format!(": {name} is not in the catalog"))
                        .var(
                            "fix",
                            "a default (--gpu) never replaces the GPU the input names: write it as \
                             the catalog names it (e.g. NVIDIA-H100-80GB-HBM3), or suppress INP003 \
                             with a reason",
                        ),
                );
                return None;
            }
        },
        None => match (fallbacks.node, fallbacks.default) {
            (Some(n), _) => (n.spec.clone(), GpuSource::Nvml),
            (None, Some((d, src))) => (d.spec.clone(), src),
            (None, None) => {
                findings.push(
                    Finding::new("INP003", Some(at))
                        .var(
                            "detail",
                            " (no --gpu given, the input names none and this machine has no NVIDIA GPU)",
                        )
                        .var(
                            "fix",
                            "pass --gpu (e.g. --gpu h200) or label the workload's nodes with nvidia.com/gpu.product",
                        ),
                );
                return None;
            }
        },
    };
    let default_count = fallbacks
        .default
        .filter(|(d, _)| d.spec.name == spec.name)
        .and_then(|(d, _)| d.count);
    let chosen = Chosen {
        count: input_count.or(default_count),
        spec,
        source,
    };
    let others = [
        fallbacks.node.map(|n| (n, GpuSource::Nvml)),
        fallbacks.default,
    ];
    for (other, from) in others.into_iter().flatten() {
        if from != chosen.source {
            findings.extend(disagreement(&chosen, other, from, at));
        }
    }
    Some(chosen)
}

/// GPU002 when a fallback names another GPU, or another count, than the one planned with.
fn disagreement(
    chosen: &Chosen,
    other: &GpuSelection,
    from: GpuSource,
    at: Loc,
) -> Option<Finding> {
    // This node's GPU count says nothing about a deployment that runs elsewhere.
    let other_count = other.count.filter(|_| from != GpuSource::Nvml);
    let counts_differ = matches!((chosen.count, other_count), (Some(a), Some(b)) if a != b);
    if other.spec.name == chosen.spec.name && !counts_differ {
        return None;
    }
    let show = |name: &str, count: Option<u32>| match count {
        Some(n) => format!("{n}×{name}"),
        None => name.to_string(),
    };
    let loc = chosen.source.loc().unwrap_or(at);
    Some(
        Finding::new("GPU002", Some(loc))
            .var("used", show(&chosen.spec.name, chosen.count))
            .var("used_from", chosen.source.describe())
            .var("other", show(&other.spec.name, other_count))
            .var("other_from", from.describe())
            .label(format!(
                "{} ({})",
                chosen.spec.name,
                chosen.source.describe()
            )),
    )
}
