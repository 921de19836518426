//! Review slots: at most `max_concurrency` reviews run at once, one blocking thread each, and at
//! most `max_queued` more wait for a slot. A review that finds the line full is not queued: it is
//! answered at once under `--unknown`, so a flood costs neither threads nor time, and the API
//! server gets an AdmissionReview (failurePolicy never applies to it). One that waits past its
//! deadline is answered the same way.

use super::metrics::{Metrics, Tally};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The slots and the line in front of them.
pub struct Slots {
    running: Arc<Semaphore>,
    /// Permits for running plus waiting reviews.
    admitted: Arc<Semaphore>,
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

/// A held slot; dropping it frees the slot for the next review in line.
pub struct Slot {
    _running: OwnedSemaphorePermit,
    _admitted: OwnedSemaphorePermit,
    _counted: Tally,
}

impl Slots {
    pub fn new(max_running: usize, max_queued: usize) -> Self {
        let max_running = max_running.max(1);
        Slots {
            running: Arc::new(Semaphore::new(max_running)),
            admitted: Arc::new(Semaphore::new(max_running + max_queued)),
            max_running,
            max_queued,
        }
    }

    /// A slot, after waiting in line until `deadline` at most; no wait when the line is full.
    pub async fn enter(&self, deadline: Instant, metrics: &Metrics) -> Result<Slot, NoSlot> {
        let Ok(admitted) = self.admitted.clone().try_acquire_owned() else {
            return Err(NoSlot::Full {
                running: self.max_running,
                queued: self.max_queued,
            });
        };
        let waiting = metrics.waiting();
        let running =
            match tokio::time::timeout_at(deadline.into(), self.running.clone().acquire_owned())
                .await
            {
                Ok(Ok(p)) => p,
                _ => return Err(NoSlot::Late),
            };
        drop(waiting);
        Ok(Slot {
            _running: running,
            _admitted: admitted,
            _counted: metrics.running(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_line_is_bounded_and_a_full_line_answers_at_once() {
        let metrics = Arc::new(Metrics::default());
        let slots = Arc::new(Slots::new(1, 1));
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
}
