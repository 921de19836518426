//! docker-compose files: each service's `entrypoint` + `command` (lists, or strings split the way
//! compose splits them), `environment`, and the GPUs `deploy.resources.reservations.devices` reserves.

use crate::extract::k8s::{self, placement, scalar};
use crate::extract::shell::{self, MappedWord};
use crate::extract::Extracted;
use crate::launch::ObjectRef;
use crate::source::{FileId, SourceFile};
use crate::yaml::{Node, Value};

/// A compose file: a `services` mapping whose entries have an `image` or `build`, and no `kind`.
pub fn is_compose(doc: &Node) -> bool {
    let Some(Value::Map(services)) = doc.get("services").map(|s| &s.value) else {
        return false;
    };
    doc.get("kind").is_none()
        && services
            .iter()
            .any(|(_, s)| s.get("image").is_some() || s.get("build").is_some())
}

/// The services' launches, and what their commands hide (INP001, INP004).
pub fn launches(file: FileId, src: &SourceFile, doc: &Node) -> Extracted {
    let mut out = Extracted::default();
    let Some(Value::Map(services)) = doc.get("services").map(|s| &s.value) else {
        return out;
    };
    for (name, svc) in services {
        let name = name.scalar_text().unwrap_or_default();
        let found = service_launches(file, src, svc);
        out.findings.extend(found.findings);
        for mut l in found.launches {
            l.object = Some(ObjectRef {
                kind: "ComposeService".into(),
                namespace: None,
                name: name.clone(),
                container: None,
            });
            out.launches.push(l);
        }
    }
    out
}

fn service_launches(file: FileId, src: &SourceFile, svc: &Node) -> Extracted {
    let env = environment(src, svc);
    let mut argv = words(file, src, svc.get("entrypoint"));
    if svc.get("entrypoint").is_none() {
        argv = image_entrypoint(svc);
    }
    argv.extend(words(file, src, svc.get("command")));
    let image = svc
        .get("image")
        .and_then(|i| Some((i.as_str()?.to_string(), i.loc)));
    let mut found = shell::exec_launches(file, argv, &env);
    for l in &mut found.launches {
        l.placement.gpus_per_pod = reserved_gpus(svc);
        l.placement.pods = Some(1);
        l.engine_version = image
            .as_ref()
            .and_then(|(i, loc)| Some((placement::image_version(i, l.engine.name())?, *loc)));
        l.placement.image = image.clone();
    }
    found
}

/// A list is an argv as written; a string is split like a shell would, without running one.
fn words(file: FileId, src: &SourceFile, node: Option<&Node>) -> Vec<MappedWord> {
    match node {
        Some(n) if matches!(n.value, Value::Str(_)) => {
            scalar::word(src, n).map_or_else(Vec::new, |w| shell::split_words(file, &w))
        }
        _ => placement::items(node)
            .filter_map(|n| scalar::word(src, n))
            .collect(),
    }
}

/// `vllm/vllm-openai` images start `vllm serve` (vllm docker/Dockerfile, target `vllm-openai`).
fn image_entrypoint(svc: &Node) -> Vec<MappedWord> {
    let Some(image) = svc
        .get("image")
        .filter(|i| i.as_str().is_some_and(|s| s.contains("vllm-openai")))
    else {
        return Vec::new();
    };
    k8s::synthetic_words(&["vllm", "serve"], image.loc)
}

/// `environment` as a mapping or a list of `KEY=value`.
fn environment(src: &SourceFile, svc: &Node) -> Vec<(String, MappedWord)> {
    match svc.get("environment").map(|e| &e.value) {
        Some(Value::Map(entries)) => entries
            .iter()
            .filter_map(|(k, v)| Some((k.scalar_text()?, scalar::word(src, v)?)))
            .collect(),
        Some(Value::Seq(items)) => items
            .iter()
            .filter_map(|n| {
                let w = scalar::word(src, n)?;
                let text = w.chars.as_str();
                let (name, _) = text.split_once('=')?;
                let skip = name.chars().count() + 1;
                Some((
                    name.to_string(),
                    MappedWord {
                        chars: w.chars.tail(skip),
                        ..w
                    },
                ))
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// GPUs reserved for the service: `count` (an int; `all` is unknown here) or the `device_ids` listed.
fn reserved_gpus(svc: &Node) -> Option<u32> {
    let devices = svc
        .get("deploy")
        .and_then(|d| d.get("resources"))
        .and_then(|r| r.get("reservations"))
        .and_then(|r| r.get("devices"));
    placement::items(devices).find_map(|d| {
        let ids = placement::items(d.get("device_ids")).count();
        d.get("count")
            .and_then(placement::count_of)
            .or((ids > 0).then(|| u32::try_from(ids).unwrap_or(u32::MAX)))
    })
}
