//! From an AdmissionRequest to a decision: the object under review goes through the same
//! extraction, plans and rules as `kvlint check`, and its findings become a deny (403 with the
//! rule ids and messages), warnings, or nothing.

use super::request::Review;
use crate::extract::{k8s, shell};
use crate::pipeline::{Options, Outcome};
use crate::report::{self, Rendered};
use crate::rules::Level;
use crate::yaml::{Node, Value};
use std::time::Instant;

/// Rules that mean "kvlint cannot tell" rather than "this deploy is unsafe": unknown model,
/// unknown GPU, a value only known at run time.
const UNKNOWN_RULES: [&str; 3] = ["INP002", "INP003", "INP004"];

/// The API server prints warnings as they are; it truncates long ones and large sets
/// (k8s-webhook.md §2.2: "Warnings over 256 characters and large numbers of warnings may be
/// truncated"), so kvlint cuts each itself and keeps the total bounded.
pub const WARNING_MAX_CHARS: usize = 256;
pub const WARNINGS_MAX_TOTAL_CHARS: usize = 4096;
/// A deny message lists every deny finding up to this length.
pub const MESSAGE_MAX_CHARS: usize = 4096;

/// What to do when kvlint cannot compute a launch's KV pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unknown {
    /// Allow, with a warning saying why the pool could not be checked.
    #[default]
    Warn,
    /// Deny, as `kvlint check` does.
    Deny,
}

impl Unknown {
    pub fn name(self) -> &'static str {
        match self {
            Unknown::Warn => "warn",
            Unknown::Deny => "deny",
        }
    }
}

/// The settings every decision uses.
#[derive(Debug, Clone, Default)]
pub struct Policy {
    pub options: Options,
    pub unknown: Unknown,
    /// The identities that act for a controller (see [`Controllers`]).
    pub controllers: Controllers,
}

/// The kube-controller-manager's controllers that create the objects kvlint reviews, by their
/// service accounts in kube-system (with `--use-service-account-credentials`, as kubeadm and the
/// managed clusters run it: Kubernetes `plugin/pkg/auth/authorizer/rbac/bootstrappolicy/
/// controller_policy.go`), and the manager's own identity when it runs without them.
pub const KUBE_CONTROLLERS: [&str; 8] = [
    "system:kube-controller-manager",
    "system:serviceaccount:kube-system:replicaset-controller",
    "system:serviceaccount:kube-system:deployment-controller",
    "system:serviceaccount:kube-system:statefulset-controller",
    "system:serviceaccount:kube-system:daemon-set-controller",
    "system:serviceaccount:kube-system:job-controller",
    "system:serviceaccount:kube-system:cronjob-controller",
    "system:serviceaccount:kube-system:replication-controller",
];

/// Operators trusted by default, as their release manifests install them: the LeaderWorkerSet
/// controller (kubernetes-sigs/lws `config/default`: namespace `lws-system`, service account
/// `lws-controller-manager`).
pub const OPERATOR_CONTROLLERS: [&str; 1] =
    ["system:serviceaccount:lws-system:lws-controller-manager"];

/// The user names whose writes of a controller-owned object are a controller's: only these turn
/// a deny into a warning. Any other identity (a CI or GitOps service account, a person) can
/// write an ownerReference by hand. [`KUBE_CONTROLLERS`] and [`OPERATOR_CONTROLLERS`] plus the
/// ones configured (`--trusted-controller`, kvlint.toml `[webhook] trusted-controllers`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Controllers(Vec<String>);

impl Default for Controllers {
    fn default() -> Self {
        Controllers(
            KUBE_CONTROLLERS
                .iter()
                .chain(&OPERATOR_CONTROLLERS)
                .map(|s| s.to_string())
                .collect(),
        )
    }
}

impl Controllers {
    /// The defaults and `more`.
    pub fn with(more: impl IntoIterator<Item = String>) -> Self {
        let mut c = Controllers::default();
        for m in more {
            if !c.0.contains(&m) {
                c.0.push(m);
            }
        }
        c
    }

    pub fn trusts(&self, username: &str) -> bool {
        self.0.iter().any(|c| c == username)
    }

    pub fn names(&self) -> &[String] {
        &self.0
    }
}

/// The outcome of reviewing one object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    pub allowed: bool,
    /// Why it was denied (empty when allowed).
    pub message: String,
    pub warnings: Vec<String>,
    /// Each finding's rule id and the level it had in this decision.
    pub findings: Vec<(String, Level)>,
    /// False when the object holds no launch kvlint understands: it passes untouched.
    pub understood: bool,
}

impl Verdict {
    fn untouched() -> Self {
        Verdict {
            allowed: true,
            ..Verdict::default()
        }
    }

    /// The verdict when the check itself failed: the unknown policy decides, and says so.
    pub fn internal_error(policy: &Policy, what: &str) -> Self {
        let reason = format!(
            "kvlint could not check this object ({what}); the webhook runs with --unknown={}",
            policy.unknown.name()
        );
        match policy.unknown {
            Unknown::Warn => Verdict {
                allowed: true,
                warnings: vec![truncate(&reason, WARNING_MAX_CHARS)],
                understood: true,
                ..Verdict::default()
            },
            Unknown::Deny => Verdict {
                allowed: false,
                message: reason,
                understood: true,
                ..Verdict::default()
            },
        }
    }

    /// The AdmissionReview answering request `uid`, as JSON; a deny carries code 403.
    pub fn answer(&self, uid: &str) -> Vec<u8> {
        let status = (!self.allowed).then(|| Status {
            status: "Failure",
            message: &self.message,
            reason: "Forbidden",
            code: 403,
        });
        let review = Answer {
            api_version: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response: Response {
                uid,
                allowed: self.allowed,
                status,
                warnings: &self.warnings,
            },
        };
        // Plain strings and numbers: serializing cannot fail.
        serde_json::to_vec(&review).unwrap_or_default()
    }
}

/// admission.k8s.io/v1 AdmissionReview with a response (k8s.io/api admission/v1 types.go).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Answer<'a> {
    api_version: &'static str,
    kind: &'static str,
    response: Response<'a>,
}

#[derive(serde::Serialize)]
struct Response<'a> {
    uid: &'a str,
    allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status<'a>>,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    warnings: &'a [String],
}

#[derive(serde::Serialize)]
struct Status<'a> {
    status: &'static str,
    message: &'a str,
    reason: &'static str,
    code: u16,
}

/// Kinds whose controllers create the objects kvlint reviews (Pods, ReplicaSets, Jobs,
/// LeaderWorkerSets, ...) and that the webhook checks themselves (deploy/): a deny on an object one
/// of them owns reaches no user, so it is only warned about there.
pub const POD_CONTROLLERS: [(&str, &str); 12] = [
    ("apps", "ReplicaSet"),
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"),
    ("disaggregatedset.x-k8s.io", "DisaggregatedSet"),
    ("workloads.x-k8s.io", "RoleBasedGroup"),
    ("serving.kserve.io", "InferenceService"),
    ("serving.kserve.io", "LLMInferenceService"),
    ("nvidia.com", "DynamoGraphDeployment"),
];

/// The review ran past its deadline; what is left is not computed.
#[derive(Debug)]
pub struct Expired;

/// Reviews one request. Only creations and updates of a whole object are checked; deletions,
/// connections and subresources (scale, status) pass untouched. `cut` counts the subtrees
/// [`super::prune`] replaced (too deep to read): they fall under the unknown policy. Work stops
/// at `deadline`. The object's text moves into the review's sources: no copy of it is made.
pub fn review(
    req: Review,
    cut: usize,
    policy: &Policy,
    deadline: Option<Instant>,
) -> Result<Verdict, Expired> {
    let checked = req.checked();
    let Some(text) = req.object.filter(|_| checked) else {
        return Ok(Verdict::untouched());
    };
    let in_time = || match deadline {
        Some(d) if Instant::now() >= d => Err(Expired),
        _ => Ok(()),
    };
    let mut outcome = Outcome::default();
    let name = format!("{}/{}/{}.json", req.kind, req.namespace, req.name);
    let file = outcome.sources.add(name, text);
    let Ok(tree) = super::object::to_tree(file, &outcome.sources.get(file).text) else {
        return Ok(Verdict::internal_error(
            policy,
            "the object is not readable JSON",
        ));
    };
    let (launches, findings) = if k8s::is_object(&tree) {
        // The shell reader stops at the deadline too (an expansion bomb in an `sh -c`), leaving
        // INP001 where it stopped, so the review's slot is not held past its deadline.
        let stop = shell::Stop {
            deadline,
            flag: None,
        };
        shell::with_stop(stop, || k8s::read(file, outcome.sources.get(file), &tree))
    } else {
        (Vec::new(), Vec::new())
    };
    in_time()?;
    let owner = controller(&tree, &req.username, &policy.controllers);
    // What reading found (INP004 in a container script, INP006): judged with the launches.
    outcome.findings.extend(findings);
    drop(tree);
    // An object with no launch passes untouched unless reading it found something to say (an
    // engine it names but gives no launch for: INP006).
    let said = outcome.findings.iter().any(|f| f.rule != "INP007");
    if launches.is_empty() && !said {
        return Ok(if cut > 0 {
            Verdict::internal_error(policy, &too_deep(cut))
        } else {
            Verdict::untouched()
        });
    }
    for launch in launches {
        in_time()?;
        outcome.check_launch(launch, file, &policy.options, None);
    }
    in_time()?;
    outcome.finish(1);
    outcome.apply_suppressions(&policy.options.rules);
    in_time()?;
    let mut verdict = decide(
        &report::render_with(&outcome, &policy.options.rules, 1),
        policy,
        owner,
    );
    if cut > 0 {
        let unread = Verdict::internal_error(policy, &too_deep(cut));
        verdict.allowed &= unread.allowed;
        if !unread.allowed {
            verdict.message = join_messages(&unread.message, &verdict.message);
        }
        verdict.warnings.splice(0..0, unread.warnings);
    }
    Ok(verdict)
}

fn too_deep(cut: usize) -> String {
    let s = if cut == 1 { "" } else { "s" };
    format!(
        "{cut} part{s} of the object nest deeper than {} levels and were not read",
        super::prune::MAX_DEPTH
    )
}

fn join_messages(a: &str, b: &str) -> String {
    if b.is_empty() {
        return a.to_string();
    }
    truncate(&format!("{a}; {b}"), MESSAGE_MAX_CHARS)
}

/// The controller that owns the object (a ReplicaSet's Pod, a DisaggregatedSet's
/// LeaderWorkerSet), if it is a kind that creates pods and the request comes from a trusted
/// controller identity. Anyone can write an ownerReference, and any service account is a
/// `system:` user: only the identities in `trusted` act for a controller.
fn controller(object: &Node, username: &str, trusted: &Controllers) -> Option<String> {
    if !trusted.trusts(username) {
        return None;
    }
    let owners = object.get("metadata")?.get("ownerReferences")?;
    let Value::Seq(owners) = &owners.value else {
        return None;
    };
    let owner = owners.iter().find(|o| {
        o.get("controller")
            .is_some_and(|c| c.value == Value::Bool(true))
    })?;
    let text = |key: &str| owner.get(key).and_then(Node::as_str).unwrap_or("");
    let group = text("apiVersion").rsplit_once('/').map_or("", |(g, _)| g);
    let kind = text("kind");
    POD_CONTROLLERS
        .contains(&(group, kind))
        .then(|| format!("{kind} {}", text("name")))
}

/// Turns rendered findings into a verdict under the policy. A controller-owned object is only
/// warned about: a deny there reaches no user, only a controller that retries forever; the
/// owner is checked when it is created.
fn decide(findings: &[Rendered], policy: &Policy, owner: Option<String>) -> Verdict {
    let mut denies = Vec::new();
    let mut warnings = Vec::new();
    let mut levels = Vec::new();
    let mut unknown = 0;
    for f in findings {
        let is_unknown = UNKNOWN_RULES.contains(&f.rule.as_str());
        let mut level = f.level;
        if is_unknown && policy.unknown == Unknown::Warn && level == Level::Deny {
            level = Level::Warn;
            unknown += 1;
        }
        if owner.is_some() && level == Level::Deny {
            level = Level::Warn;
        }
        levels.push((f.rule.clone(), level));
        match level {
            Level::Deny => denies.push(f),
            Level::Warn => warnings.push(truncate(&line(f), WARNING_MAX_CHARS)),
            Level::Allow => {}
        }
    }
    if unknown > 0 {
        warnings.insert(0, unknown_reason(unknown));
    }
    if let Some(owner) = &owner {
        if findings.iter().any(|f| f.level == Level::Deny) {
            warnings.insert(
                0,
                format!("kvlint: deny findings only warned here: this object is managed by {owner}, which kvlint checks itself"),
            );
        }
    }
    Verdict {
        allowed: denies.is_empty(),
        message: deny_message(&denies),
        warnings: bound_total(warnings),
        findings: levels,
        understood: true,
    }
}

fn unknown_reason(n: usize) -> String {
    let s = if n == 1 { "" } else { "s" };
    truncate(
        &format!("kvlint: {n} finding{s} below could not be verified (unknown model, GPU or value) and are allowed because the webhook runs with --unknown=warn"),
        WARNING_MAX_CHARS,
    )
}

/// `KV001 [container sglang]: message`.
fn line(f: &Rendered) -> String {
    let container = f
        .object
        .as_ref()
        .and_then(|o| o.container.as_deref())
        .map(|c| format!(" [container {c}]"))
        .unwrap_or_default();
    format!("{}{container}: {}", f.rule, f.message)
}

fn deny_message(denies: &[&Rendered]) -> String {
    if denies.is_empty() {
        return String::new();
    }
    let n = denies.len();
    let s = if n == 1 { "" } else { "s" };
    let mut msg = format!("kvlint: {n} deny finding{s}");
    for f in denies {
        msg.push_str(&format!("; {} ({}); fix: {}", line(f), f.name, f.help));
    }
    msg.push_str(". `kvlint explain <RULE>` documents each rule");
    truncate(&msg, MESSAGE_MAX_CHARS)
}

/// Keeps warnings, in order, while their total stays under the API server's budget, and says
/// how many were left out.
fn bound_total(warnings: Vec<String>) -> Vec<String> {
    let reserve = 64;
    let mut total = 0;
    let mut out = Vec::new();
    for (i, w) in warnings.iter().enumerate() {
        let len = w.chars().count();
        if total + len > WARNINGS_MAX_TOTAL_CHARS - reserve {
            out.push(format!(
                "kvlint: {} more warnings not shown",
                warnings.len() - i
            ));
            break;
        }
        total += len;
        out.push(w.clone());
    }
    out
}

/// Cuts to at most `max` characters, ending in `…` when cut; control characters become spaces
/// (warnings travel in HTTP headers). One pass: every answer's messages go through here.
pub fn truncate(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(4 * max));
    let mut chars = s.chars().peekable();
    let mut n = 0;
    while let Some(c) = chars.next() {
        if n + 1 >= max && chars.peek().is_some() {
            out.push('…');
            break;
        }
        out.push(if c.is_control() { ' ' } else { c });
        n += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncate_counts_characters_and_marks_the_cut() {
        assert_eq!(truncate("abc", 3), "abc");
        assert_eq!(truncate("a\nbcd", 3), "a …");
        assert_eq!(truncate("ééééé", 4), "ééé…");
        assert_eq!(truncate("éééé", 4), "éééé");
        assert_eq!(truncate("", 4), "");
    }

    #[test]
    fn an_internal_error_is_answered_by_the_unknown_policy_with_its_reason() {
        let warn = Verdict::internal_error(&Policy::default(), "internal error");
        assert!(warn.allowed);
        assert!(warn.warnings[0].contains("--unknown=warn"));
        let deny = Policy {
            unknown: Unknown::Deny,
            ..Policy::default()
        };
        let denied = Verdict::internal_error(&deny, "internal error");
        assert!(!denied.allowed);
        assert!(denied
            .message
            .contains("could not check this object (internal error)"));
    }

    #[test]
    fn warnings_stay_within_the_total_budget() {
        let many = vec!["x".repeat(WARNING_MAX_CHARS); 40];
        let out = bound_total(many);
        let total: usize = out.iter().map(|w| w.chars().count()).sum();
        assert!(total <= WARNINGS_MAX_TOTAL_CHARS);
        assert!(out
            .last()
            .is_some_and(|w| w.contains("more warnings not shown")));
    }
}
