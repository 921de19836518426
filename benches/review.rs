//! `cargo bench --bench review -- FILE...`: answers each AdmissionReview file the way
//! `POST /validate` does (parse, review), and prints the verdict and the time it took. Run the
//! built binary under `/usr/bin/time -v` to see the peak memory of one review.

use kvlint::webhook::{prune, server, Policy, Verdict};
use std::time::Instant;

fn main() {
    let policy = Policy::default();
    for path in std::env::args().skip(1).filter(|a| !a.starts_with('-')) {
        let body = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let t = Instant::now();
        let (body, cut) = prune::prune(&body, prune::MAX_DEPTH).unwrap_or((body, 0));
        let verdict = match server::parse_review(&body) {
            Ok(req) => kvlint::webhook::admission::review(&req, cut, &policy, None)
                .unwrap_or_else(|_| Verdict::internal_error(&policy, "deadline")),
            Err(reason) => Verdict {
                message: format!("HTTP 400: {reason}"),
                ..Verdict::default()
            },
        };
        println!(
            "{path}: {} bytes, {:.3} s, allowed={} understood={} warnings={} message={:.120}",
            body.len(),
            t.elapsed().as_secs_f64(),
            verdict.allowed,
            verdict.understood,
            verdict.warnings.len(),
            verdict.message
        );
    }
}
