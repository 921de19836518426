//! srt-slurm recipes (a Slurm job description, not a Kubernetes object): `backend.type` names the
//! engine and `backend.<engine>_config` holds one flag map per role (`prefill`, `decode`, or
//! `aggregated`), written as the engine's own `--config` file would be (keys without dashes,
//! `true` for a bare flag). GPUs per worker come from `resources.gpus_per_<role>` (else
//! `gpus_per_node`), the GPU model from `resources.gpu_type`, the release from `model.container`.

use crate::extract::k8s::placement;
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch, ObjectRef};
use crate::yaml::{Node, Value};

/// Whether a document is an srt-slurm recipe: a `backend.type` beside `resources` and `model`.
pub fn is_recipe(doc: &Node) -> bool {
    doc.get("backend").and_then(|b| b.get("type")).is_some()
        && doc.get("resources").is_some()
        && doc.get("model").is_some()
        && doc.get("kind").is_none()
}

/// One launch per role map, and an INP006 where the engine or its map cannot be read.
pub fn read(doc: &Node) -> (Vec<Launch>, Vec<Finding>) {
    let mut launches = Vec::new();
    let mut findings = Vec::new();
    let Some(backend) = doc.get("backend") else {
        return (launches, findings);
    };
    let Some(kind) = backend.get("type") else {
        return (launches, findings);
    };
    let name = kind.as_str().unwrap_or_default();
    let engine = match name {
        "vllm" => Engine::Vllm,
        "sglang" => Engine::Sglang,
        _ => {
            findings.push(not_read(
                kind,
                name,
                "kvlint reads srt-slurm recipes for vllm and sglang backends",
            ));
            return (launches, findings);
        }
    };
    let configs = backend.get(&format!("{name}_config"));
    let roles = match configs.map(|c| &c.value) {
        Some(Value::Map(e)) => e.as_slice(),
        _ => &[],
    };
    for (role, map) in roles {
        let role_name = role.scalar_text().unwrap_or_default();
        match crate::engine::config_file_args(engine, map) {
            Ok(args) => launches.push(launch(doc, engine, role, &role_name, args)),
            Err(why) => findings.push(not_read(role, name, &why)),
        }
    }
    (launches, findings)
}

fn launch(doc: &Node, engine: Engine, role: &Node, role_name: &str, flags: Vec<Arg>) -> Launch {
    let model = doc.get("model");
    let path = model.and_then(|m| m.get("path"));
    let mut args = Vec::new();
    if let Some(p) = path {
        let flag = match engine {
            Engine::Sglang => "--model-path",
            _ => "--model",
        };
        args.push(Arg::new(flag, p.loc));
        args.push(Arg::new(p.scalar_text().unwrap_or_default(), p.loc));
    }
    args.extend(flags);
    let mut l = Launch::new(engine, role.loc, args);
    let resources = doc.get("resources");
    let res = |key: &str| resources.and_then(|r| r.get(key));
    l.placement.gpus_per_pod = res(&format!("gpus_per_{role_name}"))
        .or_else(|| res("gpus_per_node"))
        .and_then(placement::count_of);
    l.placement.pods = Some(1);
    l.placement.gpu = res("gpu_type").and_then(|g| Some((g.as_str()?.to_string(), g.loc)));
    let container = model.and_then(|m| m.get("container"));
    l.placement.image = container.and_then(|c| Some((c.as_str()?.to_string(), c.loc)));
    l.engine_version = l
        .placement
        .image
        .as_ref()
        .and_then(|(image, at)| Some((placement::image_version(image, engine.name())?, *at)));
    l.role_hint = matches!(role_name, "prefill" | "decode").then(|| role_name.to_string());
    let name = doc
        .get("name")
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    l.object = Some(ObjectRef {
        kind: "srt-slurm recipe".into(),
        namespace: None,
        name: name.clone(),
        container: Some(role_name.to_string()),
    });
    l.group = Some(format!("srt-slurm/{name}"));
    l
}

fn not_read(at: &Node, engine: &str, reason: &str) -> Finding {
    Finding::new("INP006", Some(at.loc))
        .var("engine", format!("srt-slurm backend {engine}"))
        .var("reason", reason)
        .var(
            "help",
            "check the worker command lines srt-slurm renders for this recipe",
        )
}
