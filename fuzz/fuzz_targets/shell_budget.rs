#![no_main]
//! The shell reader under its expansion budget, with a counting allocator: each input's steps,
//! characters and peak heap are asserted (`harness::shell_budget`).

#[path = "../harness.rs"]
mod harness;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static BASE: AtomicUsize = AtomicUsize::new(0);

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
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// `true`: starts a measurement; `false`: the peak above its start.
fn peak(reset: bool) -> usize {
    if reset {
        let live = LIVE.load(Relaxed);
        BASE.store(live, Relaxed);
        PEAK.store(live, Relaxed);
        return 0;
    }
    PEAK.load(Relaxed).saturating_sub(BASE.load(Relaxed))
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| harness::shell_budget(data, Some(&peak)));
