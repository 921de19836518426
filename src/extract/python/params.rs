//! A parameter of a module-level function the file calls once, and names nowhere else: what
//! that call passes (`launch_worker(ip, port, known_args.model)`), or the parameter's own
//! default where the call passes nothing. A function called twice, handed on (`Thread(target=
//! serve)`), called with `*args` or `**kwargs`, or a method, leaves its parameters unknown.

use super::eval::{named, Eval, Val};
use super::nodes;
use tree_sitter::Node as Ts;

impl<'a> Eval<'a> {
    /// The value parameter `name` of function `def` has where it is read at `at`.
    pub(super) fn parameter(&self, def: Ts<'a>, name: &str, at: Ts<'a>, d: usize) -> Val {
        self.passed(def, name, d)
            .unwrap_or_else(|| self.unknown(at))
    }

    fn passed(&self, def: Ts<'a>, name: &str, d: usize) -> Option<Val> {
        let outer = match def.parent()? {
            p if p.kind() == "decorated_definition" => p,
            _ => def,
        };
        if outer.parent()?.kind() != "module" {
            return None;
        }
        let function = self.text(def.child_by_field_name("name")?);
        let bound = named(self.root)
            .filter(|s| super::place::binds(self, *s, function))
            .count();
        if bound != 1 {
            return None;
        }
        let inside =
            |n: Ts| outer.start_byte() <= n.start_byte() && n.end_byte() <= outer.end_byte();
        let uses: Vec<Ts> = nodes(self.root)
            .filter(|n| n.kind() == "identifier" && self.text(*n) == function && !inside(*n))
            .collect();
        let [used] = uses[..] else { return None };
        let call = used
            .parent()
            .filter(|c| c.kind() == "call" && c.child_by_field_name("function") == Some(used))?;
        let args = call.child_by_field_name("arguments")?;
        let given: Vec<Ts> = named(args).filter(|a| a.kind() != "comment").collect();
        if given
            .iter()
            .any(|a| matches!(a.kind(), "list_splat" | "dictionary_splat"))
        {
            return None;
        }
        let (index, default) = param(self, def, name)?;
        let by_name = given.iter().find_map(|a| {
            let k = a.child_by_field_name("name")?;
            (a.kind() == "keyword_argument" && self.text(k) == name)
                .then(|| a.child_by_field_name("value"))?
        });
        let positional: Vec<&Ts> = given
            .iter()
            .filter(|a| a.kind() != "keyword_argument")
            .collect();
        let by_place = index.and_then(|i| positional.get(i).copied().copied());
        let value = by_name.or(by_place).or(default)?;
        Some(self.at(value, d))
    }
}

/// Where parameter `name` of `def` stands among the positional ones (`None` after `*`), and its
/// default; `None` for `*args`, `**kwargs` or a name `def` does not take.
fn param<'a>(e: &Eval<'a>, def: Ts<'a>, name: &str) -> Option<(Option<usize>, Option<Ts<'a>>)> {
    let params = def.child_by_field_name("parameters")?;
    let mut index = Some(0);
    for p in named(params) {
        let (id, default) = match p.kind() {
            "identifier" => (Some(p), None),
            "typed_parameter" => (p.named_child(0).filter(|i| i.kind() == "identifier"), None),
            "default_parameter" | "typed_default_parameter" => (
                p.child_by_field_name("name"),
                p.child_by_field_name("value"),
            ),
            "keyword_separator" => {
                index = None;
                continue;
            }
            "positional_separator" => continue,
            _ => {
                // `*args` / `**kwargs`: what follows is keyword-only.
                if p.named_child(0).is_some_and(|i| e.text(i) == name) {
                    return None;
                }
                index = None;
                continue;
            }
        };
        if id.is_some_and(|i| e.text(i) == name) {
            return Some((index, default));
        }
        index = index.map(|i| i + 1);
    }
    None
}
