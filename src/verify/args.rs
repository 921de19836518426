//! `kvlint verify` arguments.

use super::{EngineArg, RoleArg};
use crate::report::Format;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Base URL of a running SGLang or vLLM server (e.g. http://10.0.0.5:30000). Repeat for the
    /// two halves of a prefill/decode pair.
    #[arg(long, value_name = "URL")]
    pub url: Vec<String>,
    /// An engine startup log (`-`: stdin). Repeat for the two halves of a prefill/decode pair.
    #[arg(long, value_name = "FILE")]
    pub log: Vec<String>,
    /// The engine; detected from the server's answers or the log's lines when not given.
    #[arg(long, value_enum)]
    pub engine: Option<EngineArg>,
    /// Extra HTTP header for every request, `Name: value` (e.g. `Authorization: Bearer $KEY`).
    #[arg(long, value_name = "K:V")]
    pub header: Vec<String>,
    /// Seconds each HTTP request may take.
    #[arg(long, value_name = "S", default_value_t = 30)]
    pub timeout: u64,
    /// The half the server serves, when neither the server nor the log says.
    #[arg(long, value_enum)]
    pub role: Option<RoleArg>,
    /// The advertised context, when neither the server nor the log says (or to override it).
    #[arg(long, value_name = "N")]
    pub context: Option<u64>,
    /// A file holding the launch (script, manifest, compose file): kvlint's prediction for it is
    /// printed beside the measurement, with the error in %.
    #[arg(long = "launch", value_name = "FILE")]
    pub launch_file: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// The launch that produced the server or log, as after `kvlint capacity --`.
    #[arg(last = true, value_name = "LAUNCH")]
    pub launch: Vec<String>,
}

impl VerifyArgs {
    /// Whether a launch is given, so a prediction is wanted.
    pub fn predicts(&self) -> bool {
        !self.launch.is_empty() || self.launch_file.is_some()
    }
}
