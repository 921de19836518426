//! The engine a platform's launch runs: fixed by the platform, named in the file (at a path, by
//! a flag), the platform's default, or each engine the platform may pick itself at startup (a NIM
//! with no profile named), which the launch is then planned on, one launch each.

use super::{flag_value, not_read, placeholders};
use crate::finding::Finding;
use crate::launch::{Arg, Engine};
use crate::platform::path::first_of;
use crate::platform::Platform;
use crate::yaml::Node;

/// The engines a launch may run: the one the platform fixes or the file names, else each the
/// platform may pick at startup (`open` says why, `named` where the file would name it).
pub(super) struct Engines {
    pub list: Vec<Engine>,
    pub open: Option<String>,
    pub named: String,
}

impl Engines {
    fn one(e: Engine) -> Engines {
        Engines {
            list: vec![e],
            open: None,
            named: String::new(),
        }
    }
}

/// The platform's engine, fixed or named in the file (at a path, or by a flag of the argv), else
/// the platform's default, else the engines it may pick itself. An empty value names none.
pub(super) fn engine(
    p: &Platform,
    doc: &Node,
    node: &Node,
    argv: &[Arg],
) -> Result<Engines, Box<Finding>> {
    if let Some(e) = p.engine {
        return Ok(Engines::one(e.into()));
    }
    let Some(from) = &p.engine_from else {
        return Err(not_read(p, node.loc, "the platform names no engine"));
    };
    let paths = [&from.path].into_iter().chain(&from.or);
    let at = paths.filter(|p| !p.is_empty()).find_map(|p| {
        first_of(std::slice::from_ref(p), doc, node)
            .filter(|n| n.scalar_text().is_none_or(|t| !t.is_empty()))
    });
    let by_flag = from.flag.as_deref().and_then(|f| flag_value(argv, f));
    let what = [from.path.as_str(), from.flag.as_deref().unwrap_or_default()];
    let what: Vec<&str> = what.into_iter().filter(|w| !w.is_empty()).collect();
    let what = format!("`{}`", what.join("` or `"));
    let open = |why: String| Engines {
        list: from
            .unnamed
            .iter()
            .flat_map(|u| &u.engines)
            .map(|e| (*e).into())
            .collect(),
        open: Some(why),
        named: format!("{what} not set"),
    };
    let (value, loc) = match (at, by_flag) {
        (Some(n), _) => (n.scalar_text().unwrap_or_default(), n.loc),
        (None, Some(a)) => {
            let text = a.text.split_once('=').map_or(a.text.as_str(), |(_, v)| v);
            (text.to_string(), a.loc)
        }
        (None, None) => {
            if let Some(u) = &from.unnamed {
                return Ok(open(u.why.clone()));
            }
            return from
                .default
                .map(|e| Engines::one(e.into()))
                .ok_or_else(|| not_read(p, node.loc, &format!("{what} is not set")));
        }
    };
    let vars = placeholders(&value);
    if !vars.is_empty() {
        let named = if from.path.is_empty() {
            from.flag.clone().unwrap_or_default()
        } else {
            from.path.clone()
        };
        return Err(Box::new(
            Finding::new("INP004", Some(loc))
                .var("flag", format!("the engine (`{named}`)"))
                .var("vars", vars.join(", ")),
        ));
    }
    // The value itself, else the longest prefix that matches it.
    let prefixed = from
        .values
        .iter()
        .filter_map(|(k, e)| Some((k.strip_suffix('*')?, e)))
        .filter(|(k, _)| value.starts_with(k))
        .max_by_key(|(k, _)| k.len())
        .map(|(_, e)| e);
    let listed = from.values.get(&value).or(prefixed);
    if let Some(e) = listed {
        return Ok(Engines::one((*e).into()));
    }
    if let Some(why) = from.unnamed.as_ref().and_then(|u| u.unlisted.as_ref()) {
        let mut found = open(why.replace("{value}", &value));
        found.named = what;
        return Ok(found);
    }
    let why = format!("kvlint models the vLLM, SGLang and TensorRT-LLM engines, not {value}");
    Err(not_read(p, loc, &why))
}
