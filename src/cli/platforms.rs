//! `kvlint platforms [NAME]`: the platforms kvlint reads (`platforms/*.toml` and kvlint.toml
//! `[[platform]]`), with their docs.

use super::{exit, ListFormat, Run, UsageError};
use crate::config::{self, Config};
use crate::platform::{self, Platform};
use std::path::Path;

pub(super) fn run(name: Option<&str>, format: ListFormat, config_path: Option<&Path>) -> Run {
    let path = match config_path {
        Some(p) => Some(p.to_path_buf()),
        None => config::discover(Path::new(".")),
    };
    let cfg = match path {
        Some(p) => config::load(&p).map_err(|e| UsageError(e.to_string()))?,
        None => Config::default(),
    };
    platform::set_site(cfg.platforms);
    let registry = platform::registry();
    let chosen: Vec<&Platform> = match name {
        Some(n) => vec![registry.get(n).ok_or_else(|| {
            UsageError(format!("no platform {n:?}; `kvlint platforms` lists them"))
        })?],
        None => {
            let mut all: Vec<&Platform> = registry.all().collect();
            all.sort_by(|a, b| a.name.cmp(&b.name));
            all
        }
    };
    match (format, name) {
        (ListFormat::Json, _) => {
            println!("{:#}", serde_json::to_value(&chosen).unwrap_or_default())
        }
        (ListFormat::Human, Some(_)) => chosen
            .iter()
            .for_each(|p| print!("{}", platform::docs::text(p))),
        (ListFormat::Human, None) => {
            for p in chosen {
                println!(
                    "{:<24} {:<7} {}",
                    p.name,
                    platform::docs::engine(p),
                    p.title
                );
                println!("{:<24} {}", "", p.docs.what);
            }
        }
    }
    Ok(exit::CLEAN)
}
