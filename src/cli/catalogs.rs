//! `kvlint models [QUERY]` and `kvlint gpus --catalog`: what kvlint knows without a network or a
//! GPU; and how a run may look models up (`--offline`, `HF_HUB_OFFLINE`, the webhook's `--hub`).

use super::{exit, ListFormat, Run, UsageError};
use crate::config::{self, Config};
use crate::gpu;
use crate::model::{self, resolve::HubUse};
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Keep the models whose id, old name or architecture contains this text (case-insensitive).
    pub query: Option<String>,
    #[arg(long, value_enum, default_value_t = ListFormat::Human)]
    pub format: ListFormat,
}

/// huggingface_hub's truthy spellings (`constants._is_true`).
fn env_true(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| {
        matches!(
            v.trim().to_ascii_uppercase().as_str(),
            "1" | "ON" | "YES" | "TRUE"
        )
    })
}

fn offline(h: &super::Hardware) -> bool {
    h.offline || env_true("HF_HUB_OFFLINE")
}

/// The CLI asks the Hub unless told to stay offline.
pub fn resolver(h: &super::Hardware) -> model::Resolver {
    model::Resolver {
        model_config: h.model_config.clone(),
        hub: if offline(h) {
            HubUse::Offline
        } else {
            HubUse::On
        },
        ..Default::default()
    }
}

/// The webhook asks the Hub only with `--hub`.
pub fn webhook_hub(hub: bool, h: &super::Hardware) -> HubUse {
    match (hub, offline(h)) {
        (_, true) => HubUse::Offline,
        (true, false) => HubUse::On,
        (false, false) => HubUse::Off,
    }
}

pub fn models(a: &ModelsArgs) -> Run {
    let rows = model::catalog_rows(a.query.as_deref());
    match a.format {
        ListFormat::Json => println!("{:#}", serde_json::to_value(&rows).unwrap_or_default()),
        ListFormat::Human => {
            println!(
                "{:<52} {:<36} {:>6} {:>10} {:>9}  source",
                "id", "architecture", "layers", "KV B/tok", "context"
            );
            for r in &rows {
                let context = r.max_context.map_or("?".into(), |c| c.to_string());
                println!(
                    "{:<52} {:<36} {:>6} {:>10} {:>9}  {}",
                    r.id, r.architecture, r.layers, r.kv_bytes_per_token, context, r.source
                );
            }
            if rows.is_empty() {
                let q = a.query.as_deref().unwrap_or("");
                let close = model::suggestions(q);
                let hint = match close.is_empty() {
                    true => String::new(),
                    false => format!("; did you mean {}?", close.join(", ")),
                };
                return Err(UsageError(format!("no catalog model matches {q:?}{hint}")).into());
            }
        }
    }
    Ok(exit::CLEAN)
}

/// The GPU catalog, kvlint.toml `[gpus]` entries first.
pub fn gpus(format: ListFormat, config_path: Option<&Path>) -> Run {
    let path = match config_path {
        Some(p) => Some(p.to_path_buf()),
        None => config::discover(Path::new(".")),
    };
    let cfg = match path {
        Some(p) => config::load(&p).map_err(|e| UsageError(e.to_string()))?,
        None => Config::default(),
    };
    gpu::catalog::add_local(cfg.gpus.clone());
    let rows = gpu::catalog::listing();
    match format {
        ListFormat::Json => println!("{:#}", serde_json::to_value(&rows).unwrap_or_default()),
        ListFormat::Human => {
            println!(
                "{:<34} {:>7} {:>14} {:>5}  {:<13} names",
                "name", "MiB", "CUDA bytes", "cc", "CUDA basis"
            );
            for r in &rows {
                println!(
                    "{:<34} {:>7} {:>14} {:>5}  {:<13} {}",
                    r.name,
                    r.memory_mib,
                    r.cuda_total_bytes,
                    format!("{}.{}", r.compute_capability.0, r.compute_capability.1),
                    r.cuda_total_basis,
                    r.names.join(", ")
                );
                println!("    source: {}", r.source);
                for i in &r.instances {
                    println!("    instance {} ×{}: {}", i.name, i.count, i.source);
                }
            }
        }
    }
    Ok(exit::CLEAN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_webhook_asks_the_hub_only_when_told() {
        let h = |offline| super::super::Hardware {
            gpu: None,
            gpu_source: Default::default(),
            model_config: None,
            engine_version: None,
            offline,
        };
        assert_eq!(webhook_hub(true, &h(true)), HubUse::Offline);
        if !env_true("HF_HUB_OFFLINE") {
            assert_eq!(webhook_hub(false, &h(false)), HubUse::Off);
            assert_eq!(webhook_hub(true, &h(false)), HubUse::On);
            assert_eq!(resolver(&h(false)).hub, HubUse::On);
        }
        assert_eq!(resolver(&h(true)).hub, HubUse::Offline);
    }
}
