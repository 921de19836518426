//! Mapping items on several threads with the results handed on in the items' order, so that
//! output does not depend on the thread count. `std::thread::scope` rather than a pool crate: the
//! count comes per run (`--jobs`), the threads live for one file only, and a shared counter hands
//! out the next item, so a slow item (one huge document) never holds up a fixed share of the
//! others.

use std::any::Any;
use std::collections::VecDeque;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// `f` applied to every item on up to `jobs` threads (this one included), each result handed to
/// `consume` on this thread in the items' order as soon as it and every one before it are done,
/// while the other threads go on. This thread takes items itself whenever the next result is not
/// ready. No item is taken more than `window` places past the next one to consume, so the results
/// waiting for their turn stay bounded. A panic in `f` is raised again here with its own payload
/// once the other threads have stopped, as if `f` had run on this thread.
pub fn for_each_ordered<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    window: usize,
    f: impl Fn(&T) -> R + Sync,
    mut consume: impl FnMut(R),
) {
    let threads = jobs.clamp(1, items.len().max(1));
    if threads == 1 {
        items.iter().map(f).for_each(consume);
        return;
    }
    let work = Work {
        items,
        window: window.max(threads),
        f,
        state: Mutex::new(State {
            taken: 0,
            consumed: 0,
            ready: VecDeque::new(),
            failed: None,
            stop: false,
        }),
        changed: Condvar::new(),
    };
    std::thread::scope(|s| {
        // Dropped on the way out, panic or not, before the scope joins the helpers: they stop.
        let _stop = StopOnDrop(&work);
        for _ in 1..threads {
            s.spawn(|| work.help());
        }
        work.lead(&mut consume);
    });
}

struct Work<'a, T, R, F> {
    items: &'a [T],
    window: usize,
    f: F,
    state: Mutex<State<R>>,
    /// Signalled when a result is ready, a result is consumed, or the work stops.
    changed: Condvar,
}

struct State<R> {
    /// Items taken by some thread: `0..taken`.
    taken: usize,
    /// Results handed to `consume`: `0..consumed`.
    consumed: usize,
    /// Results of items `consumed..`, each `None` until done.
    ready: VecDeque<Option<R>>,
    /// The first panic of a helper, raised again on the calling thread.
    failed: Option<Box<dyn Any + Send>>,
    stop: bool,
}

/// What the calling thread does next.
enum Next<R> {
    Consume(R),
    Take(usize),
}

impl<T: Sync, R: Send, F: Fn(&T) -> R + Sync> Work<'_, T, R, F> {
    fn lock(&self) -> MutexGuard<'_, State<R>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn wait<'g>(&self, guard: MutexGuard<'g, State<R>>) -> MutexGuard<'g, State<R>> {
        self.changed
            .wait(guard)
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The next item to take, if the window allows one.
    fn take(&self, st: &mut State<R>) -> Option<usize> {
        let open = st.taken < self.items.len() && st.taken < st.consumed + self.window;
        open.then(|| {
            st.taken += 1;
            st.taken - 1
        })
    }

    fn put(&self, i: usize, r: R) {
        let mut st = self.lock();
        let k = i - st.consumed;
        if st.ready.len() <= k {
            st.ready.resize_with(k + 1, || None);
        }
        st.ready[k] = Some(r);
        self.changed.notify_all();
    }

    /// The calling thread: consumes results in order, and takes items while the next is not ready.
    fn lead(&self, consume: &mut impl FnMut(R)) {
        loop {
            let next = {
                let mut st = self.lock();
                loop {
                    if let Some(payload) = st.failed.take() {
                        drop(st);
                        panic::resume_unwind(payload);
                    }
                    if let Some(Some(_)) = st.ready.front() {
                        if let Some(Some(r)) = st.ready.pop_front() {
                            st.consumed += 1;
                            self.changed.notify_all();
                            break Next::Consume(r);
                        }
                    }
                    if st.consumed == self.items.len() {
                        return;
                    }
                    if let Some(i) = self.take(&mut st) {
                        break Next::Take(i);
                    }
                    st = self.wait(st);
                }
            };
            match next {
                Next::Consume(r) => consume(r),
                Next::Take(i) => self.put(i, (self.f)(&self.items[i])),
            }
        }
    }

    /// A helper thread: takes items until none is left or the work stops.
    fn help(&self) {
        loop {
            let i = {
                let mut st = self.lock();
                loop {
                    if st.stop {
                        return;
                    }
                    if let Some(i) = self.take(&mut st) {
                        break i;
                    }
                    if st.taken == self.items.len() {
                        return;
                    }
                    st = self.wait(st);
                }
            };
            match panic::catch_unwind(AssertUnwindSafe(|| (self.f)(&self.items[i]))) {
                Ok(r) => self.put(i, r),
                Err(payload) => {
                    let mut st = self.lock();
                    st.failed.get_or_insert(payload);
                    st.stop = true;
                    self.changed.notify_all();
                    return;
                }
            }
        }
    }
}

struct StopOnDrop<'w, 'a, T, R, F>(&'w Work<'a, T, R, F>);

impl<T, R, F> Drop for StopOnDrop<'_, '_, T, R, F> {
    fn drop(&mut self) {
        let mut st = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
        st.stop = true;
        self.0.changed.notify_all();
    }
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
    use super::{for_each_ordered, join};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The results of `for_each_ordered`, with a check on every hand-over that no item was
    /// started more than `window` places past the one handed over.
    fn collect(
        items: &[u64],
        jobs: usize,
        window: usize,
        f: impl Fn(u64) -> u64 + Sync,
    ) -> Vec<u64> {
        let started = AtomicUsize::new(0);
        let mut out = Vec::new();
        let wide = window.max(jobs);
        for_each_ordered(
            items,
            jobs,
            window,
            |&x| {
                started.fetch_add(1, Ordering::SeqCst);
                f(x)
            },
            |r| {
                let started = started.load(Ordering::SeqCst);
                assert!(
                    started <= out.len() + 1 + wide,
                    "{started} started, {} handed over",
                    out.len()
                );
                out.push(r);
            },
        );
        out
    }

    #[test]
    fn hands_results_over_in_the_items_order_for_any_thread_count() {
        let items: Vec<u64> = (0..1000).collect();
        // Uneven work, so threads finish items out of order.
        let slow_square = |x: u64| {
            if x.is_multiple_of(7) {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            x * x
        };
        let expected: Vec<u64> = (0..1000u64).map(|x| x * x).collect();
        for jobs in [0, 1, 2, 3, 8, 5000] {
            for window in [1, 4, 512] {
                assert_eq!(
                    collect(&items, jobs, window, slow_square),
                    expected,
                    "jobs {jobs}, window {window}"
                );
            }
        }
        assert!(collect(&[], 4, 8, slow_square).is_empty());
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
            for_each_ordered(
                &items,
                4,
                8,
                |&i| {
                    // Only a helper panics, so the payload must cross threads to be seen here.
                    if std::thread::current().id() != main {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                        panic!("document {i} broke the reader");
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                    i
                },
                drop,
            )
        });
        let payload = caught.expect_err("the helper's panic reaches the caller");
        let message = payload
            .downcast_ref::<String>()
            .expect("a formatted message");
        assert!(message.starts_with("document "), "{message}");
        assert!(message.ends_with(" broke the reader"), "{message}");
    }

    #[test]
    fn a_panic_while_consuming_stops_the_helpers_and_reaches_the_caller() {
        let items: Vec<usize> = (0..200).collect();
        let caught = std::panic::catch_unwind(|| {
            for_each_ordered(
                &items,
                3,
                4,
                |&i| i,
                |i| assert!(i < 10, "checking {i} broke"),
            )
        });
        let payload = caught.expect_err("the consumer's panic reaches the caller");
        let message = payload
            .downcast_ref::<String>()
            .expect("a formatted message");
        assert_eq!(message, "checking 10 broke");
    }
}
