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
pub fn find(name: &str) -> Option<&'static Instance> {
    let name = name.trim();
    super::catalog::instances()
        .iter()
        .find(|i| i.name.eq_ignore_ascii_case(name))
}

/// The GPU and GPUs per node of an instance type the catalog maps.
pub fn gpus(name: &str) -> Option<(&'static GpuSpec, u32)> {
    let i = find(name)?;
    Some((&embedded_entry(&i.gpu)?.spec, i.count))
}
