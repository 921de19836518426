//! Prometheus text exposition (format 0.0.4), written by hand: a few counters, one gauge and
//! one latency histogram do not justify a metrics crate.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency histogram, in seconds: the webhook's budget is milliseconds,
/// the API server's timeout a few seconds.
const BUCKETS: [f64; 12] = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Counters keyed by their label set (already rendered as `k="v",...`).
#[derive(Default)]
struct Family(Mutex<BTreeMap<String, u64>>);

impl Family {
    fn inc(&self, labels: String) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *map.entry(labels).or_default() += 1;
    }

    fn write(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        for (labels, n) in map.iter() {
            let _ = writeln!(out, "{name}{{{labels}}} {n}");
        }
    }
}

#[derive(Default)]
struct Histogram {
    counts: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    fn observe(&self, d: Duration) {
        let secs = d.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|b| secs <= *b) {
            self.counts[i].fetch_add(1, Ordering::Relaxed);
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    fn write(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (b, c) in BUCKETS.iter().zip(&self.counts) {
            cumulative += c.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {cumulative}");
        }
        let count = self.count.load(Ordering::Relaxed);
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {count}");
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {count}");
    }
}

/// Everything `/metrics` reports.
#[derive(Default)]
pub struct Metrics {
    requests: Family,
    decisions: Family,
    findings: Family,
    errors: Family,
    latency: Histogram,
    in_flight: AtomicU64,
    tls_reloads: AtomicU64,
}

impl Metrics {
    /// One HTTP request answered, by path and status code.
    pub fn request(&self, path: &str, code: u16) {
        let path = match path {
            "/validate" | "/healthz" | "/readyz" | "/metrics" => path,
            _ => "other",
        };
        self.requests
            .inc(format!("path=\"{path}\",code=\"{code}\""));
    }

    /// One admission decision: `allowed`, `denied` or `skipped` (nothing kvlint understands).
    pub fn decision(&self, decision: &str) {
        self.decisions.inc(format!("decision=\"{decision}\""));
    }

    /// One finding in a decision, by rule and the level it had in that decision.
    pub fn finding(&self, rule: &str, level: &str) {
        self.findings
            .inc(format!("rule=\"{rule}\",level=\"{level}\""));
    }

    /// One failure: `bad_request`, `too_large`, `timeout`, `overloaded`, `internal`, `tls_reload`.
    pub fn error(&self, kind: &str) {
        self.errors.inc(format!("kind=\"{kind}\""));
    }

    pub fn observe(&self, d: Duration) {
        self.latency.observe(d);
    }

    pub fn tls_reloaded(&self) {
        self.tls_reloads.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts a request in flight until the guard drops.
    pub fn in_flight(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(self)
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.requests.write(
            &mut out,
            "kvlint_webhook_requests_total",
            "HTTP requests answered, by path and status code.",
        );
        self.decisions.write(
            &mut out,
            "kvlint_webhook_decisions_total",
            "Admission decisions: allowed, denied, or skipped (no launch found).",
        );
        self.findings.write(
            &mut out,
            "kvlint_webhook_findings_total",
            "Findings in admission decisions, by rule and effective level.",
        );
        self.errors.write(
            &mut out,
            "kvlint_webhook_errors_total",
            "Requests or reloads that failed, by kind.",
        );
        self.latency.write(
            &mut out,
            "kvlint_webhook_request_duration_seconds",
            "Time to answer POST /validate.",
        );
        let in_flight = self.in_flight.load(Ordering::Relaxed);
        let reloads = self.tls_reloads.load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "# HELP kvlint_webhook_in_flight Requests being answered.\n\
             # TYPE kvlint_webhook_in_flight gauge\nkvlint_webhook_in_flight {in_flight}\n\
             # HELP kvlint_webhook_tls_reloads_total Certificate reloads from disk.\n\
             # TYPE kvlint_webhook_tls_reloads_total counter\nkvlint_webhook_tls_reloads_total {reloads}"
        );
        out
    }
}

pub struct InFlight<'a>(&'a Metrics);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
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
