//! A workload template held in another object of the input, rendered and merged as the
//! platform's controller does it (`crate::platform::Base`): held as YAML text (llm-d's BaseConfig
//! ConfigMap: `data.decodeDeployment`) or as the object itself (a KServe ServingRuntime),
//! Go-template actions filled from the document, then the site's section merged over the
//! template. Every node keeps its place: the template's in the object that holds it, the
//! section's in the document.
//!
//! Mirrors llm-d/llm-d-model-service internal/controller: `InterpolateBaseConfigMap` renders the
//! whole text before it is parsed (child_resources.go), `interpolateContainerArgs` renders each of
//! the section's args, `mergePDDeployment` merges with `containerSliceTransformer`
//! (merge_transformers.go: containers by name, a given `command` replaces, args through
//! `stringSlicePrependTransformer`, env by name) and adds `AcceleratorTypesToNodeAffinity`.
//! And KServe: kserve pkg/controller/v1beta1/inferenceservice/components/predictor.go
//! `buildPodSpec` merges the InferenceService's `model` container over the runtime's
//! `kserve-container` (inferenceservice/utils/utils.go `MergeServingRuntimeAndInferenceServiceSpecs`,
//! `MergeRuntimeContainers`: pkg/utils/container_merge.go `MergeContainerWithPatch`, a strategic
//! merge patch, then the runtime's args followed by the InferenceService's), the predictor's pod
//! fields over the runtime's (`MergePodSpec`), fills `{{.Name}}` and the like from the
//! InferenceService's metadata (`ReplacePlaceholders`) and sets the image's tag from
//! `runtimeVersion` (`UpdateImageTag`).

use super::holder::{self, Holder};
use super::merge::merge;
use crate::finding::Finding;
use crate::launch::{Arg, Launch};
use crate::platform::path::{first_of, Path};
use crate::platform::{Base, Derive};
use crate::source::{FileId, Loc, SourceFile, Sources};
use crate::yaml::{Node, Value};
use std::collections::HashMap;

/// The values a document gives its template's variables and lookup functions.
#[derive(Debug, Default)]
pub struct Values {
    /// Each variable's value and the place it was derived from.
    vars: HashMap<String, (String, Loc)>,
    lookups: HashMap<String, HashMap<String, String>>,
}

/// What reading a site's template gives.
pub enum Template {
    /// The pod template as the controller renders it, and the place of the template's text.
    Merged { pod: Node, held: Loc },
    /// The object the site names (or asks for) is not in this file: where, what it is in words,
    /// and its name when the site gives one.
    Missing {
        at: Loc,
        what: String,
        name: Option<String>,
    },
    /// The template is there but kvlint does not render it: where, and why.
    Unread { at: Loc, why: String },
    /// Neither the object holds a template for the site nor does the site have its section: the
    /// controller renders nothing for it.
    Absent,
}

/// The variables and lookups of `base`, as the document fills them. A variable no derivation
/// gives is left out: its actions stay as written, values kvlint cannot see.
pub fn values(base: &Base, doc: &Node, site: &Node) -> Values {
    let mut out = Values::default();
    for (name, derivations) in &base.vars {
        if let Some(v) = derive(derivations, doc, site) {
            out.vars.insert(name.clone(), v);
        }
    }
    for (name, l) in &base.lookups {
        let list = first_of(std::slice::from_ref(&l.list), doc, site);
        let items = super::super::k8s::placement::items(list);
        let table = items
            .filter_map(|i| {
                Some((
                    i.get(&l.key)?.scalar_text()?,
                    i.get(&l.value)?.scalar_text()?,
                ))
            })
            .collect();
        out.lookups.insert(name.clone(), table);
    }
    out
}

/// The value of the first of `derivations` the document gives, with where it is written.
pub fn derive(derivations: &[Derive], doc: &Node, site: &Node) -> Option<(String, Loc)> {
    let text = |path: &str| {
        let n = first_of(&[path.to_string()], doc, site)?;
        Some((n.scalar_text().filter(|t| !t.is_empty())?, n.loc))
    };
    derivations.iter().find_map(|d| {
        let (raw, at) = text(&d.path)?;
        let mut rest = match &d.strip {
            Some(prefix) => raw.strip_prefix(prefix.as_str())?.to_string(),
            None => raw,
        };
        if let Some(cut) = d.until.as_deref().and_then(|u| rest.find(u)) {
            rest.truncate(cut);
        }
        if let Some(v) = &d.value {
            return Some((v.clone(), at));
        }
        let kept: Vec<&str> = rest.split('/').skip(d.skip).collect();
        let kept = kept.join("/");
        (!kept.is_empty()).then(|| (format!("{}{kept}", d.before), at))
    })
}

/// Each argument of `l` that is the mount `path` (alone, or as `--flag=PATH`) read as `value`,
/// what the controller puts there (the model `storageUri` names, at `/mnt/models`), at the
/// place that value is written.
pub fn mount(l: &mut Launch, path: &str, (value, at): (&str, Loc)) {
    let is_path = |t: &str| t.trim_end_matches('/') == path.trim_end_matches('/');
    for a in l.args.iter_mut().filter(|a| a.unresolved.is_empty()) {
        let text = match a.text.split_once('=') {
            Some((flag, v)) if flag.starts_with('-') && is_path(v) => format!("{flag}={value}"),
            _ if is_path(&a.text) => value.to_string(),
            _ => continue,
        };
        *a = Arg::new(text, at);
    }
}

impl Values {
    /// The first of `names` the document gives, with where.
    pub fn first(&self, names: &[String]) -> Option<(&str, Loc)> {
        names
            .iter()
            .find_map(|n| self.vars.get(n).map(|(v, at)| (v.as_str(), *at)))
    }
}

/// The byte ranges of the `{{ ... }}` actions in `text`.
fn actions(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(open) = text[from..].find("{{").map(|i| from + i) {
        let Some(close) = text[open + 2..].find("}}").map(|i| open + 2 + i + 2) else {
            // Never closed: up to its line's end, for `render` to say so.
            let end = text[open..].find('\n').map_or(text.len(), |i| open + i);
            out.push(open..end);
            break;
        };
        out.push(open..close);
        from = close;
    }
    out
}

/// Why an action is not one kvlint renders (control flow, a trim marker, a variable), if so.
fn control(inner: &str) -> Option<String> {
    const WORDS: [&str; 10] = [
        "if", "else", "end", "range", "with", "define", "template", "block", "break", "continue",
    ];
    let trimmed = inner.trim();
    let first = trimmed.split_whitespace().next().unwrap_or_default();
    let unread = inner.starts_with('-')
        || inner.ends_with('-')
        || trimmed.starts_with("/*")
        || trimmed.starts_with('$')
        || WORDS.contains(&first);
    unread.then(|| {
        format!("`{{{{{inner}}}}}` is Go-template control flow, which kvlint does not render")
    })
}

/// The value of one action (`.HFModelName`, `"app_port" | getPort`, `getPort "app_port"`), when
/// the document gives it.
fn action_value(inner: &str, v: &Values) -> Option<String> {
    let inner = inner.trim();
    if let Some(field) = inner.strip_prefix('.') {
        return v.vars.get(field).map(|(value, _)| value.clone());
    }
    let quoted = |s: &str| {
        let s = s.trim();
        s.strip_prefix('"')?.strip_suffix('"').map(str::to_string)
    };
    let (arg, func) = match inner.split_once('|') {
        Some((arg, func)) => (quoted(arg)?, func.trim()),
        None => {
            let (func, arg) = inner.split_once(char::is_whitespace)?;
            (quoted(arg)?, func)
        }
    };
    v.lookups.get(func)?.get(&arg).cloned()
}

/// `text` with each action the document gives replaced by its value; the others stay as
/// written, so that the launch says which value it could not see.
pub fn fill(text: &str, v: &Values) -> String {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for r in actions(text) {
        out.push_str(&text[last..r.start]);
        let inner = &text[r.start + 2..r.end - 2];
        match action_value(inner, v) {
            Some(value) => out.push_str(&value),
            None => out.push_str(&text[r.clone()]),
        }
        last = r.end;
    }
    out.push_str(&text[last..]);
    out
}

/// The site's template, rendered, with its section merged over it.
pub fn template(
    base: &Base,
    file: FileId,
    src: &SourceFile,
    doc: &Node,
    site: &Node,
    v: &Values,
) -> Template {
    let section = first_of(std::slice::from_ref(&base.section), doc, site);
    let objects = holder::objects(file, src);
    let object = match holder::find(base, &objects.all, doc, site) {
        Holder::Found(o) => o,
        // No template named: the controller merges the section over an empty Deployment.
        Holder::Unnamed => {
            let Some(s) = section else {
                return Template::Absent;
            };
            return match merge(base, None, Some(s), v) {
                Ok(pod) => Template::Merged {
                    pod,
                    held: Loc::new(s.loc.file, 0..0),
                },
                Err(why) => Template::Unread { at: s.loc, why },
            };
        }
        Holder::Missing { at, what, name } => return Template::Missing { at, what, name },
        Holder::Refused { at, why } => return Template::Unread { at, why },
    };
    let (held, at) = match held(base, file, src, object, v) {
        Ok(Some((t, at))) => (Some(t), at),
        Ok(None) if section.is_none() => return Template::Absent,
        Ok(None) => (None, Loc::new(file, 0..0)),
        Err((at, why)) => return Template::Unread { at, why },
    };
    let pod = held.as_ref().and_then(|t| {
        Path::parse(&base.pod_template)
            .ok()
            .and_then(|p| p.first(t, t).cloned())
    });
    // An object that is the template is said at its containers, not as a whole.
    let containers = pod.as_ref().and_then(|p| p.get("spec")?.get("containers"));
    let at = match base.text.is_empty() {
        true => containers.map_or(at, |c| c.loc),
        false => at,
    };
    // A template the section cannot be merged into is said where the section is.
    match merge(base, pod, section, v) {
        Ok(pod) => Template::Merged { pod, held: at },
        Err(why) => Template::Unread {
            at: section.map_or(at, |s| s.loc),
            why,
        },
    }
}

/// The template `object` holds, rendered: the object itself, its strings' actions filled, when
/// the base names no text in it; else [`held_text`].
fn held(
    base: &Base,
    file: FileId,
    src: &SourceFile,
    object: &Node,
    v: &Values,
) -> Result<Option<(Node, Loc)>, (Loc, String)> {
    if !base.text.is_empty() {
        return held_text(base, file, src, object, v);
    }
    let mut t = object.clone();
    fill_strings(&mut t, v);
    Ok(Some((t, object.loc)))
}

/// Every string of the tree with the actions the document gives filled in.
fn fill_strings(node: &mut Node, v: &Values) {
    match &mut node.value {
        Value::Str(s) if s.contains("{{") => *s = fill(s, v),
        Value::Seq(items) => items.iter_mut().for_each(|n| fill_strings(n, v)),
        Value::Map(entries) => entries.iter_mut().for_each(|(_, n)| fill_strings(n, v)),
        _ => {}
    }
}

/// The template text at `base.text` of `object`, rendered and parsed, with the place of the
/// string; `None` when the object has no such key.
fn held_text(
    base: &Base,
    file: FileId,
    src: &SourceFile,
    object: &Node,
    v: &Values,
) -> Result<Option<(Node, Loc)>, (Loc, String)> {
    let Some((last, keys)) = base.text.split_last() else {
        return Ok(None);
    };
    let parent = keys.iter().try_fold(object, |n, k| n.get(k));
    let Some(Value::Map(entries)) = parent.map(|p| &p.value) else {
        return Ok(None);
    };
    let Some((key, value)) = entries.iter().find(|(k, _)| k.as_str() == Some(last)) else {
        return Ok(None);
    };
    // The block indicator stands between the key and the string's first line.
    let raw = src.text.get(key.loc.end..value.loc.end).unwrap_or_default();
    let block = raw.trim_start_matches([':', ' ']).starts_with(['|', '>']);
    // A block string is read in place, so that its nodes point into the input; another string
    // (JSON input) is read on its own, every node then at the string.
    let text = match block {
        true => crate::extract::k8s::mounts::block_of(&src.text, key.loc),
        false => value.as_str().unwrap_or_default().to_string(),
    };
    let (rendered, tokens) = render(&text, v).map_err(|(at, why)| match block {
        true => (Loc::new(file, at), why),
        false => (value.loc, why),
    })?;
    let held = SourceFile::new(src.name.clone(), rendered);
    // sigs.k8s.io/yaml `Unmarshal` (not its `UnmarshalStrict`): a repeated key is no error, the
    // last one wins.
    let mut node = crate::yaml::parse_document_last_key_wins(file, &held)
        .map_err(|e| (value.loc, format!("its template is no YAML: {}", e.message)))?;
    substitute(&mut node, &tokens, (!block).then_some(value.loc));
    Ok(Some((node, value.loc)))
}

/// Where and why a template is not rendered.
type Unrendered = (std::ops::Range<usize>, String);

/// `text` with each action replaced by a placeholder word of the same length (so that the text
/// parses as YAML, as the controller's rendered text does, and keeps its places), and each
/// placeholder with what stands there once rendered: the value, or the action as written.
fn render(text: &str, v: &Values) -> Result<(String, Vec<(String, String)>), Unrendered> {
    let mut out = text.to_string();
    let mut tokens = Vec::new();
    for (i, r) in actions(text).into_iter().enumerate() {
        let action = &text[r.clone()];
        // text/template's lexer: an action ends at its own `}}`; one that runs into the next
        // line's action (`{{ "app_port" | getPort }"`) does not parse, and nothing is rendered.
        let inner = action
            .get(2..action.len().saturating_sub(2))
            .unwrap_or_default();
        if !action.ends_with("}}") || r.len() < 4 || inner.contains("{{") || inner.contains('\n') {
            let line = text[r.clone()].lines().next().unwrap_or_default().trim();
            let why = format!(
                "`{line}` opens a Go-template action that is not closed on its line, so the \
                 controller cannot parse the template"
            );
            return Err((r.start..r.start + line.len(), why));
        }
        if let Some(why) = control(inner) {
            return Err((r, why));
        }
        let word = [format!("KVLT{i}Q"), format!("K{i}")]
            .into_iter()
            .find(|w| w.len() <= r.len())
            .ok_or_else(|| {
                (
                    r.clone(),
                    format!("`{}` is too short an action to read", &text[r.clone()]),
                )
            })?;
        let word = format!("{word:Q<width$}", width = r.len());
        let value = action_value(inner, v).unwrap_or_else(|| text[r.clone()].to_string());
        out.replace_range(r, &word);
        tokens.push((word, value));
    }
    Ok((out, tokens))
}

/// Every string of the tree with its placeholders replaced; every place moved to `at` when given.
fn substitute(node: &mut Node, tokens: &[(String, String)], at: Option<Loc>) {
    if let Some(at) = at {
        node.loc = at;
    }
    match &mut node.value {
        Value::Str(s) => {
            for (word, value) in tokens {
                if s.contains(word.as_str()) {
                    *s = s.replace(word.as_str(), value);
                }
            }
        }
        Value::Seq(items) => items.iter_mut().for_each(|n| substitute(n, tokens, at)),
        Value::Map(entries) => {
            for (k, val) in entries.iter_mut() {
                substitute(k, tokens, at);
                substitute(val, tokens, at);
            }
            let mut seen = std::collections::HashSet::new();
            let mut keep: Vec<bool> = entries
                .iter()
                .rev()
                .map(|(k, _)| k.as_str().is_none_or(|k| seen.insert(k.to_string())))
                .collect();
            keep.reverse();
            let mut keep = keep.into_iter();
            entries.retain(|_| keep.next().unwrap_or(true));
        }
        _ => {}
    }
}

/// The vars that carry, on a finding that a template's holder is not in its file, the holder's
/// kinds (one a line) and name to [`held_in_run`].
pub const HELD_KIND: &str = "held_kind";
pub const HELD_NAME: &str = "held_name";

/// After every file of a run is read: a template's holder that another file of the run holds is
/// named in the finding's help, with the command that reads them together. kvlint reads a
/// template from the file (or stream) of the object that names it only: each file's launches are
/// checked as the file is read.
pub fn held_in_run(findings: &mut [Finding], sources: &Sources) {
    let wanted: Vec<usize> = (0..findings.len())
        .filter(|&i| findings[i].get(HELD_NAME).is_some())
        .collect();
    if wanted.is_empty() {
        return;
    }
    let mut held: Vec<(String, String, FileId)> = Vec::new();
    for (id, src) in sources.iter() {
        for d in crate::yaml::documents(id, src).flatten() {
            let kind = d.get("kind").and_then(Node::as_str);
            let name = d
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Node::scalar_text);
            if let (Some(kind), Some(name)) = (kind, name) {
                held.push((kind.to_string(), name, id));
            }
        }
    }
    for i in wanted {
        let f = &findings[i];
        let (Some(kinds), Some(name), Some(at)) = (f.get(HELD_KIND), f.get(HELD_NAME), f.primary)
        else {
            continue;
        };
        let other = held
            .iter()
            .find(|(k, n, id)| kinds.lines().any(|w| w == k) && n == name && *id != at.file);
        if let Some((kind, _, id)) = other {
            let (there, here) = (&sources.get(*id).name, &sources.get(at.file).name);
            let help = format!(
                "the {kind} `{name}` is in {there}, another file of this run; kvlint reads it with \
                 the resource that names it only from one file or stream: `cat {there} {here} | \
                 kvlint check -`"
            );
            findings[i] = findings[i].clone().var("help", help);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(vars: &[(&str, &str)], ports: &[(&str, &str)]) -> Values {
        let s = |(a, b): &(&str, &str)| (a.to_string(), b.to_string());
        let at = Loc::new(FileId(0), 0..0);
        Values {
            vars: vars
                .iter()
                .map(|(a, b)| (a.to_string(), (b.to_string(), at)))
                .collect(),
            lookups: [("getPort".to_string(), ports.iter().map(s).collect())].into(),
        }
    }

    #[test]
    fn actions_are_filled_where_the_document_gives_them() {
        let v = values(
            &[("HFModelName", "facebook/opt-125m")],
            &[("app_port", "8000")],
        );
        assert_eq!(fill("{{ .HFModelName }}", &v), "facebook/opt-125m");
        assert_eq!(
            fill("--port={{ \"app_port\" | getPort }}", &v),
            "--port=8000"
        );
        assert_eq!(fill("{{ getPort \"app_port\" }}", &v), "8000");
        // Not given: kept as written, for the launch to say it.
        assert_eq!(fill("{{ .ModelPath }}", &v), "{{ .ModelPath }}");
        assert_eq!(
            fill("{{ \"other\" | getPort }}", &v),
            "{{ \"other\" | getPort }}"
        );
    }

    #[test]
    fn placeholders_keep_the_places_of_the_text() {
        let v = values(&[], &[("internal_port", "8200")]);
        let text = "args:\n- \"{{ \"internal_port\" | getPort }}\"\n- x\n";
        let (out, tokens) = render(text, &v).unwrap();
        assert_eq!(out.len(), text.len());
        assert_eq!(out.find("- x"), text.find("- x"));
        assert_eq!(tokens[0].1, "8200");
        let (at, why) = render("{{ if .X }}a{{ end }}", &v).unwrap_err();
        assert_eq!((at, why.contains("control flow")), (0..11, true));
        assert!(render("{{- .X }}", &v).is_err());
        // An action left open runs into the next one: the controller cannot parse it.
        let open = "- \"{{ \"app_port\" | getPort }\"\n- {{ .X }}\n";
        let (at, why) = render(open, &v).unwrap_err();
        assert_eq!(&open[at], "{{ \"app_port\" | getPort }\"");
        assert!(why.contains("not closed on its line"), "{why}");
    }
}
