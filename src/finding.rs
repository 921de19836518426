//! What a check reports: a rule id, the values its message and help templates need, and where.
//! Levels, wording and fingerprints come from the rule data (`rules/*.toml`) when a report is built.

use crate::launch::ObjectRef;
use crate::source::Loc;

/// A secondary place the finding points at, with a short label.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub loc: Loc,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// Rule id, e.g. `KV001`.
    pub rule: &'static str,
    /// Values for the `{name}` placeholders of the rule's message and help.
    pub vars: Vec<(&'static str, String)>,
    /// The place the finding is about (the offending flag), if any.
    pub primary: Option<Loc>,
    /// The label on the primary place.
    pub primary_label: Option<String>,
    pub labels: Vec<Label>,
    /// Index of the launch in the run's launch list, when the finding is about one launch.
    pub launch: Option<usize>,
    pub object: Option<ObjectRef>,
    /// A place inside the launch the finding is about, when `primary` lies outside it (the
    /// `cmd += sys.argv[1:]` line before the call that runs `cmd`).
    pub anchor: Option<Loc>,
}

impl Finding {
    pub fn new(rule: &'static str, primary: Option<Loc>) -> Self {
        Finding {
            rule,
            vars: Vec::new(),
            primary,
            primary_label: None,
            labels: Vec::new(),
            launch: None,
            object: None,
            anchor: None,
        }
    }

    /// Ties the finding to the launch at `inside` although its own place is elsewhere.
    pub fn anchored(mut self, inside: Loc) -> Self {
        self.anchor = Some(inside);
        self
    }

    /// Sets a template value.
    pub fn var(mut self, name: &'static str, value: impl ToString) -> Self {
        self.vars.push((name, value.to_string()));
        self
    }

    pub fn label(mut self, text: impl Into<String>) -> Self {
        self.primary_label = Some(text.into());
        self
    }

    pub fn also(mut self, loc: Loc, text: impl Into<String>) -> Self {
        self.labels.push(Label {
            loc,
            text: text.into(),
        });
        self
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .rev()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}
