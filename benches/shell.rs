//! `cargo bench --bench shell [-- MB]`: reading one long launch line (a padded argv of `MB`
//! megabytes, 8 by default) with the shell reader: the best of 3 runs' time and MB/s, and the
//! peak heap bytes held per input byte, measured with a counting allocator (this binary only).

use kvlint::extract::shell;
use kvlint::source::FileId;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Relaxed) + layout.size();
            PEAK.fetch_max(live, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        LIVE.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            let live = LIVE.fetch_add(new_size, Relaxed) + new_size;
            PEAK.fetch_max(live, Relaxed);
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

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
        let before = LIVE.load(Relaxed);
        PEAK.store(before, Relaxed);
        let t = Instant::now();
        let out = std::hint::black_box(shell::script(FileId(0), &text));
        best = best.min(t.elapsed().as_secs_f64());
        peak = PEAK.load(Relaxed) - before;
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
