//! `cargo bench --bench shell [-- MB]`: reading one long launch line (a padded argv of `MB`
//! megabytes, 8 by default) with the shell reader: the best of 3 runs' time and MB/s, and the
//! peak heap bytes held per input byte, measured with a counting allocator (this binary only).

use kvlint::extract::shell;
use kvlint::source::FileId;
use std::time::Instant;

#[path = "../tests/counting/mod.rs"]
mod counting;

/// `vllm serve m --flag-N N ...` on one line, `bytes` long.
fn long_line(bytes: usize) -> String {
    let mut s = String::from("vllm serve m");
    let mut i = 0;
    while s.len() < bytes {
        s.push_str(&format!(" --flag-{i} {i}"));
        i += 1;
    }
    s.push('\n');
    s
}

fn main() {
    let mb: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(8);
    let text = long_line(mb << 20);
    let mut best = f64::INFINITY;
    let mut peak = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let (p, out) =
            counting::peak_during(|| std::hint::black_box(shell::script(FileId(0), &text)));
        best = best.min(t.elapsed().as_secs_f64());
        peak = p;
        assert_eq!(out.launches.len(), 1);
    }
    println!(
        "one line of {} bytes: {best:.3} s ({:.1} MB/s), peak {} MB above the input, {:.1} bytes per input byte",
        text.len(),
        text.len() as f64 / best / 1e6,
        peak >> 20,
        peak as f64 / text.len() as f64
    );
}
