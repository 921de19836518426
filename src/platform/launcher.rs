//! A platform's launcher script: a program of the platform's own that a shell runs and that starts
//! the engine (tensorrtllm_backend's `launch_triton_server.py`), with flags of its own.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a launcher's flags say about the launch it starts.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Launcher {
    /// The script's file name (`launch_triton_server.py`), run directly or by `python`.
    pub script: String,
    /// Its flag whose value is what the engine serves (a model repository).
    #[serde(default)]
    pub model: Option<String>,
    /// Its flag whose value is the ranks it starts (an MPI world size), each one GPU: TP × PP.
    /// One rank is TP 1 and PP 1; more leave the split to what `split` names.
    #[serde(default)]
    pub ranks: Option<String>,
    /// The ranks when the flag is not given (the script's own default).
    #[serde(default = "one")]
    pub ranks_default: u32,
    /// Where the split of several ranks into TP and PP is set, which the input does not show.
    #[serde(default)]
    pub split: String,
    /// Engine options set where the input does not show them (a prebuilt engine's
    /// `--max_seq_len`), each with where: the launch gets them as values kvlint cannot see (INP004).
    #[serde(default)]
    pub unknown: BTreeMap<String, String>,
}

fn one() -> u32 {
    1
}
