//! Mapping items on several threads with the results in the items' order, so that output does not
//! depend on the thread count. `std::thread::scope` rather than a pool crate: the count comes
//! per run (`--jobs`), the threads live for one file only, and a shared counter hands out the
//! next item, so a slow item (one huge document) never holds up a fixed share of the others.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` applied to every item on up to `jobs` threads (this one included), in the items' order.
/// Each thread holds one item's working memory at a time. A panic in `f` is raised again here
/// with its own payload once the other threads have stopped, as if `f` had run on this thread.
pub fn map_ordered<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let threads = jobs.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(item)));
        }
    };
    let parts = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(work)).collect();
        // A panic here (this thread's share) unwinds through the scope, which joins the helpers.
        let mine = work();
        let mut parts = vec![Ok(mine)];
        parts.extend(helpers.into_iter().map(|h| h.join()));
        parts
    });
    let mut slots: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    for part in parts {
        match part {
            Ok(done) => done.into_iter().for_each(|(i, r)| slots[i] = Some(r)),
            Err(payload) => std::panic::resume_unwind(payload),
        }
    }
    slots
        .into_iter()
        .map(|r| r.expect("every item is taken by one thread"))
        .collect()
}

/// `a` on this thread while `b` runs on another, as rayon's `join`; a panic in either is raised
/// here with its own payload.
pub fn join<A, B: Send>(a: impl FnOnce() -> A, b: impl FnOnce() -> B + Send) -> (A, B) {
    std::thread::scope(|s| {
        let other = s.spawn(b);
        let mine = a();
        match other.join() {
            Ok(theirs) => (mine, theirs),
            Err(payload) => std::panic::resume_unwind(payload),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::{join, map_ordered};

    #[test]
    fn keeps_the_order_of_the_items_for_any_thread_count() {
        let items: Vec<u64> = (0..1000).collect();
        // Uneven work, so threads finish items out of order.
        let slow_square = |&x: &u64| {
            if x % 7 == 0 {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            x * x
        };
        let expected: Vec<u64> = (0..1000u64).map(|x| x * x).collect();
        for jobs in [0, 1, 2, 3, 8, 5000] {
            assert_eq!(
                map_ordered(&items, jobs, slow_square),
                expected,
                "jobs {jobs}"
            );
        }
        assert!(map_ordered(&[] as &[u64], 4, slow_square).is_empty());
    }

    #[test]
    fn join_returns_both_results_and_raises_the_other_threads_panic() {
        assert_eq!(join(|| 6 * 7, || "other".len()), (42, 5));
        let caught = std::panic::catch_unwind(|| join(|| 1, || -> u8 { panic!("scan broke") }));
        let payload = caught.expect_err("the other thread's panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"scan broke"));
    }

    #[test]
    fn a_panic_in_a_helper_thread_is_raised_with_its_message() {
        let items: Vec<usize> = (0..64).collect();
        let main = std::thread::current().id();
        let caught = std::panic::catch_unwind(|| {
            map_ordered(&items, 4, |&i| {
                // Only a helper panics, so the payload must cross threads to be seen here.
                if std::thread::current().id() != main {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    panic!("document {i} broke the reader");
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
                i
            })
        });
        let payload = caught.expect_err("the helper's panic reaches the caller");
        let message = payload
            .downcast_ref::<String>()
            .expect("a formatted message");
        assert!(message.starts_with("document "), "{message}");
        assert!(message.ends_with(" broke the reader"), "{message}");
    }
}
