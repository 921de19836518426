//! SkyPilot task and SkyServe service YAML: the `run:` block is a bash script that SkyPilot runs on
//! every node with `envs` and its own variables exported (sky/skylet/constants.py:
//! `SKYPILOT_NUM_GPUS_PER_NODE`, `SKYPILOT_NUM_NODES`, `SKYPILOT_NODE_RANK`). The launch is read
//! as rank 0 sees it, the node that serves; GPUs come from `resources.accelerators`.

use crate::extract::k8s::{scalar, synthetic_words};
use crate::extract::shell::{self, MappedWord};
use crate::extract::Extracted;
use crate::launch::ObjectRef;
use crate::source::{FileId, Loc, SourceFile};
use crate::yaml::{Node, Value};

/// Whether a document is a SkyPilot task: a `run` script beside task fields, and no `kind`.
pub fn is_task(doc: &Node) -> bool {
    let task_key = [
        "resources",
        "num_nodes",
        "setup",
        "envs",
        "service",
        "workdir",
    ]
    .iter()
    .any(|k| doc.get(k).is_some());
    doc.get("run").is_some_and(|r| r.as_str().is_some()) && task_key && doc.get("kind").is_none()
}

/// The launches of the `run` script, with SkyPilot's environment.
pub fn launches(file: FileId, src: &SourceFile, doc: &Node) -> Extracted {
    let Some(run) = doc.get("run") else {
        return Extracted::default();
    };
    let Some(script) = scalar::word(src, run) else {
        return Extracted::default();
    };
    let accel = accelerator(doc.get("resources").and_then(|r| r.get("accelerators")));
    let nodes = doc.get("num_nodes");
    let node_count = nodes
        .and_then(|n| n.scalar_text())
        .unwrap_or_else(|| "1".into());
    let mut env: Vec<(String, MappedWord)> = Vec::new();
    for (k, v) in entries(doc.get("envs")) {
        if let (Some(name), Some(w)) = (k.as_str(), scalar::word(src, v)) {
            env.push((name.to_string(), w));
        }
    }
    let mut set = |name: &str, value: &str, at: Loc| {
        env.extend(
            synthetic_words(&[value], at)
                .into_iter()
                .map(|w| (name.to_string(), w)),
        );
    };
    if let Some((_, count, at)) = &accel {
        set("SKYPILOT_NUM_GPUS_PER_NODE", &count.to_string(), *at);
    }
    set(
        "SKYPILOT_NUM_NODES",
        &node_count,
        nodes.map_or(run.loc, |n| n.loc),
    );
    set("SKYPILOT_NODE_RANK", "0", run.loc);
    let mut argv = synthetic_words(&["bash", "-c"], run.loc);
    argv.push(script);
    let name = doc
        .get("name")
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let kind = if doc.get("service").is_some() {
        "SkyServe service"
    } else {
        "SkyPilot task"
    };
    let pods = node_count.parse().ok();
    let mut found = shell::exec_launches(file, argv, &env);
    for l in &mut found.launches {
        if let Some((gpu, count, at)) = &accel {
            l.placement.gpu = gpu.clone().map(|g| (g, *at));
            l.placement.gpus_per_pod = Some(*count);
        }
        l.placement.pods = pods;
        l.object = Some(ObjectRef {
            kind: kind.into(),
            namespace: None,
            name: name.clone(),
            container: None,
        });
        l.group = Some(format!("{kind}/{name}"));
    }
    found
}

/// `accelerators: H100:8` or `{H100: 8}`: the GPU (when only one is named) and the count.
fn accelerator(node: Option<&Node>) -> Option<(Option<String>, u32, Loc)> {
    let node = node?;
    match &node.value {
        Value::Str(s) => {
            let (gpu, count) = s.split_once(':').unwrap_or((s, "1"));
            Some((
                Some(gpu.trim().to_string()),
                count.trim().parse().ok()?,
                node.loc,
            ))
        }
        Value::Map(e) => {
            let counts: Vec<u32> = e
                .iter()
                .filter_map(|(_, v)| crate::extract::k8s::placement::count_of(v))
                .collect();
            let count = *counts.first()?;
            let gpu = match &e[..] {
                [(k, _)] => k.scalar_text(),
                _ => None, // several candidates: SkyPilot picks one at launch time
            };
            counts
                .iter()
                .all(|c| *c == count)
                .then_some((gpu, count, node.loc))
        }
        _ => None,
    }
}

fn entries(node: Option<&Node>) -> &[(Node, Node)] {
    match node.map(|n| &n.value) {
        Some(Value::Map(e)) => e,
        _ => &[],
    }
}
