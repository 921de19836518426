//! HashiCorp HCL (Nomad job files, Terraform configurations) read with hcl-edit, which keeps a
//! byte span on every part, into the same spanned tree YAML gives (`yaml::Node`), so that platform
//! paths reach into it as into YAML. Spec: <https://github.com/hashicorp/hcl/blob/main/hclsyntax/spec.md>.
//!
//! The tree follows HCL's own JSON form (hcl `json/spec.md`, which Terraform's `.tf.json` uses): a
//! block is a mapping under its type, and each label nests one mapping deeper, so
//! `job "x" { group "g" { ... } }` is `job: {x: {group: {g: {...}}}}` and a platform path reads
//! `job.*.group.*.task.*`. Without its schema a block is known to repeat only by how it is
//! written (as pbtxt.rs reads protobuf text): a block type written once is a mapping, written more
//! than once (with the same labels) a sequence of them.
//!
//! Only literal values are taken. An expression kvlint cannot evaluate (`var.model`, a function
//! call, a conditional, a `${...}` interpolation of one) becomes its own text inside `${...}`
//! (`${var.model}`), a placeholder the platform readers hold as a value not known here (INP004
//! where the pool needs it), never a literal. A Terraform `var.x` stays unknown even with a
//! `default`: the caller may set it (`-var`, `*.tfvars`, `TF_VAR_x`), as compose's
//! `${VAR:-default}` is. A `local.x` is fixed by the file, so one whose value is a literal is taken.

use crate::source::{FileId, Loc};
use crate::yaml::{Node, Value};
use hcl_edit::expr::{Expression, ObjectKey, TraversalOperator};
use hcl_edit::structure::{Block, Body, Structure};
use hcl_edit::template::{Element, Template};
use hcl_edit::Span;
use std::collections::HashMap;

/// Largest HCL file read; past it the file is refused (INP001), as YAML's budget refuses a
/// flood of nodes. hcl-edit itself refuses nesting past 64 levels.
const MAX_BYTES: usize = 16 * 1024 * 1024;
/// How deep `local.x` references are followed (a local naming another): cycles end here.
const MAX_LOCAL_DEPTH: usize = 8;

/// Text that is not HCL, with where reading stopped.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct HclError {
    pub message: String,
    pub loc: Loc,
}

/// Reads a whole HCL file; its root is a mapping spanning the text.
pub fn parse(file: FileId, text: &str) -> Result<Node, HclError> {
    let fail = |message: String, at: usize| HclError {
        message,
        loc: Loc::new(file, at..at),
    };
    if text.len() > MAX_BYTES {
        return Err(fail(format!("larger than {MAX_BYTES} bytes"), 0));
    }
    let body = hcl_edit::parser::parse_body(text).map_err(|e| {
        let at = e.location();
        let message = format!(
            "line {} column {}: {}",
            at.line(),
            at.column(),
            e.message().lines().next().unwrap_or_default()
        );
        fail(message, at.offset().min(text.len()))
    })?;
    let cx = Cx {
        file,
        text,
        locals: locals(&body),
    };
    let fields = cx.body(&body)?;
    Ok(Node {
        value: Value::Map(fields),
        loc: Loc::new(file, 0..text.len()),
    })
}

/// The attributes of the file's top-level `locals` blocks (Terraform).
fn locals(body: &Body) -> HashMap<String, Expression> {
    body.get_blocks("locals")
        .filter(|b| b.labels.is_empty())
        .flat_map(|b| b.body.attributes())
        .map(|a| (a.key.as_str().to_string(), a.value.clone()))
        .collect()
}

struct Cx<'t> {
    file: FileId,
    text: &'t str,
    locals: HashMap<String, Expression>,
}

/// What one key of a body holds while the body is read: an attribute's value, the bodies of
/// the unlabeled blocks of that type, or the next label's keys.
enum Slot {
    Value(Node),
    Blocks(Vec<Node>),
    Labels(Vec<(Node, Slot)>),
}

impl Cx<'_> {
    fn loc(&self, span: Option<std::ops::Range<usize>>, or: Loc) -> Loc {
        span.map_or(or, |r| Loc::new(self.file, r))
    }

    fn err<T>(&self, message: String, loc: Loc) -> Result<T, HclError> {
        Err(HclError { message, loc })
    }

    /// A body's attributes and blocks as mapping entries, in first-seen order.
    fn body(&self, body: &Body) -> Result<Vec<(Node, Node)>, HclError> {
        let whole = self.loc(body.span(), Loc::new(self.file, 0..0));
        let mut slots: Vec<(Node, Slot)> = Vec::new();
        for s in body.iter() {
            match s {
                Structure::Attribute(a) => {
                    let key = self.key(a.key.as_str(), a.key.span(), whole);
                    if slots.iter().any(|(k, _)| k.as_str() == key.as_str()) {
                        let why = format!("`{}` is set more than once", a.key.as_str());
                        return self.err(why, key.loc);
                    }
                    let value = self.expr(&a.value, 0);
                    slots.push((key, Slot::Value(value)));
                }
                Structure::Block(b) => self.block(b, &mut slots, whole)?,
            }
        }
        Ok(slots
            .into_iter()
            .map(|(k, s)| (k.clone(), finish(k.loc, s)))
            .collect())
    }

    fn key(&self, name: &str, span: Option<std::ops::Range<usize>>, or: Loc) -> Node {
        Node {
            value: Value::Str(name.to_string()),
            loc: self.loc(span, or),
        }
    }

    /// One block into `slots`: under its type, then one level per label.
    fn block(&self, b: &Block, slots: &mut Vec<(Node, Slot)>, whole: Loc) -> Result<(), HclError> {
        let at = self.loc(b.span(), whole);
        let content = Node {
            value: Value::Map(self.body(&b.body)?),
            loc: at,
        };
        let mut keys = vec![self.key(b.ident.as_str(), b.ident.span(), at)];
        keys.extend(b.labels.iter().map(|l| self.key(l.as_str(), l.span(), at)));
        insert(slots, &keys, content).or_else(|why| self.err(why, keys[0].loc))
    }

    /// A value; `depth` counts `local.x` references followed.
    fn expr(&self, e: &Expression, depth: usize) -> Node {
        let at = self.loc(e.span(), Loc::new(self.file, 0..0));
        let value = match e {
            Expression::Null(_) => Value::Null,
            Expression::Bool(b) => Value::Bool(*b.value()),
            Expression::Number(n) => match n.value().as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.value().as_f64().unwrap_or(f64::NAN)),
            },
            Expression::String(s) => Value::Str(s.value().clone()),
            Expression::Array(items) => {
                Value::Seq(items.iter().map(|i| self.expr(i, depth)).collect())
            }
            Expression::Object(o) => Value::Map(
                o.iter()
                    .map(|(k, v)| (self.object_key(k, at, depth), self.expr(v.expr(), depth)))
                    .collect(),
            ),
            Expression::StringTemplate(t) => Value::Str(self.template(t, depth)),
            // The parser has already dedented a `<<-` heredoc.
            Expression::HeredocTemplate(h) => Value::Str(self.template(&h.template, depth)),
            Expression::Parenthesis(p) => return self.expr(p.inner(), depth),
            Expression::Traversal(_) => match self.local(e, depth) {
                Some(node) => return Node { loc: at, ..node },
                None => Value::Str(self.unknown(e)),
            },
            _ => Value::Str(self.unknown(e)),
        };
        Node { value, loc: at }
    }

    /// An object key: a name, a string, or (an expression) its placeholder.
    fn object_key(&self, k: &ObjectKey, or: Loc, depth: usize) -> Node {
        match k {
            ObjectKey::Ident(i) => self.key(i.as_str(), i.span(), or),
            ObjectKey::Expression(e) => {
                let node = self.expr(e, depth);
                match node.scalar_text() {
                    Some(text) => Node {
                        value: Value::Str(text),
                        loc: node.loc,
                    },
                    None => Node {
                        value: Value::Str(self.unknown(e)),
                        loc: node.loc,
                    },
                }
            }
        }
    }

    /// A template's text: literals as written, each interpolation its value when that is a
    /// literal scalar, else its placeholder; a directive (`%{ if }`) makes the whole unknown.
    fn template(&self, t: &Template, depth: usize) -> String {
        let mut out = String::new();
        for el in t.iter() {
            match el {
                Element::Literal(s) => out.push_str(s.value()),
                Element::Interpolation(i) => {
                    let node = self.expr(&i.expr, depth);
                    match (&node.value, node.scalar_text()) {
                        (Value::Seq(_) | Value::Map(_) | Value::Null, _) | (_, None) => {
                            out.push_str(&self.unknown(&i.expr))
                        }
                        (_, Some(text)) => out.push_str(&text),
                    }
                }
                // `%{ if }` / `%{ for }`: what it renders depends on values kvlint does not see.
                Element::Directive(_) => return "${template directive}".to_string(),
            }
        }
        out
    }

    /// `local.NAME` whose value is a literal (or another such local), as that value.
    fn local(&self, e: &Expression, depth: usize) -> Option<Node> {
        let Expression::Traversal(t) = e else {
            return None;
        };
        let Expression::Variable(root) = &t.expr else {
            return None;
        };
        let [op] = t.operators.as_slice() else {
            return None;
        };
        let TraversalOperator::GetAttr(name) = op.value() else {
            return None;
        };
        if root.as_str() != "local" || depth >= MAX_LOCAL_DEPTH {
            return None;
        }
        let value = self.locals.get(name.as_str())?;
        let node = self.expr(value, depth + 1);
        // A local that is itself unknown stays this reference: the message names `local.x`.
        (!node.as_str().is_some_and(holds_placeholder)).then_some(node)
    }

    /// An expression kvlint does not evaluate, as the placeholder `${TEXT}` of its own text.
    fn unknown(&self, e: &Expression) -> String {
        let text = e
            .span()
            .and_then(|r| self.text.get(r))
            .unwrap_or("expression");
        format!("${{{}}}", sanitize(text))
    }
}

/// An expression's text as a placeholder's name: on one line, without the braces that would
/// end the placeholder early, and bounded in length so that messages stay readable.
fn sanitize(text: &str) -> String {
    let one: String = text
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .map(|c| if matches!(c, '{' | '}' | '$') { ' ' } else { c })
        .collect();
    let one = one.trim();
    match one.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &one[..i]),
        None => one.to_string(),
    }
}

/// Whether a value the reader made holds one of its placeholders.
fn holds_placeholder(text: &str) -> bool {
    text.contains("${")
}

/// `content` under `keys` (the block type, then each label), each key's slot made as needed.
fn insert(slots: &mut Vec<(Node, Slot)>, keys: &[Node], content: Node) -> Result<(), String> {
    let Some((key, rest)) = keys.split_first() else {
        return Ok(());
    };
    let i = match slots.iter().position(|(k, _)| k.as_str() == key.as_str()) {
        Some(i) => i,
        None => {
            let slot = match rest.is_empty() {
                true => Slot::Blocks(Vec::new()),
                false => Slot::Labels(Vec::new()),
            };
            slots.push((key.clone(), slot));
            slots.len() - 1
        }
    };
    let name = key.as_str().unwrap_or_default();
    match (&mut slots[i].1, rest.is_empty()) {
        (Slot::Blocks(bodies), true) => {
            bodies.push(content);
            Ok(())
        }
        (Slot::Labels(inner), false) => insert(inner, rest, content),
        (Slot::Value(_), _) => Err(format!("`{name}` is both an attribute and a block")),
        _ => Err(format!(
            "blocks `{name}` are written with different numbers of labels"
        )),
    }
}

/// A slot as a node: one block's body as itself, several as a sequence, labels as a mapping.
fn finish(key: Loc, slot: Slot) -> Node {
    match slot {
        Slot::Value(v) => v,
        Slot::Blocks(mut bodies) if bodies.len() == 1 => bodies.remove(0),
        Slot::Blocks(bodies) => Node {
            loc: joined(bodies.iter().map(|b| b.loc), key),
            value: Value::Seq(bodies),
        },
        Slot::Labels(entries) => {
            let entries: Vec<(Node, Node)> = entries
                .into_iter()
                .map(|(k, s)| (k.clone(), finish(k.loc, s)))
                .collect();
            Node {
                loc: joined(entries.iter().map(|(k, v)| k.loc.join(v.loc)), key),
                value: Value::Map(entries),
            }
        }
    }
}

/// The span of several parts; `or` (the key's) when there are none.
fn joined(locs: impl Iterator<Item = Loc>, or: Loc) -> Loc {
    locs.reduce(Loc::join).unwrap_or(or)
}

#[cfg(test)]
#[path = "hcl_tests.rs"]
mod tests;
