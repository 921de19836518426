//! What one read of a shell text may spend, so that hostile scripts stay bounded: characters
//! produced by expansion (a variable doubled 30 times is 2^30 characters) and steps (commands
//! walked, word parts expanded). Both grow with the input, so a long but honest script is read
//! whole; a script that outgrows them is cut where the budget ran out, with `INP001` there.
//!
//! The same counters are where a caller with a deadline (the webhook's review) stops the read:
//! [`with_stop`] sets a deadline or a flag for the reads on this thread, checked every
//! [`CHECK_EVERY`] steps.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Characters expansion may produce: 1 Mi, plus four per input byte (every character expanded
/// counts, literals too; an `sh -c` script is expanded once as a word, then read again).
const BASE_BYTES: usize = 1 << 20;
const BYTES_PER_INPUT_BYTE: usize = 4;
/// Steps on top of the input's own: 1 Mi, plus four per input byte.
const BASE_STEPS: usize = 1 << 20;
const STEPS_PER_INPUT_BYTE: usize = 4;
/// Steps between two looks at the clock or the flag.
pub const CHECK_EVERY: usize = 4096;

/// When reads on this thread must stop: a deadline, a flag another thread sets, or both.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    pub deadline: Option<Instant>,
    pub flag: Option<Arc<AtomicBool>>,
}

impl Stop {
    fn reached(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
            || self
                .flag
                .as_ref()
                .is_some_and(|f| f.load(Ordering::Relaxed))
    }
}

thread_local! {
    static STOP: RefCell<Stop> = RefCell::new(Stop::default());
}

/// Runs `f` with shell reads on this thread stopping at `stop`: a read that reaches it walks no
/// further and leaves `INP001` ("stopped at the deadline") where it stopped, so its result is
/// never taken for a whole read. The previous setting is restored when `f` returns or unwinds.
pub fn with_stop<T>(stop: Stop, f: impl FnOnce() -> T) -> T {
    struct Restore(Stop);
    impl Drop for Restore {
        fn drop(&mut self) {
            let old = std::mem::take(&mut self.0);
            STOP.with(|s| *s.borrow_mut() = old);
        }
    }
    let _restore = Restore(STOP.with(|s| s.replace(stop)));
    f()
}

/// What a read spent of its budget (the fuzz harness asserts it stays within).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    pub steps: usize,
    pub bytes: usize,
    pub max_steps: usize,
    pub max_bytes: usize,
}

/// Why a read was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cut {
    Bytes(usize),
    Steps(usize),
    Stopped,
}

impl Cut {
    pub fn reason(&self) -> String {
        match self {
            Cut::Bytes(n) => format!(
                "shell expansion ran past its budget of {n} characters (a variable doubled or copied without end); the rest of the script is not read"
            ),
            Cut::Steps(n) => format!(
                "shell reading ran past its budget of {n} steps; the rest of the script is not read"
            ),
            Cut::Stopped => {
                "shell reading stopped at the caller's deadline; the rest of the script is not read"
                    .to_string()
            }
        }
    }
}

/// The counters of one read, shared by the nested shells (`sh -c`, `eval`) it enters.
#[derive(Debug)]
struct Counters {
    bytes: Cell<usize>,
    steps: Cell<usize>,
    max_bytes: usize,
    max_steps: usize,
    /// Where the last step was taken (file bytes).
    at: Cell<(usize, usize)>,
    /// Why and where (file bytes) the read was cut; set once.
    cut: RefCell<Option<(Cut, (usize, usize))>>,
    reported: Cell<bool>,
    /// Compounds closed so far, which names each one ([`Budget::next_compound`]).
    compounds: Cell<u32>,
}

/// A handle on one read's counters; clones share them.
#[derive(Debug, Clone)]
pub struct Budget(Rc<Counters>);

impl Budget {
    /// The budget of a read of `input_len` bytes.
    pub fn for_input(input_len: usize) -> Budget {
        Budget(Rc::new(Counters {
            bytes: Cell::new(0),
            steps: Cell::new(0),
            max_bytes: BASE_BYTES.saturating_add(input_len.saturating_mul(BYTES_PER_INPUT_BYTE)),
            max_steps: BASE_STEPS.saturating_add(input_len.saturating_mul(STEPS_PER_INPUT_BYTE)),
            at: Cell::new((0, 0)),
            cut: RefCell::new(None),
            reported: Cell::new(false),
            compounds: Cell::new(0),
        }))
    }

    /// Whether the read was cut: nothing more is walked or expanded.
    pub fn is_cut(&self) -> bool {
        self.0.cut.borrow().is_some()
    }

    fn cut(&self, why: Cut, at: (usize, usize)) -> bool {
        let mut cut = self.0.cut.borrow_mut();
        if cut.is_none() {
            *cut = Some((why, at));
        }
        false
    }

    /// Spends `n` characters of expansion at `at`; false (and the read cut) when over budget.
    pub fn bytes(&self, n: usize, at: (usize, usize)) -> bool {
        if self.is_cut() {
            return false;
        }
        let spent = self.0.bytes.get().saturating_add(n);
        self.0.bytes.set(spent);
        if spent > self.0.max_bytes {
            return self.cut(Cut::Bytes(self.0.max_bytes), at);
        }
        true
    }

    /// Spends `n` characters copied where the last step was taken (a shell's env handed on).
    pub fn copied(&self, n: usize) -> bool {
        self.bytes(n, self.0.at.get())
    }

    /// Spends one step at `at`; false (and the read cut) when over budget or stopped.
    pub fn step(&self, at: (usize, usize)) -> bool {
        if self.is_cut() {
            return false;
        }
        let steps = self.0.steps.get() + 1;
        self.0.steps.set(steps);
        self.0.at.set(at);
        if steps > self.0.max_steps {
            return self.cut(Cut::Steps(self.0.max_steps), at);
        }
        if steps.is_multiple_of(CHECK_EVERY) && STOP.with(|s| s.borrow().reached()) {
            return self.cut(Cut::Stopped, at);
        }
        true
    }

    /// An id for a compound just closed, unique in this read and the shells it enters, which the
    /// paths of variables set in its branches name ([`super::expand::Alt`]).
    pub fn next_compound(&self) -> u32 {
        let id = self.0.compounds.get();
        self.0.compounds.set(id.wrapping_add(1));
        id
    }

    /// The cut, the first time it is asked for (one finding per read).
    pub fn take_report(&self) -> Option<(Cut, (usize, usize))> {
        if self.0.reported.get() {
            return None;
        }
        let cut = self.0.cut.borrow().clone()?;
        self.0.reported.set(true);
        Some(cut)
    }

    /// Steps and characters spent so far, and the most each may reach.
    pub fn spent(&self) -> Spent {
        Spent {
            steps: self.0.steps.get(),
            bytes: self.0.bytes.get(),
            max_steps: self.0.max_steps,
            max_bytes: self.0.max_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_raised_flag_cuts_the_read_at_the_next_check() {
        let flag = Arc::new(AtomicBool::new(false));
        let budget = Budget::for_input(0);
        let stop = Stop {
            deadline: None,
            flag: Some(flag.clone()),
        };
        with_stop(stop, || {
            for _ in 0..CHECK_EVERY {
                assert!(budget.step((0, 1)));
            }
            flag.store(true, Ordering::Relaxed);
            let steps = (0..CHECK_EVERY).take_while(|_| budget.step((3, 4))).count();
            assert_eq!(steps, CHECK_EVERY - 1);
        });
        assert_eq!(budget.take_report(), Some((Cut::Stopped, (3, 4))));
        assert_eq!(budget.take_report(), None);
        // Outside `with_stop` the flag is not looked at.
        let free = Budget::for_input(0);
        assert!((0..2 * CHECK_EVERY).all(|_| free.step((0, 1))));
    }

    #[test]
    fn the_byte_budget_grows_with_the_input() {
        let small = Budget::for_input(0);
        assert!(small.bytes(BASE_BYTES, (0, 1)));
        assert!(!small.bytes(1, (5, 6)));
        let big = Budget::for_input(1000);
        assert!(big.bytes(BASE_BYTES + 4000, (0, 1)));
        assert!(!big.bytes(1, (0, 1)));
    }
}
