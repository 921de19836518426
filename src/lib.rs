//! kvlint: refuses LLM serving deploys whose KV-cache pool is smaller than the context they advertise.
//!
//! Pipeline: `extract` (inputs → launches) → `engine` (argv → settings) → `model` + `gpu`
//! (geometry, hardware) → `capacity` (plans) → `rules` (findings) → `report` (outputs).

pub mod canary;
pub mod capacity;
pub mod cli;
pub mod config;
pub mod deployment;
pub mod engine;
pub mod extract;
pub mod finding;
pub mod gpu;
pub mod input;
pub mod launch;
pub mod model;
pub mod outcome;
pub mod parallel;
pub mod pipeline;
pub mod plan;
pub mod platform;
pub mod probe;
pub mod report;
pub mod rules;
pub mod source;
pub mod suppress;
pub mod units;
pub mod verify;
pub mod version;
pub mod webhook;
pub mod yaml;
