//! `/metrics` in the OpenMetrics text format, through `prometheus-client` (the Prometheus
//! project's Rust client): request and decision counters, findings by rule, failures by kind,
//! requests in flight and the review latency histogram.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::time::Duration;

/// The `Content-Type` of the exposition.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Upper bounds of the latency histogram, in seconds: the webhook's budget is milliseconds,
/// the API server's timeout a few seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    path: &'static str,
    code: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DecisionLabels {
    decision: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FindingLabels {
    rule: String,
    level: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    kind: String,
}

/// Everything `/metrics` reports.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    decisions: Family<DecisionLabels, Counter>,
    findings: Family<FindingLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    latency: Histogram,
    in_flight: Gauge,
    running: Gauge,
    waiting: Gauge,
    abandoned: Gauge,
    tls_reloads: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        let m = Metrics {
            registry: Registry::default(),
            requests: Family::default(),
            decisions: Family::default(),
            findings: Family::default(),
            errors: Family::default(),
            latency: Histogram::new(BUCKETS),
            in_flight: Gauge::default(),
            running: Gauge::default(),
            waiting: Gauge::default(),
            abandoned: Gauge::default(),
            tls_reloads: Counter::default(),
        };
        m.registered()
    }
}

impl Metrics {
    fn registered(mut self) -> Self {
        let r = &mut self.registry;
        r.register(
            "kvlint_webhook_requests",
            "HTTP requests answered, by path and status code",
            self.requests.clone(),
        );
        r.register(
            "kvlint_webhook_decisions",
            "Admission decisions: allowed, denied, or skipped (no launch found)",
            self.decisions.clone(),
        );
        r.register(
            "kvlint_webhook_findings",
            "Findings in admission decisions, by rule and effective level",
            self.findings.clone(),
        );
        r.register(
            "kvlint_webhook_errors",
            "Requests or reloads that failed, by kind",
            self.errors.clone(),
        );
        r.register(
            "kvlint_webhook_request_duration_seconds",
            "Time to answer POST /validate",
            self.latency.clone(),
        );
        r.register(
            "kvlint_webhook_in_flight",
            "Requests being answered",
            self.in_flight.clone(),
        );
        r.register(
            "kvlint_webhook_reviews_running",
            "Reviews holding a slot (one blocking thread each)",
            self.running.clone(),
        );
        r.register(
            "kvlint_webhook_reviews_waiting",
            "Reviews waiting in line for a slot",
            self.waiting.clone(),
        );
        r.register(
            "kvlint_webhook_reviews_abandoned",
            "Reviews answered at their deadline whose work still holds a thread",
            self.abandoned.clone(),
        );
        r.register(
            "kvlint_webhook_tls_reloads",
            "Certificate reloads from disk",
            self.tls_reloads.clone(),
        );
        self
    }

    /// One HTTP request answered, by path and status code.
    pub fn request(&self, path: &str, code: u16) {
        let path = match path {
            "/validate" => "/validate",
            "/healthz" => "/healthz",
            "/readyz" => "/readyz",
            "/metrics" => "/metrics",
            _ => "other",
        };
        self.requests
            .get_or_create(&RequestLabels { path, code })
            .inc();
    }

    /// One admission decision: `allowed`, `denied` or `skipped` (nothing kvlint understands).
    pub fn decision(&self, decision: &str) {
        let labels = DecisionLabels {
            decision: decision.to_string(),
        };
        self.decisions.get_or_create(&labels).inc();
    }

    /// One finding in a decision, by rule and the level it had in that decision.
    pub fn finding(&self, rule: &str, level: &str) {
        let labels = FindingLabels {
            rule: rule.to_string(),
            level: level.to_string(),
        };
        self.findings.get_or_create(&labels).inc();
    }

    /// One failure: `bad_request`, `too_large`, `timeout`, `overloaded`, `internal`, `tls_reload`.
    pub fn error(&self, kind: &str) {
        let labels = ErrorLabels {
            kind: kind.to_string(),
        };
        self.errors.get_or_create(&labels).inc();
    }

    pub fn observe(&self, d: Duration) {
        self.latency.observe(d.as_secs_f64());
    }

    pub fn tls_reloaded(&self) {
        self.tls_reloads.inc();
    }

    /// Counts a request in flight until the guard drops.
    pub fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.inc();
        InFlight(self)
    }

    /// Counts a review holding a slot until the guard drops.
    pub fn running(&self) -> Tally {
        Tally::new(&self.running)
    }

    /// Counts a review waiting for a slot until the guard drops.
    pub fn waiting(&self) -> Tally {
        Tally::new(&self.waiting)
    }

    /// Counts a review answered at its deadline while its work runs on, until the guard drops.
    pub fn abandoned(&self) -> Tally {
        Tally::new(&self.abandoned)
    }

    /// Reviews running and waiting now.
    pub fn reviews(&self) -> (i64, i64) {
        (self.running.get(), self.waiting.get())
    }

    /// The OpenMetrics text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

pub struct InFlight<'a>(&'a Metrics);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.dec();
    }
}

/// One in a gauge until dropped; owned, so it can travel with a review to its thread.
pub struct Tally(Gauge);

impl Tally {
    fn new(gauge: &Gauge) -> Self {
        gauge.inc();
        Tally(gauge.clone())
    }
}

impl Drop for Tally {
    fn drop(&mut self) {
        self.0.dec();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_is_cumulative_and_counters_are_labelled() {
        let m = Metrics::default();
        m.observe(Duration::from_micros(300));
        m.observe(Duration::from_millis(3));
        m.observe(Duration::from_secs(10));
        m.request("/validate", 200);
        m.request("/nope", 404);
        m.finding("KV001", "deny");
        let text = m.render();
        assert!(text.contains("kvlint_webhook_request_duration_seconds_bucket{le=\"0.0005\"} 1\n"));
        assert!(text.contains("kvlint_webhook_request_duration_seconds_bucket{le=\"0.005\"} 2\n"));
        assert!(text.contains("kvlint_webhook_request_duration_seconds_bucket{le=\"2.5\"} 2\n"));
        assert!(text.contains("kvlint_webhook_request_duration_seconds_bucket{le=\"+Inf\"} 3\n"));
        assert!(text.contains("kvlint_webhook_requests_total{path=\"other\",code=\"404\"} 1\n"));
        assert!(text.contains("kvlint_webhook_findings_total{rule=\"KV001\",level=\"deny\"} 1\n"));
    }
}
