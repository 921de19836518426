//! Finding engine launches in inputs. One submodule per input kind; `extract` picks by content.

use crate::finding::Finding;
use crate::launch::Launch;
use crate::source::{FileId, Sources};

/// Launches found in one file, and the problems met on the way (invalid YAML, ...).
#[derive(Debug, Default)]
pub struct Extracted {
    pub launches: Vec<Launch>,
    pub findings: Vec<Finding>,
}
