//! Review slots: at most `max_concurrency` reviews run at once, one blocking thread each, and at
//! most `max_queued` more wait for a slot. A review that finds the line full is not queued: it is
//! answered at once under `--unknown`, so a flood costs neither threads nor time, and the API
//! server gets an AdmissionReview (failurePolicy never applies to it). One that waits past its
//! deadline is answered the same way.
//!
//! A review is answered at its deadline whether its work has stopped or not, and its slot is
//! freed then: work that runs on (a shell expansion bomb between two deadline checks) keeps only
//! its thread, as an abandoned review. At most `max_abandoned` threads are held so; with all of
//! them held, reviews wait for a thread as they wait for a slot.

use super::metrics::{Metrics, Tally};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The slots and the line in front of them.
pub struct Slots {
    running: Arc<Semaphore>,
    /// Permits for running plus waiting reviews.
    admitted: Arc<Semaphore>,
    /// Review threads: one per slot, and `max_abandoned` for work that outlives its slot.
    threads: Arc<Semaphore>,
    max_running: usize,
    max_queued: usize,
}

/// Why a review got no slot.
#[derive(Debug, PartialEq, Eq)]
pub enum NoSlot {
    /// Every slot busy and the line full: answered at once.
    Full { running: usize, queued: usize },
    /// Waited until the deadline.
    Late,
}

impl NoSlot {
    /// Said in the answer, after "kvlint could not check this object (".
    pub fn reason(&self) -> String {
        match self {
            NoSlot::Full { running, queued } => {
                format!("the webhook is overloaded: {running} reviews running and {queued} waiting")
            }
            NoSlot::Late => "no review slot came free before the deadline".into(),
        }
    }
}

/// A held slot, kept by the request being answered; dropping it frees the slot for the next
/// review in line.
pub struct Slot {
    _running: OwnedSemaphorePermit,
    _admitted: OwnedSemaphorePermit,
    _counted: Tally,
}

/// A review thread, moved into the review's blocking work: it is freed when the work ends, which
/// may be after the slot was.
pub struct Thread {
    _permit: OwnedSemaphorePermit,
    fate: Fate,
}

/// Whether a review's work was abandoned, shared by the request and the work: the work counts as
/// abandoned from its deadline until it ends.
#[derive(Clone, Default)]
pub struct Fate(Arc<Mutex<(bool, Option<Tally>)>>);

impl Fate {
    /// Called at the deadline: counts the work as abandoned unless it has ended.
    pub fn abandon(&self, metrics: &Metrics) {
        let mut state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !state.0 {
            state.1 = Some(metrics.abandoned());
        }
    }
}

impl Thread {
    pub fn fate(&self) -> Fate {
        self.fate.clone()
    }
}

impl Drop for Thread {
    fn drop(&mut self) {
        let mut state = self.fate.0.lock().unwrap_or_else(|e| e.into_inner());
        *state = (true, None);
    }
}

impl Slots {
    pub fn new(max_running: usize, max_queued: usize, max_abandoned: usize) -> Self {
        let max_running = max_running.max(1);
        Slots {
            running: Arc::new(Semaphore::new(max_running)),
            admitted: Arc::new(Semaphore::new(max_running + max_queued)),
            threads: Arc::new(Semaphore::new(max_running + max_abandoned)),
            max_running,
            max_queued,
        }
    }

    /// A slot and a thread, after waiting in line until `deadline` at most; no wait when the
    /// line is full.
    pub async fn enter(
        &self,
        deadline: Instant,
        metrics: &Metrics,
    ) -> Result<(Slot, Thread), NoSlot> {
        let Ok(admitted) = self.admitted.clone().try_acquire_owned() else {
            return Err(NoSlot::Full {
                running: self.max_running,
                queued: self.max_queued,
            });
        };
        let waiting = metrics.waiting();
        let until = deadline.into();
        let Ok(Ok(running)) =
            tokio::time::timeout_at(until, self.running.clone().acquire_owned()).await
        else {
            return Err(NoSlot::Late);
        };
        let Ok(Ok(thread)) =
            tokio::time::timeout_at(until, self.threads.clone().acquire_owned()).await
        else {
            return Err(NoSlot::Late);
        };
        drop(waiting);
        let slot = Slot {
            _running: running,
            _admitted: admitted,
            _counted: metrics.running(),
        };
        let thread = Thread {
            _permit: thread,
            fate: Fate::default(),
        };
        Ok((slot, thread))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_line_is_bounded_and_a_full_line_answers_at_once() {
        let metrics = Arc::new(Metrics::default());
        let slots = Arc::new(Slots::new(1, 1, 1));
        let later = Instant::now() + Duration::from_secs(60);
        let first = slots.enter(later, &metrics).await.expect("a free slot");
        let second = tokio::spawn({
            let (slots, metrics) = (slots.clone(), metrics.clone());
            async move { slots.enter(later, &metrics).await.is_ok() }
        });
        while metrics.reviews() != (1, 1) {
            tokio::task::yield_now().await;
        }
        // The line is full: the third is refused without waiting for the 60 s deadline.
        assert_eq!(
            slots.enter(later, &metrics).await.err(),
            Some(NoSlot::Full {
                running: 1,
                queued: 1
            })
        );
        drop(first);
        assert!(
            second.await.expect("joined"),
            "the waiting review got the slot"
        );
        assert_eq!(metrics.reviews(), (0, 0));
        let _held = slots.enter(later, &metrics).await.expect("free again");
        let soon = Instant::now() + Duration::from_millis(20);
        assert_eq!(slots.enter(soon, &metrics).await.err(), Some(NoSlot::Late));
        assert_eq!(metrics.reviews(), (1, 0));
    }

    /// Work past its deadline frees its slot at once and keeps its thread; abandoned threads are
    /// bounded, and each comes back when its work ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn abandoned_work_frees_its_slot_and_holds_a_bounded_thread() {
        let metrics = Metrics::default();
        let slots = Slots::new(1, 0, 1);
        let later = Instant::now() + Duration::from_secs(60);
        let abandoned = |metrics: &Metrics| {
            metrics
                .render()
                .contains("kvlint_webhook_reviews_abandoned 1\n")
        };
        let (slot, first) = slots.enter(later, &metrics).await.expect("a free slot");
        first.fate().abandon(&metrics);
        drop(slot);
        assert!(abandoned(&metrics));
        let (slot, second) = slots
            .enter(later, &metrics)
            .await
            .expect("the slot is free");
        drop(slot);
        // One slot, one abandoned thread: both threads are held, so no review runs.
        let soon = Instant::now() + Duration::from_millis(20);
        assert_eq!(slots.enter(soon, &metrics).await.err(), Some(NoSlot::Late));
        drop(first);
        assert!(!abandoned(&metrics));
        let (_slot, _third) = slots
            .enter(later, &metrics)
            .await
            .expect("a thread came back");
        // Work that ended before its deadline is never counted as abandoned.
        let fate = second.fate();
        drop(second);
        fate.abandon(&metrics);
        assert!(!abandoned(&metrics));
    }
}
