//! Helm values of vLLM production-stack (chart `vllm-stack`), as the launches its templates
//! render: each `servingEngineSpec.modelSpec[]` entry becomes the `vllm serve` launch that
//! helm/templates/deployment-vllm-multi.yaml renders.

use crate::extract::k8s::{placement, scalar};
use crate::launch::{Arg, Engine, Launch, ObjectRef, Placement};
use crate::source::SourceFile;
use crate::yaml::{Node, Value};

/// `vllmConfig` keys the chart renders, and the flag each becomes (the chart writes some with
/// underscores, which vLLM accepts).
const VLLM_CONFIG: &[(&str, &str)] = &[
    ("enableChunkedPrefill", "--enable-chunked-prefill"),
    ("enablePrefixCaching", "--enable-prefix-caching"),
    ("maxModelLen", "--max-model-len"),
    ("dtype", "--dtype"),
    ("tensorParallelSize", "--tensor-parallel-size"),
    ("maxNumSeqs", "--max-num-seqs"),
    ("gpuMemoryUtilization", "--gpu_memory_utilization"),
    ("maxLoras", "--max_loras"),
];

/// Whether a document is the values of a chart read here.
pub fn is_values(doc: &Node) -> bool {
    doc.get("servingEngineSpec")
        .and_then(|s| s.get("modelSpec"))
        .is_some()
}

/// One launch per `modelSpec` entry.
pub fn launches(src: &SourceFile, doc: &Node) -> Vec<Launch> {
    let specs = doc
        .get("servingEngineSpec")
        .and_then(|s| s.get("modelSpec"));
    placement::items(specs)
        .filter_map(|m| model_launch(src, m))
        .collect()
}

fn model_launch(src: &SourceFile, m: &Node) -> Option<Launch> {
    let url = m.get("modelURL")?;
    let word = |n: &Node| scalar::word(src, n).map(|w| Arg::new(w.chars.as_str(), w.loc));
    let mut args = vec![word(url)?];
    let config = m.get("vllmConfig");
    for (key, flag) in VLLM_CONFIG {
        let Some((k, v)) = entry(config, key) else {
            continue;
        };
        match &v.value {
            Value::Bool(true) => args.push(Arg::new(*flag, k.loc)),
            Value::Bool(false) | Value::Null => {}
            _ => args.extend(
                [Some(Arg::new(*flag, k.loc)), word(v)]
                    .into_iter()
                    .flatten(),
            ),
        }
    }
    args.extend(placement::items(config.and_then(|c| c.get("extraArgs"))).filter_map(word));
    let role = kv_role(m, &mut args);
    let name = m
        .get("name")
        .and_then(Node::scalar_text)
        .unwrap_or_default();
    let placement = model_placement(m);
    let engine_version = placement
        .image
        .as_ref()
        .and_then(|(image, loc)| Some((placement::image_version(image, "vllm")?, *loc)));
    Some(Launch {
        engine: Engine::Vllm,
        command: m.get("name").map_or(url.loc, |n| n.loc),
        args,
        env: Vec::new(),
        object: Some(ObjectRef {
            kind: "servingEngineSpec.modelSpec".into(),
            namespace: None,
            name,
            container: None,
        }),
        placement,
        role_hint: role,
        group: Some("vllm-stack".into()),
        engine_version,
        kwargs: Vec::new(),
        files: Vec::new(),
    })
}

/// LMCache PD: `lmcacheConfig.kvRole` renders `--kv-transfer-config` with that `kv_role`; a
/// producer is the prefill half, a consumer the decode half.
fn kv_role(m: &Node, args: &mut Vec<Arg>) -> Option<String> {
    let lm = m.get("lmcacheConfig").filter(|l| {
        l.get("enabled")
            .is_some_and(|e| e.value == Value::Bool(true))
    })?;
    let (k, v) = entry(Some(lm), "kvRole")?;
    let role = v.as_str()?;
    args.push(Arg::new("--kv-transfer-config", k.loc));
    let json = format!(r#"{{"kv_connector":"LMCacheConnectorV1","kv_role":"{role}"}}"#);
    args.push(Arg::new(json, v.loc));
    match role {
        "kv_producer" => Some("prefill".into()),
        "kv_consumer" => Some("decode".into()),
        _ => None,
    }
}

/// `requestGPU` (+ `requestGPUType`, a MIG resource names the slice), `nodeSelectorTerms`, image.
fn model_placement(m: &Node) -> Placement {
    let gpus = m.get("requestGPU").and_then(placement::count_of);
    let mig = m
        .get("requestGPUType")
        .and_then(|t| {
            Some((
                t.as_str()?.strip_prefix("nvidia.com/mig-")?.to_string(),
                t.loc,
            ))
        })
        .map(|(s, loc)| (format!("MIG-{s}"), loc));
    let terms = Node {
        value: Value::Map(Vec::new()),
        loc: m.loc,
    };
    let affinity = m.get("nodeSelectorTerms").map(|t| selector_pod(t, &terms));
    let image = match (m.get("repository").and_then(Node::as_str), m.get("tag")) {
        (Some(repo), Some(tag)) => tag.scalar_text().map(|t| (format!("{repo}:{t}"), tag.loc)),
        _ => None,
    };
    Placement {
        gpu: mig.or_else(|| affinity.as_ref().and_then(placement::gpu_type)),
        gpus_per_pod: gpus,
        gpus_per_node: None,
        pods: Some(1),
        image,
    }
}

/// A pod spec whose required node affinity is the chart's `nodeSelectorTerms`, so the pod-spec
/// reader finds the GPU label in it.
fn selector_pod(terms: &Node, at: &Node) -> Node {
    let key = |s: &str| Node {
        value: Value::Str(s.into()),
        loc: at.loc,
    };
    let map = |k: &str, v: Node| Node {
        value: Value::Map(vec![(key(k), v)]),
        loc: at.loc,
    };
    map(
        "affinity",
        map(
            "nodeAffinity",
            map(
                "requiredDuringSchedulingIgnoredDuringExecution",
                map("nodeSelectorTerms", terms.clone()),
            ),
        ),
    )
}

fn entry<'n>(node: Option<&'n Node>, key: &str) -> Option<(&'n Node, &'n Node)> {
    match &node?.value {
        Value::Map(e) => e
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(k, v)| (k, v)),
        _ => None,
    }
}
