//! Rule levels and parameters as a run uses them: the rule files' own, then kvlint.toml's
//! `[rules]` and the selection (`--select`, `--ignore`) over them.

use super::{Level, Rule};
use std::collections::BTreeMap;

/// Rule levels and parameters after the configuration: what the evaluators and reports use.
#[derive(Debug, Default, Clone)]
pub struct RuleSettings {
    levels: BTreeMap<String, Level>,
    params: BTreeMap<(String, String), f64>,
}

impl RuleSettings {
    /// The level a rule reports at: the configured one, else the rule's own.
    pub fn level(&self, rule: &Rule) -> Level {
        self.levels.get(&rule.id).copied().unwrap_or(rule.level)
    }

    /// A rule parameter: the configured value, else the rule file's.
    pub fn param(&self, rule: &Rule, name: &str) -> Option<f64> {
        self.params
            .get(&(rule.id.clone(), name.to_string()))
            .copied()
            .or_else(|| rule.param(name))
    }

    /// Sets a rule's level (by id).
    pub fn set_level(&mut self, id: &str, level: Level) {
        self.levels.insert(id.to_string(), level);
    }

    /// Sets a rule parameter (by rule id).
    pub fn set_param(&mut self, id: &str, name: &str, value: f64) {
        self.params
            .insert((id.to_string(), name.to_string()), value);
    }
}
