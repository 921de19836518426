//! What serde cannot say about a platform file: an engine from exactly one place, at least one
//! site, paths that parse.

use super::{path, Base, Platform, Reader, Render, Site};

/// Checks one parsed platform.
pub fn check(p: &Platform) -> Result<(), String> {
    if p.reader == Some(Reader::Python) {
        if p.engine.is_some() || p.engine_from.is_some() || p.launches.is_empty() {
            return Err(
                "a `python` platform takes its engine from the commands it reads: no `engine` or \
                 `engine_from`, and one [[launch]] per decorator that places them"
                    .into(),
            );
        }
        let reads = |s: &Site| s.options.is_some() || !s.command.is_empty() || !s.argv.is_empty();
        if p.launches.iter().any(reads) {
            return Err(
                "a `python` platform's [[launch]] places launches the Python reader found: no \
                 `options`, `command` or `argv`"
                    .into(),
            );
        }
    } else if !p.values.is_empty() {
        return Err("`value_of` names calls the Python reader reads: a `python` platform's".into());
    } else if p.reader.is_some() {
        if p.engine.is_some() || p.engine_from.is_some() || !p.launches.is_empty() {
            return Err(
                "a platform with a `reader` takes its engine and launches from the commands it \
                 reads: no `engine`, `engine_from` or [[launch]]"
                    .into(),
            );
        }
    } else if !p.launches.is_empty() && p.launches.iter().all(Site::reads_pods) {
        if p.engine.is_some() || p.engine_from.is_some() {
            return Err("pod templates give their engine by their commands: no `engine`".into());
        }
    } else if p.engine.is_none()
        && p.engine_from.is_none()
        && !p.launches.is_empty()
        && p.launches.iter().all(Site::reads_commands)
    {
        // The commands name their engine.
    } else if p.launcher.is_some() {
        if p.engine.is_none() || p.engine_from.is_some() || !p.launches.is_empty() {
            return Err(
                "a `launcher` starts the platform's `engine`: give it, and no `engine_from` or \
                 [[launch]]"
                    .into(),
            );
        }
    } else if p.launches.is_empty() && p.elsewhere.is_some() {
        // Its documents hold no launch: `elsewhere` says where it is; `engine` is for the docs.
        if p.engine_from.is_some() {
            return Err(
                "a platform whose launch is elsewhere reads no engine: no `engine_from`".into(),
            );
        }
    } else if p.engine.is_some() == p.engine_from.is_some() {
        return Err("give exactly one of `engine` and `engine_from`".into());
    } else if p.launches.is_empty() {
        return Err("no [[launch]] site".into());
    }
    for b in p.launches.iter().filter_map(|s| s.base.as_ref()) {
        if b.kinds.is_empty() || b.containers.is_some() == b.container.is_some() {
            return Err(
                "a `base` names the kinds that hold its template, and merges either `containers` \
                 by name or one `container`"
                    .into(),
            );
        }
    }
    if p.launches
        .iter()
        .any(|s| !s.mounts.is_empty() && s.container.is_empty())
    {
        return Err(
            "`mounts` read the arguments of a `container` site's launches: no `container`".into(),
        );
    }
    let r = &p.recognize;
    let named = !(r.paths.is_empty() && r.files.is_empty() && r.images.is_empty());
    if r.kinds.is_empty() && !named && r.embedded_in.is_none() && p.launcher.is_none() {
        return Err("[recognize] needs kinds, paths, files or images".into());
    }
    if let Some(from) = &p.engine_from {
        if from.path.is_empty() && from.flag.is_none() && from.default.is_none() {
            return Err("`engine_from` needs a path, a flag or a default".into());
        }
        if from.default.is_some() && from.unnamed.is_some() {
            return Err(
                "`engine_from` takes a `default` or the `unnamed` engines, not both".into(),
            );
        }
        if from.unnamed.as_ref().is_some_and(|u| u.engines.is_empty()) {
            return Err("`engine_from.unnamed` lists no engine".into());
        }
    }
    let sites = p.launches.iter();
    let all = sites
        .flat_map(|s| {
            let one = [s.at.as_str()].into_iter().chain(s.options.as_deref());
            one.chain(s.argv.iter().map(String::as_str))
                .chain(s.model.iter().map(String::as_str))
                .chain(s.gpu_type.iter().map(String::as_str))
                .chain(s.pod.iter().map(String::as_str))
                .chain(s.resources.iter().map(String::as_str))
                .chain(s.instance_type.iter().map(String::as_str))
                .chain(s.gpu_resource.iter().map(String::as_str))
                .chain(s.node_selector_terms.iter().map(String::as_str))
                .chain(s.node_label.iter().map(String::as_str))
                .chain(
                    s.render
                        .iter()
                        .flat_map(|r| r.when.iter().map(String::as_str)),
                )
                .chain(
                    s.render
                        .iter()
                        .flat_map(|r| r.words.iter().flat_map(|w| Render::placeholders(w))),
                )
                .chain(s.option_value.as_deref())
                .chain(s.shared_options.as_deref())
                .chain(s.llm_api_options.as_deref())
                .chain(s.command.iter().map(String::as_str))
                .chain(s.entrypoint.iter().map(String::as_str))
                .chain(s.script.iter().map(String::as_str))
                .chain(s.pod_template.iter().map(String::as_str))
                .chain(s.lws_template.iter().map(String::as_str))
                .chain(s.container.iter().map(String::as_str))
                .chain(s.runs_in.iter().map(String::as_str))
                .chain(s.platform_command.iter().map(String::as_str))
                .chain(s.not_engine.as_ref().map(|n| n.path.as_str()))
                .chain(s.base.iter().flat_map(Base::paths))
                .chain(s.mounts.values().flatten().map(|d| d.path.as_str()))
                .chain(s.role_name.iter().map(String::as_str))
                .chain(s.env.iter().map(String::as_str))
                .chain(s.role_from.as_ref().map(|r| r.path.as_str()))
                .chain(s.link.as_ref().map(|l| l.name.as_str()))
                .chain(s.image.iter().map(String::as_str))
                .chain(s.name.iter().map(String::as_str))
                .chain(s.gpu_count.iter().flat_map(|g| terms(g)))
                .chain(s.pods.iter().flat_map(|g| terms(g)))
                .collect::<Vec<_>>()
        })
        .chain(
            p.values
                .iter()
                .flat_map(|v| v.value.iter().map(String::as_str)),
        )
        .chain(r.paths.iter().map(String::as_str))
        .chain(r.values.keys().map(String::as_str))
        .chain(r.not_values.keys().map(String::as_str))
        .chain(p.engine_from.iter().map(|e| e.path.as_str()))
        .chain(
            p.engine_from
                .iter()
                .flat_map(|e| e.or.iter().map(String::as_str)),
        );
    for text in all {
        path::Path::parse(text.trim()).map_err(|e| format!("path `{text}`: {e}"))?;
    }
    Ok(())
}

/// The paths of a count expression (`worker.size + 1`, `a * b`), without its numbers.
fn terms(expr: &str) -> impl Iterator<Item = &str> {
    expr.split(['*', '+'])
        .map(str::trim)
        .filter(|t| t.parse::<u32>().is_err())
}
