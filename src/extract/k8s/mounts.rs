//! Files a container reads from ConfigMaps mounted into it: an engine YAML named by an argument
//! (Dynamo TRT-LLM `--extra-engine-args FILE`) is found in a ConfigMap of the same input.
//!
//! Kubernetes semantics: a `configMap` volume mounted at `mountPath` shows each key (or each
//! `items[].key` at `items[].path`) as a file under it; with `subPath` the mount is that one file.
//! A relative path is resolved against the container's `workingDir`.

use super::placement::items;
use crate::launch::{Launch, LaunchFile};
use crate::source::{FileId, Loc, SourceFile};
use crate::yaml::{self, Node, Value};

/// A ConfigMap-held file, as a source with the manifest's byte offsets: everything outside the
/// file's block is blanked, so spans and line numbers point into the manifest itself.
#[derive(Debug, Clone, PartialEq)]
pub struct MountedFile {
    pub name: String,
    pub text: String,
}

/// What a path in a container resolves to.
#[derive(Debug, Clone, PartialEq)]
pub enum Mounted {
    Found(MountedFile),
    /// The input is a manifest but no ConfigMap of it provides the path; the reason says why.
    Missing(String),
    /// The launch does not come from a Kubernetes manifest.
    NotManifest,
}

/// Options whose value is a file the engine (or its wrapper) reads at startup.
const FILE_OPTIONS: &[&str] = &[
    "--config",
    "--extra-engine-args",
    "--extra_llm_api_options",
    "--extra-llm-api-options",
    "--disagg-config",
];

/// The files a manifest launch names (a value of [`FILE_OPTIONS`], or a `.yaml`/`.yml`/`.json`
/// argument), each as the manifest provides it: a mounted ConfigMap key, or why none does. Empty
/// when the launch does not come from a manifest, so the engine reads the file beside the input.
pub fn launch_files(file: FileId, src: &SourceFile, launch: &Launch) -> Vec<LaunchFile> {
    let mut paths: Vec<&str> = Vec::new();
    let mut prev: Option<&str> = None;
    for a in &launch.args {
        let (opt, value) = match a.text.split_once('=') {
            Some((k, v)) if k.starts_with('-') => (Some(k), v),
            _ => (prev, a.text.as_str()),
        };
        let named = opt.is_some_and(|o| FILE_OPTIONS.contains(&o)) && !value.starts_with('-');
        let ext = [".yaml", ".yml", ".json"]
            .iter()
            .any(|e| value.ends_with(e));
        if (named || ext) && a.unresolved.is_empty() && !paths.contains(&value) {
            paths.push(value);
        }
        prev = Some(a.text.as_str());
    }
    let mut out = Vec::new();
    for path in paths {
        let content = match resolve(file, src, launch.command, path) {
            Mounted::Found(f) => Ok((f.name, f.text)),
            Mounted::Missing(why) => Err(why),
            Mounted::NotManifest => return Vec::new(),
        };
        out.push(LaunchFile {
            path: path.to_string(),
            content,
            mapping: None,
        });
    }
    out
}

/// Resolves `path`, as the container that runs the launch at `at` sees it. The input is read one
/// document at a time: what is kept of each is the container's mounts and the ConfigMaps' keys.
pub fn resolve(file: FileId, src: &SourceFile, at: Loc, path: &str) -> Mounted {
    let mut site: Option<Option<Site>> = None;
    let mut configmaps: Vec<ConfigMapKeys> = Vec::new();
    for doc in yaml::documents(file, src).flatten() {
        if site.is_none() {
            site = ancestors(&doc, at).map(|chain| Site::of(&chain));
        }
        configmaps.extend(ConfigMapKeys::of(&doc));
    }
    let Some(Some(site)) = site else {
        return Mounted::NotManifest;
    };
    let Some(abs) = absolute(path, site.workdir.as_deref()) else {
        return Mounted::Missing(format!(
            "{path} is relative and the container sets no workingDir"
        ));
    };
    let find = |name: &str| {
        configmaps
            .iter()
            .find(|c| c.name == name)
            .and_then(|c| c.data.as_deref())
    };
    let mut mounted = Vec::new();
    for (cm, mount) in &site.mounts {
        let keys: Vec<String> = find(&cm.name)
            .unwrap_or_default()
            .iter()
            .filter_map(|k| k.text.clone())
            .collect();
        mounted.push(format!(
            "ConfigMap {} at {} (keys: {})",
            cm.name,
            mount.path,
            keys.join(", ")
        ));
        let Some(key) = mount.key_for(&abs, cm) else {
            continue;
        };
        let Some(data) = find(&cm.name) else {
            return Mounted::Missing(format!(
                "{abs} comes from ConfigMap {}, which is not in this input",
                cm.name
            ));
        };
        return match data
            .iter()
            .find(|k| k.is_str && k.text.as_deref() == Some(&key))
        {
            Some(k) => Mounted::Found(MountedFile {
                name: format!("{} (ConfigMap {} key {key})", src.name, cm.name),
                text: block_of(&src.text, k.loc),
            }),
            None => Mounted::Missing(format!("ConfigMap {} has no key {key} for {abs}", cm.name)),
        };
    }
    let what = if mounted.is_empty() {
        "no ConfigMap is mounted into the container".to_string()
    } else {
        format!("the mounts are {}", mounted.join(", "))
    };
    Mounted::Missing(format!("no mounted ConfigMap provides {abs}: {what}"))
}

/// What resolving needs of the container that runs a launch: its working directory and its
/// ConfigMap mounts.
struct Site {
    workdir: Option<String>,
    mounts: Vec<(ConfigMapVolume, Mount)>,
}

impl Site {
    /// `None` when no node on the chain is a container (one with a command or args).
    fn of(chain: &[&Node]) -> Option<Site> {
        let container = chain
            .iter()
            .rev()
            .find(|n| n.get("command").is_some() || n.get("args").is_some())?;
        let volumes = chain.iter().rev().find_map(|n| n.get("volumes"));
        Some(Site {
            workdir: container
                .get("workingDir")
                .and_then(Node::as_str)
                .map(str::to_string),
            mounts: items(container.get("volumeMounts"))
                .filter_map(|m| configmap_mount(m, volumes))
                .collect(),
        })
    }
}

/// A ConfigMap's name and the keys of its `data` (`None` when `data` is not a mapping).
struct ConfigMapKeys {
    name: String,
    data: Option<Vec<Key>>,
}

struct Key {
    /// The key as text (`8` for an int key).
    text: Option<String>,
    /// Written as a string: only those name a file.
    is_str: bool,
    loc: Loc,
}

impl ConfigMapKeys {
    fn of(doc: &Node) -> Option<ConfigMapKeys> {
        let name = configmap_name(doc)?;
        let data = match doc.get("data").map(|d| &d.value) {
            Some(Value::Map(e)) => Some(
                e.iter()
                    .map(|(k, _)| Key {
                        text: k.scalar_text(),
                        is_str: k.as_str().is_some(),
                        loc: k.loc,
                    })
                    .collect(),
            ),
            _ => None,
        };
        Some(ConfigMapKeys {
            name: name.to_string(),
            data,
        })
    }
}

/// The name of a ConfigMap object.
fn configmap_name(doc: &Node) -> Option<&str> {
    if doc.get("kind").and_then(Node::as_str) != Some("ConfigMap") {
        return None;
    }
    doc.get("metadata")?.get("name")?.as_str()
}

/// The nodes from `root` down to the deepest one whose extent holds `at`.
fn ancestors(root: &Node, at: Loc) -> Option<Vec<&Node>> {
    let (start, end) = extent(root);
    if root.loc.file != at.file || at.start < start || end < at.end {
        return None;
    }
    let children: Vec<&Node> = match &root.value {
        Value::Map(e) => e.iter().map(|(_, v)| v).collect(),
        Value::Seq(s) => s.iter().collect(),
        _ => Vec::new(),
    };
    let mut chain = vec![root];
    if let Some(rest) = children.into_iter().find_map(|c| ancestors(c, at)) {
        chain.extend(rest);
    }
    Some(chain)
}

/// The bytes a node and everything under it cover (collection nodes carry only their start).
fn extent(n: &Node) -> (usize, usize) {
    let mut span = (n.loc.start, n.loc.end);
    let mut widen = |c: &Node| {
        let (s, e) = extent(c);
        span = (span.0.min(s), span.1.max(e));
    };
    match &n.value {
        Value::Map(entries) => entries.iter().for_each(|(k, v)| {
            widen(k);
            widen(v);
        }),
        Value::Seq(items) => items.iter().for_each(widen),
        _ => {}
    }
    span
}

/// `path` made absolute against `workdir`, with `.` and `..` resolved.
fn absolute(path: &str, workdir: Option<&str>) -> Option<String> {
    let joined = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("{}/{path}", workdir?)
    };
    let mut parts: Vec<&str> = Vec::new();
    for p in joined.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    Some(format!("/{}", parts.join("/")))
}

/// A `configMap` volume: its name and `items` (key → path), empty when all keys are shown.
struct ConfigMapVolume {
    name: String,
    items: Vec<(String, String)>,
}

struct Mount {
    path: String,
    sub_path: Option<String>,
}

impl Mount {
    /// The ConfigMap key that shows up at `abs`, if this mount provides it.
    fn key_for(&self, abs: &str, cm: &ConfigMapVolume) -> Option<String> {
        let base = absolute(&self.path, None)?;
        let rel = match &self.sub_path {
            Some(sub) if abs == base => sub.clone(),
            Some(_) => return None,
            None => abs
                .strip_prefix(&format!("{}/", base.trim_end_matches('/')))?
                .to_string(),
        };
        if cm.items.is_empty() {
            return (!rel.contains('/')).then_some(rel);
        }
        cm.items
            .iter()
            .find(|(_, p)| *p == rel)
            .map(|(k, _)| k.clone())
    }
}

/// Whether the container mounts a ConfigMap where `path` may be (under its mount path; a
/// relative path, under any): checked before [`resolve`], which reads every object of the file.
pub fn may_hold(c: &Node, pod: Option<&Node>, path: &str) -> bool {
    let volumes = pod.and_then(|p| p.get("volumes"));
    items(c.get("volumeMounts"))
        .filter_map(|m| configmap_mount(m, volumes))
        .any(|(_, m)| !path.starts_with('/') || path.starts_with(m.path.trim_end_matches('/')))
}

fn configmap_mount(m: &Node, volumes: Option<&Node>) -> Option<(ConfigMapVolume, Mount)> {
    let name = m.get("name")?.as_str()?;
    let volume = items(volumes).find(|v| v.get("name").and_then(Node::as_str) == Some(name))?;
    let cm = volume.get("configMap")?;
    let text = |n: &Node, k: &str| n.get(k).and_then(Node::as_str).map(str::to_string);
    let items = items(cm.get("items"))
        .filter_map(|i| Some((text(i, "key")?, text(i, "path")?)))
        .collect();
    Some((
        ConfigMapVolume {
            name: text(cm, "name")?,
            items,
        },
        Mount {
            path: text(m, "mountPath")?,
            sub_path: text(m, "subPath"),
        },
    ))
}

/// The manifest with everything but the block scalar under the key at `key` blanked: the lines
/// after the key's line that are blank or indented deeper than the key. Newlines are kept, so
/// offsets, lines and columns stay those of the manifest.
pub(crate) fn block_of(text: &str, key: Loc) -> String {
    let line_start = text[..key.start].rfind('\n').map_or(0, |i| i + 1);
    let indent = key.start - line_start;
    let body_start = text[key.start..]
        .find('\n')
        .map_or(text.len(), |i| key.start + i + 1);
    let mut end = body_start;
    for line in text[body_start..].split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let deeper = content.len() - content.trim_start_matches(' ').len() > indent;
        if !(content.trim().is_empty() || deeper) {
            break;
        }
        end += line.len();
    }
    text.char_indices()
        .map(|(i, c)| {
            if c == '\n' || (body_start..end).contains(&i) {
                c
            } else {
                ' '
            }
        })
        .collect::<String>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::Sources;

    const MANIFEST: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: engine
data:
  prefill.yaml: |
    max_seq_len: 8192
    kv_cache_config:
      free_gpu_memory_fraction: 0.5
  other.yaml: |
    max_seq_len: 1
---
apiVersion: v1
kind: Pod
metadata:
  name: worker
spec:
  volumes:
  - name: cfg
    configMap:
      name: engine
  containers:
  - name: main
    workingDir: /work
    command: [python3, -m, dynamo.trtllm]
    args: [--extra-engine-args, ./conf/prefill.yaml]
    volumeMounts:
    - name: cfg
      mountPath: /work/conf
";

    fn resolve_in(text: &str, path: &str) -> Mounted {
        let mut s = Sources::default();
        let f = s.add("m.yaml", text);
        let at = text.find("python3").unwrap();
        resolve(f, s.get(f), Loc::new(f, at..at + 7), path)
    }

    #[test]
    fn a_relative_path_under_a_configmap_mount_is_its_key() {
        let Mounted::Found(file) = resolve_in(MANIFEST, "./conf/prefill.yaml") else {
            panic!("not found");
        };
        // The block keeps its place in the manifest; the rest is blank.
        let at = MANIFEST.find("max_seq_len: 8192").unwrap();
        assert_eq!(&file.text[at..at + 17], "max_seq_len: 8192");
        assert_eq!(file.text.len(), MANIFEST.len());
        assert!(!file.text.contains("max_seq_len: 1\n"));
        assert!(!file.text.contains("kind"));
        let mut s = Sources::default();
        let f = s.add(file.name, file.text);
        let doc = yaml::parse_document(f, s.get(f)).unwrap();
        assert_eq!(
            doc.get("kv_cache_config")
                .and_then(|k| k.get("free_gpu_memory_fraction"))
                .map(|n| n.value.clone()),
            Some(Value::Float(0.5))
        );
    }

    #[test]
    fn a_path_outside_every_mount_is_missing_and_says_what_is_mounted() {
        let Mounted::Missing(why) = resolve_in(MANIFEST, "engine/prefill.yaml") else {
            panic!("resolved");
        };
        assert!(why.contains("/work/engine/prefill.yaml"), "{why}");
        assert!(
            why.contains("ConfigMap engine at /work/conf (keys: prefill.yaml, other.yaml)"),
            "{why}"
        );
    }

    #[test]
    fn items_map_keys_to_other_file_names() {
        let text = MANIFEST.replace(
            "      name: engine\n  containers",
            "      name: engine\n      items:\n      - {key: prefill.yaml, path: p.yaml}\n  containers",
        );
        assert!(matches!(
            resolve_in(&text, "/work/conf/p.yaml"),
            Mounted::Found(_)
        ));
        assert!(matches!(
            resolve_in(&text, "/work/conf/prefill.yaml"),
            Mounted::Missing(_)
        ));
    }

    #[test]
    fn a_script_is_not_a_manifest() {
        let mut s = Sources::default();
        let f = s.add("run.sh", "trtllm-serve m --config a.yaml\n");
        assert_eq!(
            resolve(f, s.get(f), Loc::new(f, 0..12), "a.yaml"),
            Mounted::NotManifest
        );
    }
}
