//! Cloud instance types, VM sizes and machine types that name a GPU and how many each node has
//! (`[[instance]]` rows of the generated catalog, each with its public source). One table answers
//! `--gpu p5.48xlarge`, the `node.kubernetes.io/instance-type` node label, KAITO's
//! `instanceType` and chart values alike.

use super::catalog::embedded_entry;
use super::GpuSpec;
use serde::{Deserialize, Serialize};

/// One instance type and the GPUs its nodes have.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    pub name: String,
    /// The catalog name of its GPU.
    pub gpu: String,
    /// GPUs per node.
    pub count: u32,
    pub source: String,
}

/// The instance type a name means: exact but for ASCII case (AKS labels lower-case VM sizes).
/// SageMaker names an EC2 type with `ml.` before it (`ml.p5e.48xlarge`, the same hardware).
pub fn find(name: &str) -> Option<&'static Instance> {
    let name = name.trim();
    let exact = |name: &str| {
        super::catalog::instances()
            .iter()
            .find(|i| i.name.eq_ignore_ascii_case(name))
    };
    exact(name).or_else(|| name.strip_prefix("ml.").and_then(exact))
}

/// The GPU and GPUs per node of an instance type the catalog maps.
pub fn gpus(name: &str) -> Option<(&'static GpuSpec, u32)> {
    let i = find(name)?;
    Some((&embedded_entry(&i.gpu)?.spec, i.count))
}
