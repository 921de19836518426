//! `kubectl logs -f POD | kvlint verify --log -` (issue 29, class 17): a log is read as it
//! streams, in memory bounded by its facts and a line-length cap, not by its length.
//!
//! Measured with a counting global allocator (this test binary only), as tests/streaming.rs
//! does: the peak of live heap bytes during the reading. One test in this binary, so no other
//! test allocates meanwhile.

use kvlint::verify::log;
use std::io::{BufReader, Read};

mod counting;

/// `n` request-log lines of about 150 bytes that hold no fact, as a server logs once it serves.
struct Requests {
    left: usize,
    line: Vec<u8>,
    at: usize,
}

impl Read for Requests {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.line.len() {
            if self.left == 0 {
                return Ok(0);
            }
            self.left -= 1;
            self.at = 0;
        }
        let n = buf.len().min(self.line.len() - self.at);
        buf[..n].copy_from_slice(&self.line[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

fn requests(n: usize) -> Requests {
    let line = b"[2026-03-14 10:25:01 TP0] Prefill batch. #new-seq: 1, #new-token: 4096, #cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: 0\n".to_vec();
    Requests {
        left: n,
        at: line.len(),
        line,
    }
}

/// Peak heap bytes above the start while reading `log` with a limit of `max` bytes.
fn peak(log: impl Read, max: u64) -> (usize, Result<u64, String>) {
    counting::peak_during(|| {
        log::read("<stdin>", BufReader::new(log), max, None).map(|r| r.pool.value)
    })
}

#[test]
fn a_log_is_read_in_memory_bounded_by_its_facts_not_its_length() {
    let startup = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/verify/sglang-0.5.20-incident-prefill.log"),
    )
    .expect("fixture");

    // The startup alone, then behind 5,000 request lines (0.7 MB) and a 16 MiB line.
    let (small, pool) = peak(&startup[..], u64::MAX);
    assert_eq!(pool, Ok(681_280));
    let long_line = std::io::repeat(b'x').take(16 << 20).chain(&b"\n"[..]);
    let noisy = requests(5_000).chain(long_line).chain(&startup[..]);
    let (large, pool) = peak(noisy, u64::MAX);
    assert_eq!(pool, Ok(681_280));
    // An empty line kept per line dropped (line numbers stay the log's), and one line's buffer.
    let bound = small + 5_000 + 2 * log::LINE_MAX + 64 * 1024;
    assert!(
        large <= bound,
        "{large} bytes peak for 17 MB of log, {small} for the startup alone (bound {bound})"
    );

    // A stream that never ends (`kubectl logs -f` of a server that never comes up, /dev/zero):
    // the byte limit ends it, and memory stays that of one line.
    let (endless, read) = peak(std::io::repeat(0), 32 << 20);
    assert!(read.is_err_and(|e| e.contains("larger than 33554432 bytes")));
    assert!(
        endless <= 4 * log::LINE_MAX,
        "{endless} bytes for an endless line"
    );
}
