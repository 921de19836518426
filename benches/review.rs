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
        let bytes = body.len();
        let verdict = match server::parse_review(&body) {
            Ok(req) => {
                // As the server does: the body goes once the object's text is out of it.
                drop(body);
                kvlint::webhook::admission::review(req, cut, &policy, None)
                    .unwrap_or_else(|_| Verdict::internal_error(&policy, "deadline"))
            }
            Err(reason) => Verdict {
                message: format!("HTTP 400: {reason}"),
                ..Verdict::default()
            },
        };
        println!(
            "{path}: {} bytes, {:.3} s, allowed={} understood={} warnings={} message={:.120}",
            bytes,
            t.elapsed().as_secs_f64(),
            verdict.allowed,
            verdict.understood,
            verdict.warnings.len(),
            verdict.message
        );
    }
}
