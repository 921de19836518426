//! Rule selection as ruff has it: `select`, `extend-select` and `ignore`, by rule id, name,
//! category or id prefix (`KV`, `PD00`), or `ALL`. A rule left out is at level `allow`: never
//! reported. Selection never raises a rule above its own level; a rule that is `allow` by
//! default is reported as `warn` once selected by name.

use super::RuleSettings;
use super::{all, Level, Rule};

/// The selectors of one source (kvlint.toml, or the command line).
#[derive(Debug, Default, Clone)]
pub struct Selection {
    /// Replaces the enabled set (`None`: every rule at its level).
    pub select: Option<Vec<String>>,
    /// Adds to the enabled set.
    pub extend_select: Vec<String>,
    /// Removes from the enabled set; wins over `select` and `extend-select`.
    pub ignore: Vec<String>,
}

/// A selector that names no rule, with the closest one.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown rule selector `{selector}`{hint}: use a rule id (KV001), name (pool-below-context), category (correctness), id prefix (KV) or ALL")]
pub struct UnknownSelector {
    pub selector: String,
    hint: String,
}

impl Selection {
    pub fn is_empty(&self) -> bool {
        self.select.is_none() && self.extend_select.is_empty() && self.ignore.is_empty()
    }

    /// Every selector, checked against the rules.
    pub fn validate(&self) -> Result<(), UnknownSelector> {
        let every = self.select.iter().flatten();
        for s in every.chain(&self.extend_select).chain(&self.ignore) {
            if !all().iter().any(|r| matches(s, r)) {
                return Err(UnknownSelector {
                    selector: s.clone(),
                    hint: suggest(s).map_or(String::new(), |m| format!(" (did you mean `{m}`?)")),
                });
            }
        }
        Ok(())
    }

    /// Applies the selection on top of `settings` (the rule files and `[rules]` levels).
    pub fn apply(&self, settings: &mut RuleSettings) {
        for rule in all() {
            let hit = |list: &[String]| list.iter().any(|s| matches(s, rule));
            let level = settings.level(rule);
            let dropped = self.select.as_deref().is_some_and(|s| !hit(s));
            let added = hit(&self.extend_select)
                || self
                    .select
                    .as_deref()
                    .is_some_and(|s| s.iter().any(|x| names(x, rule)));
            let new = if hit(&self.ignore) || (dropped && !hit(&self.extend_select)) {
                Level::Allow
            } else if added && level == Level::Allow {
                Level::Warn
            } else {
                level
            };
            if new != level {
                settings.set_level(&rule.id, new);
            }
        }
    }
}

/// Whether `selector` covers `rule`: `ALL`, its id or an id prefix, its name, or its category.
pub fn matches(selector: &str, rule: &Rule) -> bool {
    let s = selector.trim();
    s.eq_ignore_ascii_case("all")
        || rule.id.len() >= s.len() && rule.id[..s.len()].eq_ignore_ascii_case(s) && !s.is_empty()
        || rule.name.eq_ignore_ascii_case(s)
        || rule.category.eq_ignore_ascii_case(s)
}

/// Whether `selector` names this one rule (id or name), which enables a rule that is off by default.
fn names(selector: &str, rule: &Rule) -> bool {
    rule.id.eq_ignore_ascii_case(selector.trim()) || rule.name.eq_ignore_ascii_case(selector.trim())
}

/// The rule id or name closest to a mistyped one.
pub fn suggest(key: &str) -> Option<String> {
    let key = key.to_ascii_lowercase();
    all()
        .iter()
        .flat_map(|r| [r.id.clone(), r.name.clone()])
        .map(|c| (strsim::jaro_winkler(&key, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::find;

    fn level(s: &RuleSettings, id: &str) -> Level {
        s.level(find(id).expect(id))
    }

    #[test]
    fn select_keeps_only_what_it_names_and_ignore_wins() {
        let mut s = RuleSettings::default();
        Selection {
            select: Some(vec!["KV".into(), "pd-context-mismatch".into()]),
            extend_select: vec!["suppression".into()],
            ignore: vec!["KV003".into()],
        }
        .apply(&mut s);
        assert_eq!(level(&s, "KV001"), Level::Deny);
        assert_eq!(level(&s, "PD001"), find("PD001").unwrap().level);
        assert_eq!(level(&s, "SUP001"), find("SUP001").unwrap().level);
        assert_eq!(level(&s, "KV003"), Level::Allow, "ignore wins over select");
        assert_eq!(level(&s, "PD002"), Level::Allow, "not selected");
        assert_eq!(level(&s, "CFG001"), Level::Allow, "not selected");
    }

    #[test]
    fn categories_prefixes_and_all_match_case_insensitively() {
        let kv001 = find("KV001").unwrap();
        for s in [
            "ALL",
            "all",
            "kv",
            "KV00",
            "kv001",
            "Pool-Below-Context",
            "correctness",
        ] {
            assert!(matches(s, kv001), "{s}");
        }
        for s in ["PD", "KV0011", "deployment", ""] {
            assert!(!matches(s, kv001), "{s:?}");
        }
    }

    #[test]
    fn an_unknown_selector_is_an_error_with_a_suggestion() {
        let sel = Selection {
            ignore: vec!["pool-below-contxt".into()],
            ..Selection::default()
        };
        let e = sel.validate().unwrap_err().to_string();
        assert!(
            e.contains("`pool-below-contxt` (did you mean `pool-below-context`?)"),
            "{e}"
        );
        assert!(Selection {
            select: Some(vec!["KV".into(), "input".into()]),
            ..Selection::default()
        }
        .validate()
        .is_ok());
    }
}
