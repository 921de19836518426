//! Values as YAML nodes, for the platform files' paths to read.

use super::eval::Val;
use super::strings::shell_name;
use crate::source::Loc;
use crate::yaml::{Node, Value};

/// A value as a YAML node for a platform's paths, and the unknowns in it, each written as
/// `$(expr)` (the form `Arg::unresolved` patching looks for).
pub fn to_node(v: &Val, unknowns: &mut Vec<(Loc, String)>) -> Node {
    let loc = v.loc();
    let value = match v {
        Val::Str(w) if w.unresolved.is_empty() => Value::Str(w.chars.as_str().to_string()),
        Val::Str(w) => {
            unknowns.push((loc, shell_name(w.chars.as_str())));
            Value::Str(w.chars.as_str().to_string())
        }
        Val::Scalar(n) => return n.clone(),
        Val::List(items, _) => Value::Seq(items.iter().map(|i| to_node(i, unknowns)).collect()),
        Val::Dict(entries, _) => Value::Map(
            entries
                .iter()
                .map(|(k, at, v)| {
                    let key = Node {
                        value: Value::Str(k.clone()),
                        loc: *at,
                    };
                    (key, to_node(v, unknowns))
                })
                .collect(),
        ),
        Val::Unknown(expr, _) | Val::Splat(expr, _) => {
            unknowns.push((loc, expr.clone()));
            Value::Str(format!("$({expr})"))
        }
        // What runs when the caller sets nothing, each name at its place (`finish` marks it).
        Val::Defaulted(c) => {
            unknowns.extend(c.why.iter().map(|w| (loc, w.clone())));
            return to_node(&c.value, unknowns);
        }
    };
    Node { value, loc }
}
