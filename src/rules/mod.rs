//! Rules as data: every `rules/<ID>-<name>.toml` holds a rule's id, name, level, evaluator,
//! parameters, message, help and docs. This module loads them and runs the evaluators they name.

pub mod eval;
mod remedy;
pub mod select;
mod settings;

pub use eval::{evaluate, evaluate_deployment, evaluate_measured, thousands, PoolSubject};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub use settings::RuleSettings;

include!(concat!(env!("OUT_DIR"), "/rule_files.rs"));

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Allow,
    Warn,
    Deny,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Allow => "allow",
            Level::Warn => "warn",
            Level::Deny => "deny",
        }
    }
}

/// Documentation sections of a rule (ruff's fixed sections).
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Docs {
    pub what: String,
    pub why: String,
    pub example: String,
    #[serde(default)]
    pub fix: Option<String>,
    #[serde(default)]
    pub references: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub id: String,
    pub name: String,
    pub level: Level,
    pub category: String,
    /// The evaluator in `rules/eval.rs`, or `input` for findings raised while reading inputs.
    pub check: String,
    /// Roles the rule applies to (`prefill`, `decode`, `unified`); empty: all.
    #[serde(default)]
    pub roles: Vec<String>,
    #[serde(default)]
    pub params: BTreeMap<String, toml::Value>,
    pub message: String,
    pub help: String,
    pub docs: Docs,
}

impl Rule {
    pub fn param(&self, name: &str) -> Option<f64> {
        match self.params.get(name)? {
            toml::Value::Float(f) => Some(*f),
            toml::Value::Integer(i) => Some(*i as f64),
            _ => None,
        }
    }
    pub fn applies_to(&self, role: &str) -> bool {
        self.roles.is_empty() || self.roles.iter().any(|r| r == role)
    }
}

/// All rules, ordered by id. Parse errors in the embedded data are a build defect: a test loads them.
pub fn all() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let mut rules: Vec<Rule> = RULE_FILES
            .iter()
            .map(|(file, text)| {
                toml::from_str(text)
                    .unwrap_or_else(|e| panic!("embedded rule {file} is invalid: {e}"))
            })
            .collect();
        rules.sort_by(|a, b| a.id.cmp(&b.id));
        rules
    })
}

/// A rule by id (`KV001`) or name (`pool-below-context`), case-insensitively.
pub fn find(key: &str) -> Option<&'static Rule> {
    all()
        .iter()
        .find(|r| r.id.eq_ignore_ascii_case(key) || r.name.eq_ignore_ascii_case(key))
}

/// Fills `{name}` placeholders; unknown placeholders are left as written.
pub fn render(template: &str, vars: &[(&'static str, String)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let key = &after[..close];
                match vars.iter().rev().find(|(k, _)| *k == key) {
                    Some((_, v)) => out.push_str(v),
                    None => out.push_str(&rest[open..open + close + 2]),
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// What a rule checks, whole, on one line (`kvlint rules`, the book's rule table).
pub fn description(r: &Rule) -> String {
    r.docs.what.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A rule's documentation as `kvlint explain` prints it (Markdown).
pub fn explain(r: &Rule) -> String {
    let mut out = format!(
        "# {} {}\n\nLevel: {} · Category: {}\n",
        r.id,
        r.name,
        r.level.name(),
        r.category
    );
    if !r.roles.is_empty() {
        out.push_str(&format!("Roles: {}\n", r.roles.join(", ")));
    }
    if !r.params.is_empty() {
        let params: Vec<String> = r.params.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        out.push_str(&format!("Parameters: {}\n", params.join(", ")));
    }
    let mut section =
        |title: &str, body: &str| out.push_str(&format!("\n## {title}\n\n{}\n", body.trim()));
    section("What it does", &r.docs.what);
    section("Why it matters", &r.docs.why);
    section("Example", &r.docs.example);
    if let Some(fix) = &r.docs.fix {
        section("How to fix", fix);
    }
    if !r.docs.references.is_empty() {
        let refs: Vec<String> = r.docs.references.iter().map(|x| format!("- {x}")).collect();
        section("References", &refs.join("\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_file_parses_and_is_named_after_its_id_and_name() {
        for (file, text) in RULE_FILES {
            let rule: Rule = toml::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(
                *file,
                format!("{}-{}.toml", rule.id, rule.name),
                "file name of {}",
                rule.id
            );
            assert!(
                !rule.docs.what.trim().is_empty() && !rule.docs.why.trim().is_empty(),
                "{file} docs"
            );
        }
    }

    #[test]
    fn templates_fill_known_placeholders_only() {
        let vars = vec![("pool", "681,280".to_string())];
        assert_eq!(
            render("pool {pool} vs {context}", &vars),
            "pool 681,280 vs {context}"
        );
        assert_eq!(render("unclosed {pool", &vars), "unclosed {pool");
    }
}
