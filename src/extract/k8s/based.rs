//! Sites whose workload is a template held in another object of the input (`base` in a platform
//! file: llm-d's ModelService over its BaseConfig ConfigMap, a KServe InferenceService over its
//! ServingRuntime), read by [`Cx::base_site`]. With the object in the file, the rendered pod
//! template is read as a workload's; without it, the launch lists what the site says and INP006
//! says where the rest is, so that it is never passed.

use super::{items, Cx, Group};
use crate::extract::by_platform::base::{self, Template, Values};
use crate::extract::by_platform::holder;
use crate::extract::by_platform::merge::merge;
use crate::extract::by_platform::placeholders;
use crate::finding::Finding;
use crate::launch::{Arg, Engine, Launch};
use crate::platform::path::first_of;
use crate::platform::{Base, Platform, Site};
use crate::source::{Loc, SourceFile};
use crate::yaml::Node;

impl Cx<'_> {
    pub(super) fn base_site(
        &mut self,
        p: &Platform,
        site: &Site,
        doc: &Node,
        node: &Node,
        g: &Group,
    ) {
        let Some(b) = &site.base else { return };
        let section = first_of(std::slice::from_ref(&b.section), doc, node);
        // The section's containers are read merged over the template's (or listed), never alone.
        for key in b
            .containers
            .iter()
            .map(String::as_str)
            .chain(["initContainers"])
        {
            let list = section.and_then(|s| first_of(&[key.to_string()], s, s));
            self.read.extend(items(list).map(|c| c.loc.start));
        }
        let values = base::values(b, doc, node);
        match base::template(b, self.file, self.src, doc, node, &values) {
            Template::Merged { pod, held } => {
                let (first, said) = (self.out.len(), self.findings.len());
                self.pod_template(Some(&pod), g);
                let what = self.holder(b, doc, node);
                let mine = format!("the {} `{}`", self.kind, self.name);
                for l in &mut self.out[first..] {
                    settle(l, b, held, (&mine, &what), self.src);
                    mounted(l, b, &values);
                }
                // A rendered Deployment that gave nothing is still said: its containers' image
                // entrypoints are not known here.
                if self.out.len() == first && self.findings.len() == said {
                    let at = match held.start < held.end {
                        true => held,
                        false => section.map_or(node.loc, |s| s.loc),
                    };
                    let reason = format!(
                        "no container of the `{}` pod rendered from the {what}'s template gives \
                         an engine command kvlint reads (one without `command` runs its image's \
                         entrypoint, which kvlint does not know)",
                        role(site, b)
                    );
                    self.findings.push(not_read(p, at, &reason, &b.help));
                }
            }
            Template::Missing { at, what, name } => {
                if let Some(s) = section {
                    let role = role(site, b);
                    let named = name.as_deref().map(|n| (n, full(site, &b.name)));
                    self.listed((p, b), (s, &role), g, &values, (at, &what, named));
                }
            }
            Template::Unread { at, why } => {
                let reason = format!(
                    "the workload template in {}: {why}",
                    self.holder(b, doc, node)
                );
                self.findings.push(not_read(p, at, &reason, &b.help));
            }
            Template::Absent => {}
        }
    }

    /// `ConfigMap NAME`, as the site names the template's holder (else its kinds).
    fn holder(&self, b: &Base, doc: &Node, node: &Node) -> String {
        let name = first_of(std::slice::from_ref(&b.name), doc, node).and_then(Node::scalar_text);
        match name {
            Some(name) => format!("{} `{name}`", holder::kinds(b)),
            None => holder::kinds(b),
        }
    }

    /// Without the template: a launch per container of the section whose name or image shows
    /// its engine, holding the model, the args and the tensor-parallel size the site states, each
    /// with INP006 at the template's name.
    fn listed(
        &mut self,
        (p, b): (&Platform, &Base),
        (section, role): (&Node, &str),
        g: &Group,
        values: &Values,
        (at, what, name): (Loc, &str, Option<(&str, String)>),
    ) {
        let (name, named) = match name {
            Some((name, path)) => (Some(name), format!(" that `{path}` names")),
            None => (None, String::new()),
        };
        let reason = format!(
            "`{role}`'s engine command and the rest of its arguments are in the {what}{named}, \
             which is not in this file; its launch lists only what this resource says"
        );
        let said = || elsewhere(not_read(p, at, &reason, &b.help), b, name);
        // The pod the controller would merge the section into: its GPUs and node affinity.
        let pod = merge(b, None, Some(section), values).ok();
        let spec = pod.as_ref().and_then(|p| p.get("spec"));
        let containers = b
            .containers
            .as_deref()
            .and_then(|c| first_of(&[c.to_string()], section, section));
        let mut any = false;
        for c in items(containers) {
            let Some(engine) = shown_engine(b, c) else {
                continue;
            };
            let (args, tp) = stated(b, c, engine, section, values);
            let merged = spec
                .and_then(|s| items(s.get("containers")).find(|m| m.get("name") == c.get("name")));
            let mut l = self.finish(Launch::new(engine, at, args), merged.unwrap_or(c), spec, g);
            l.placement.gpus_per_pod = l.placement.gpus_per_pod.or(tp);
            self.out.push(l);
            self.findings.push(said());
            any = true;
        }
        if !any {
            // No container shows its engine: nothing is listed, and the finding says so.
            let why = match b.engines.is_empty() {
                true => "no launch is listed without it",
                false => "no container of it names an engine kvlint reads, so no launch is listed",
            };
            let reason = reason.replace("its launch lists only what this resource says", why);
            let f = not_read(p, at, &reason, &b.help);
            self.findings.push(elsewhere(f, b, name));
        }
    }
}

/// What a section's container states of its launch: the model (the first of the base's `model`
/// variables, unless its args begin with one), its args rendered, and `--tensor-parallel-size`
/// from the base's `tensor` unless the args give one; and that TP as a GPU count.
fn stated(
    b: &Base,
    c: &Node,
    engine: Engine,
    section: &Node,
    values: &Values,
) -> (Vec<Arg>, Option<u32>) {
    let own: Vec<Arg> = items(c.get("args"))
        .filter_map(|a| {
            let mut arg = Arg::new(base::fill(&a.scalar_text()?, values), a.loc);
            arg.unresolved = placeholders(&arg.text);
            Some(arg)
        })
        .collect();
    let mut args = Vec::new();
    let positional = own.first().is_some_and(|a| !a.text.starts_with('-'));
    if let Some((model, at)) = values.first(&b.model).filter(|_| !positional) {
        let flag = match engine {
            Engine::Sglang => "--model-path",
            _ => "--model",
        };
        args.extend([Arg::new(flag, at), Arg::new(model, at)]);
    }
    args.extend(own);
    let tp = b
        .tensor
        .as_deref()
        .and_then(|t| first_of(&[t.to_string()], section, section))
        .and_then(|n| Some((n.loc, n.scalar_text()?)));
    let tp_flags = ["--tensor-parallel-size", "-tp", "--tp", "--tp-size"];
    let given = |a: &Arg| tp_flags.contains(&a.text.split('=').next().unwrap_or_default());
    if let Some((at, n)) = tp.clone().filter(|_| !args.iter().any(given)) {
        args.extend([Arg::new("--tensor-parallel-size", at), Arg::new(n, at)]);
    }
    (args, tp.and_then(|(_, n)| n.parse().ok()))
}

/// The engine a container's name or image shows, by the base's `engines` words.
fn shown_engine(b: &Base, c: &Node) -> Option<Engine> {
    let text = |k: &str| {
        c.get(k)
            .and_then(Node::scalar_text)
            .unwrap_or_default()
            .to_ascii_lowercase()
    };
    let (name, image) = (text("name"), text("image"));
    let mut words: Vec<(&String, &crate::platform::EngineName)> = b.engines.iter().collect();
    words.sort_by_key(|(w, _)| *w);
    words
        .into_iter()
        .find(|(w, _)| name.contains(w.as_str()) || image.contains(w.as_str()))
        .map(|(_, e)| (*e).into())
}

/// A rendered launch made whole: a Go-template action left in an argument is a value kvlint does
/// not see; an option the site and the template both set to different values is one too, when
/// the controller's releases order their args differently (`base.args`).
fn settle(l: &mut Launch, b: &Base, held: Loc, (mine, holder): (&str, &str), src: &SourceFile) {
    for a in l.args.iter_mut().filter(|a| a.unresolved.is_empty()) {
        if a.text.contains("{{") {
            a.unresolved = placeholders(&a.text);
        }
    }
    if b.args.len() < 2 {
        return;
    }
    let in_held =
        |a: &Arg| a.loc.file == held.file && held.start <= a.loc.start && a.loc.end <= held.end;
    let set = options(&l.args);
    for (i, (flag, value)) in set.iter().enumerate() {
        let other = set[..i].iter().chain(&set[i + 1..]).find(|(f, v)| {
            f == flag
                && l.args[*v].text != l.args[*value].text
                && in_held(&l.args[*v]) != in_held(&l.args[*value])
        });
        let Some((_, earlier)) = other else { continue };
        // Only the value the engine takes in the newest release's order is marked: argparse keeps
        // the last one.
        let last = set.iter().rev().find(|(f, _)| f == flag).map(|(_, v)| *v);
        if last != Some(*value) {
            continue;
        }
        let (this, that) = (&l.args[*value], &l.args[*earlier]);
        let (site, held_v) = if in_held(this) {
            (that, this)
        } else {
            (this, that)
        };
        // Both places, in words: an input's finding has one place of its own.
        let line = |a: &Arg| match a.loc.file == held.file {
            true => format!(", line {}", src.line_col(a.loc.start).0),
            false => String::new(),
        };
        let why = format!(
            "either `{}` ({mine}'s{}) or `{}` (the {holder}'s{}), as the controller's release \
             orders their args",
            value_text(flag, site),
            line(site),
            value_text(flag, held_v),
            line(held_v)
        );
        l.args[*value].unresolved = vec![why];
    }
}

/// `--flag value` and `--flag=value` of an argv: the flag and the index of the arg holding its
/// value.
fn options(args: &[Arg]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (i, a) in args.iter().enumerate() {
        if !a.text.starts_with("--") {
            continue;
        }
        match a.text.split_once('=') {
            Some((flag, _)) => out.push((flag.to_string(), i)),
            None if args.get(i + 1).is_some_and(|n| !n.text.starts_with('-')) => {
                out.push((a.text.clone(), i + 1))
            }
            None => {}
        }
    }
    out
}

fn value_text(flag: &str, a: &Arg) -> String {
    let prefix = format!("{flag}=");
    a.text.strip_prefix(&prefix).unwrap_or(&a.text).to_string()
}

/// The finding with the holder it names, for `base::held_in_run`.
fn elsewhere(f: Finding, b: &Base, name: Option<&str>) -> Finding {
    match name {
        Some(name) => f
            .var(base::HELD_KIND, b.kinds.join("\n"))
            .var(base::HELD_NAME, name),
        None => f,
    }
}

/// The site's section as the findings name it (`spec.decode`, `spec.predictor`).
fn role(site: &crate::platform::Site, b: &Base) -> String {
    full(site, &b.section)
}

/// A path of the base from the document's root, as findings name it.
fn full(site: &crate::platform::Site, path: &str) -> String {
    match path.strip_prefix('/') {
        Some(rooted) => rooted.to_string(),
        None => [site.at.as_str(), path]
            .iter()
            .filter(|p| !p.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("."),
    }
}

/// Each argument that is one of the base's mount paths (alone, or as `--flag=PATH`) read as the
/// value of the variable the controller puts there (the model `storageUri` names, at
/// `/mnt/models`), at the place that value is written; a variable the document does not give
/// leaves the path, whatever it holds.
fn mounted(l: &mut Launch, b: &Base, values: &Values) {
    for (path, var) in &b.mounts {
        if let Some(value) = values.first(std::slice::from_ref(var)) {
            base::mount(l, path, value);
        }
    }
}

fn not_read(p: &Platform, at: Loc, reason: &str, help: &str) -> Finding {
    Finding::new("INP006", Some(at))
        .var("engine", &p.title)
        .var("reason", reason)
        .var("help", help)
}
