//! Engine startup logs: the pool each rank allocated, the context the server advertises, and
//! the settings a prefill/decode pair must share, in every line form of the supported releases.
//! Ranks interleave (`[TP0]`, `[DP0 TP0]`, `(EngineCore_DP0 pid=…)`, `[RANK 0]`); the smallest
//! pool wins, since a request can land on any of them.

use super::measured::{Fact, Reading};
use super::EngineArg;
use crate::capacity::Role;
use crate::launch::Engine;
use regex_lite::{Captures, Regex};
use std::ops::Range;
use std::sync::OnceLock;

/// How sure a pool line is of the pool one rank serves: a later line of higher rank replaces it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Weight {
    /// SGLang `KV Cache is allocated. #tokens: N`: a sliding-window model logs one per pool, so
    /// the largest of a rank's lines is its full-layer pool.
    Allocated,
    /// SGLang `full_layer_tokens=N` of a sliding-window pool.
    FullLayers,
    /// The number the engine schedules with (SGLang `max_total_num_tokens=`, vLLM
    /// `GPU KV cache size`, TensorRT-LLM tokens in the paged KV cache).
    Scheduler,
    /// SGLang post-capture resize: the pool after CUDA graphs, replacing the one before.
    Resized,
}

struct RankPool {
    rank: String,
    tokens: u64,
    at: Range<usize>,
    weight: Weight,
    line: usize,
    what: &'static str,
}

/// What one engine's patterns found in the log.
#[derive(Default)]
struct Scan {
    ranks: Vec<RankPool>,
    context: Option<Fact<u64>>,
    /// TensorRT-LLM: the pool lowered max_seq_len to this.
    adjusted: Option<Fact<u64>>,
    role: Option<Role>,
    version: Option<String>,
    model: Option<Fact<String>>,
    page_size: Option<Fact<u64>>,
    kv_cache_dtype: Option<Fact<String>>,
    transfer_backend: Option<Fact<String>>,
    /// vLLM's `Maximum concurrency for L tokens per request: Xx` (V0, no token count logged).
    concurrency: Option<(f64, u64, Range<usize>, usize)>,
}

impl Scan {
    /// Where the last fact read ends in the text: a line reaching past its start holds a fact.
    fn reaches(&self) -> usize {
        let facts = [
            self.context.as_ref().and_then(|f| f.at.clone()),
            self.adjusted.as_ref().and_then(|f| f.at.clone()),
            self.model.as_ref().and_then(|f| f.at.clone()),
            self.page_size.as_ref().and_then(|f| f.at.clone()),
            self.kv_cache_dtype.as_ref().and_then(|f| f.at.clone()),
            self.transfer_backend.as_ref().and_then(|f| f.at.clone()),
            self.concurrency.as_ref().map(|c| c.2.clone()),
        ];
        let ranks = self.ranks.iter().map(|r| r.at.end);
        facts
            .into_iter()
            .flatten()
            .map(|r| r.end)
            .chain(ranks)
            .max()
            .unwrap_or(0)
    }

    fn pool(
        &mut self,
        rank: &str,
        tokens: u64,
        at: Range<usize>,
        weight: Weight,
        line: usize,
        what: &'static str,
    ) {
        let new = RankPool {
            rank: rank.to_string(),
            tokens,
            at,
            weight,
            line,
            what,
        };
        match self.ranks.iter_mut().find(|r| r.rank == rank) {
            None => self.ranks.push(new),
            Some(old) => {
                let replace = weight > old.weight
                    || (weight == old.weight
                        && (weight != Weight::Allocated || tokens > old.tokens));
                if replace {
                    *old = new;
                }
            }
        }
    }
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|e| panic!("{pattern}: {e}")))
}

macro_rules! regex {
    ($p:literal) => {{
        static CELL: OnceLock<Regex> = OnceLock::new();
        re(&CELL, $p)
    }};
}

/// A captured number (thousands separators allowed) and its range in the whole text.
fn num(c: &Captures, i: usize, off: usize) -> Option<(u64, Range<usize>)> {
    let m = c.get(i)?;
    let v = m.as_str().replace(',', "").parse().ok()?;
    Some((v, off + m.start()..off + m.end()))
}

fn text(c: &Captures, i: usize, off: usize) -> Option<(String, Range<usize>)> {
    let m = c.get(i)?;
    Some((m.as_str().to_string(), off + m.start()..off + m.end()))
}

/// The rank a line comes from: SGLang `[… DP0 TP3 EP3]`, vLLM `(EngineCore_DP0 pid=7)`,
/// TensorRT-LLM `[RANK 3]`; `""` for a line that names none.
fn rank(line: &str) -> String {
    if let Some(c) = regex!(r"\((\w+) pid=\d+\)").captures(line) {
        return c[1].to_string();
    }
    if let Some(c) = regex!(r"\[RANK (\d+)\]").captures(line) {
        return format!("RANK {}", &c[1]);
    }
    if let Some(c) = regex!(r"^[^\[]{0,40}\[([^\]]*)\]").captures(line) {
        let words: Vec<&str> = c[1]
            .split_whitespace()
            .filter(|w| {
                let head = w.trim_end_matches(|ch: char| ch.is_ascii_digit());
                head.len() < w.len()
                    && matches!(
                        head,
                        "TP" | "DP" | "PP" | "EP" | "CP" | "ATTN_DP" | "ATTN_CP"
                    )
            })
            .collect();
        return words.join(" ");
    }
    String::new()
}

/// Longest log line kept; the rest of a longer line is skipped (no engine line comes near).
pub const LINE_MAX: usize = 64 * 1024;

/// Reads a log held in memory. With `engine` None, the engine whose pool lines the log holds.
pub fn parse(name: &str, text: String, engine: Option<EngineArg>) -> Result<Reading, String> {
    read(name, text.as_bytes(), u64::MAX, engine)
}

/// Lines kept on each side of a line a fact was read from, for the code frames of findings.
const CONTEXT: usize = 2;

/// Reads a log as it streams in (`kubectl logs -f POD | kvlint verify --log -`), line by line, in
/// bounded memory: lines longer than [`LINE_MAX`] are cut, and only the lines a fact was read from
/// and their [`CONTEXT`] are kept (the others as empty lines, so line numbers stay the log's). Reading stops at
/// EOF, after `max` bytes (an error), or once the server is up with a pool line read: uvicorn's
/// `Application startup complete.` or `Uvicorn running on`, which every engine's HTTP server logs
/// after its ranks have allocated their pools.
pub fn read(
    name: &str,
    mut log: impl std::io::BufRead,
    max: u64,
    engine: Option<EngineArg>,
) -> Result<Reading, String> {
    let engines = match engine {
        Some(e) => vec![Engine::from(e)],
        None => vec![Engine::Sglang, Engine::Vllm, Engine::Trtllm],
    };
    let mut scans: Vec<Scan> = engines.iter().map(|_| Scan::default()).collect();
    let mut kept = String::new();
    // The last lines read, kept whole until it is known whether a fact follows them: where each
    // begins in `kept`, and whether it is to stay.
    let mut recent: std::collections::VecDeque<(usize, bool)> = Default::default();
    let mut after_fact = 0;
    let mut line = Vec::new();
    let mut total = 0u64;
    for no in 1.. {
        let n = read_line(&mut log, &mut line, max - total)
            .map_err(|e| format!("cannot read {name}: {e}"))?;
        if n == 0 {
            break;
        }
        total += n;
        if total > max {
            return Err(format!(
                "{name} is larger than {max} bytes and holds no complete startup"
            ));
        }
        // Logs carry colour codes and the odd non-UTF-8 byte; neither may stop the reading.
        let text = String::from_utf8_lossy(&line);
        let off = kept.len();
        for (e, scan) in engines.iter().zip(&mut scans) {
            match e {
                Engine::Sglang => sglang(&text, off, no, scan),
                Engine::Vllm => vllm(&text, off, no, scan),
                Engine::Trtllm => trtllm(&text, off, no, scan),
            }
        }
        kept.push_str(&text);
        if !text.ends_with('\n') {
            kept.push('\n');
        }
        let fact = scans.iter().any(|s| s.reaches() > off);
        if fact {
            after_fact = CONTEXT;
            recent.iter_mut().for_each(|r| r.1 = true);
        }
        recent.push_back((off, fact || after_fact > 0));
        after_fact = after_fact.saturating_sub(usize::from(!fact));
        if recent.len() > CONTEXT {
            blank_oldest(&mut kept, &mut recent);
        }
        let up =
            text.contains("Application startup complete.") || text.contains("Uvicorn running on");
        if up && scans.iter().any(|s| !s.ranks.is_empty()) {
            break;
        }
    }
    let found = engines.into_iter().zip(scans).find_map(|(e, mut scan)| {
        finish_vllm_v0(&mut scan);
        (!scan.ranks.is_empty()).then_some((e, scan))
    });
    let text = kept;
    let Some((engine, scan)) = found else {
        return Err(format!(
            "{name}: no KV pool line found (SGLang `KV Cache is allocated. #tokens: N` or \
             `max_total_num_tokens=N`, vLLM `GPU KV cache size: N tokens`, TensorRT-LLM \
             `Allocated … for max tokens in paged KV cache (N)`)"
        ));
    };
    reading(name, text, engine, scan)
}

/// Commits the oldest of the recent lines: one with no fact within [`CONTEXT`] lines becomes an
/// empty line. No fact points past it (a fact in the lines after it would have kept it), so the
/// facts' ranges hold; the recent lines after it move up.
fn blank_oldest(kept: &mut String, recent: &mut std::collections::VecDeque<(usize, bool)>) {
    let Some((start, keep)) = recent.pop_front() else {
        return;
    };
    if keep {
        return;
    }
    let end = recent.front().map_or(kept.len(), |r| r.0);
    let cut = end - start - 1;
    kept.replace_range(start..end - 1, "");
    recent.iter_mut().for_each(|r| r.0 -= cut);
}

/// Reads one line into `buf` (cleared first), at most [`LINE_MAX`] bytes of it; returns the bytes
/// the line had in the log (0 at EOF), reading no further once they pass `left`.
fn read_line(
    log: &mut impl std::io::BufRead,
    buf: &mut Vec<u8>,
    left: u64,
) -> std::io::Result<u64> {
    buf.clear();
    let mut n = 0;
    loop {
        let chunk = match log.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(n);
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = LINE_MAX.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        log.consume(take);
        n += take as u64;
        if done || n > left {
            return Ok(n);
        }
    }
}

fn reading(name: &str, text: String, engine: Engine, scan: Scan) -> Result<Reading, String> {
    // Of equal pools, the line the engine schedules with is the one to point at.
    let least = scan
        .ranks
        .iter()
        .min_by_key(|r| (r.tokens, std::cmp::Reverse(r.weight)));
    let Some(least) = least else {
        return Err(format!("{name}: no KV pool line found"));
    };
    let n = scan.ranks.len();
    let rank = if least.rank.is_empty() {
        String::new()
    } else {
        format!(" ({})", least.rank)
    };
    let of = if n > 1 {
        format!(", the smallest of {n} ranks")
    } else {
        String::new()
    };
    let mut pool = Fact::new(
        least.tokens,
        least.at.clone(),
        format!("{} on line {}{rank}{of}", least.what, least.line),
    );
    let mut notes = Vec::new();
    // TensorRT-LLM serves no request longer than the max_seq_len it lowered to fit its pool.
    if let Some(a) = scan.adjusted.filter(|a| a.value < pool.value) {
        pool = a;
    }
    if scan.context.is_none() && pool.how.starts_with("`Adjusted") {
        notes.push(format!(
            "TensorRT-LLM lowered max_seq_len to {} to fit its pool; the context it was asked for is not in the log",
            thousands(pool.value)
        ));
    }
    let context = scan.context;
    Ok(Reading {
        name: name.to_string(),
        engine,
        version: scan.version,
        role: scan.role,
        ranks: scan
            .ranks
            .iter()
            .map(|r| (r.rank.clone(), r.tokens))
            .collect(),
        pool,
        context,
        model: scan.model,
        page_size: scan.page_size,
        kv_cache_dtype: scan.kv_cache_dtype,
        transfer_backend: scan.transfer_backend,
        notes,
        text,
    })
}

fn thousands(n: u64) -> String {
    crate::rules::thousands(n)
}

/// SGLang, 0.4.6–0.5.23: `mem_cache/memory_pool.py` (`MHATokenToKVPool._finalize_allocation_log`
/// and its 0.4/0.5.2 forms: `KV Cache is allocated. [dtype: D, ]#tokens: N, …`),
/// `model_executor/model_runner_components/kv_pool_runtime.py` (post-capture resize, 0.5.23),
/// `model_executor/pool_configurator.py` (`full_layer_tokens=`), and the scheduler's
/// `max_total_num_tokens=…, context_len=…` (`managers/scheduler.py :: Scheduler.init_memory_pool_and_cache`).
fn sglang(line: &str, off: usize, no: usize, s: &mut Scan) {
    let r = rank(line);
    if let Some(c) = regex!(r"KV [Cc]ache allocated\. dtype: [^,]*, #tokens: (\d+)").captures(line)
    {
        if line.contains("Post-capture") && !line.contains("draft") {
            if let Some((v, at)) = num(&c, 1, off) {
                s.pool(
                    &r,
                    v,
                    at,
                    Weight::Resized,
                    no,
                    "post-capture `KV cache allocated. #tokens`",
                );
            }
        }
    } else if let Some(c) =
        regex!(r"KV Cache is allocated\.(?: dtype: [^,]*,)? #tokens: (\d+)").captures(line)
    {
        if let Some((v, at)) = num(&c, 1, off) {
            s.pool(
                &r,
                v,
                at,
                Weight::Allocated,
                no,
                "`KV Cache is allocated. #tokens`",
            );
        }
    }
    if let Some(c) = regex!(r"full_layer_tokens=(\d+)").captures(line) {
        if let Some((v, at)) = num(&c, 1, off) {
            let w = if line.contains("Post-capture") {
                Weight::Resized
            } else {
                Weight::FullLayers
            };
            s.pool(&r, v, at, w, no, "`full_layer_tokens`");
        }
    }
    if let Some(c) = regex!(r"max_total_num_tokens=(\d+)").captures(line) {
        if let Some((v, at)) = num(&c, 1, off) {
            s.pool(&r, v, at, Weight::Scheduler, no, "`max_total_num_tokens`");
        }
        if let Some((v, at)) = regex!(r"context_len=(\d+)")
            .captures(line)
            .and_then(|c| num(&c, 1, off))
        {
            s.context = Some(Fact::new(v, at, format!("`context_len` on line {no}")));
        }
    }
    if line.contains("server_args=") {
        server_args(line, off, s);
    }
}

/// SGLang's `server_args=ServerArgs(k=v, …)` line (0.5.20: `server_args={'k': v, …}`,
/// `entrypoints/engine.py`): the role and the settings a prefill/decode pair must share.
fn server_args(line: &str, off: usize, s: &mut Scan) {
    if let Some(c) = regex!(r"disaggregation_mode'?(?:=|: )'(\w+)'").captures(line) {
        s.role = match &c[1] {
            "prefill" => Some(Role::Prefill),
            "decode" => Some(Role::Decode),
            _ => Some(Role::Unified),
        };
    }
    let txt = |re: &Regex| re.captures(line).and_then(|c| text(&c, 1, off));
    if let Some((v, at)) = txt(regex!(r"model_path'?(?:=|: )'([^']+)'")) {
        s.model = Some(Fact::new(v, at, "server_args model_path"));
    }
    if let Some((v, at)) = txt(regex!(r"kv_cache_dtype'?(?:=|: )'([^']+)'")) {
        s.kv_cache_dtype = Some(Fact::new(v, at, "server_args kv_cache_dtype"));
    }
    if let Some((v, at)) = txt(regex!(
        r"disaggregation_transfer_backend'?(?:=|: )'([^']+)'"
    )) {
        s.transfer_backend = Some(Fact::new(
            v,
            at,
            "server_args disaggregation_transfer_backend",
        ));
    }
    if let Some((v, at)) = regex!(r"\bpage_size'?(?:=|: )(\d+)")
        .captures(line)
        .and_then(|c| num(&c, 1, off))
    {
        s.page_size = Some(Fact::new(v, at, "server_args page_size"));
    }
}

/// vLLM: V1 `v1/core/kv_cache_utils.py :: update_kv_cache_capacity` (0.33: one line
/// `GPU KV cache size: N tokens, Maximum concurrency for L tokens per request: Xx`; 0.8–0.19: the
/// same two values on two lines from `_report_kv_cache_config`), V1's refusal to start
/// (`_check_enough_kv_cache_memory`: `estimated maximum model length is N`), and V0
/// (`# GPU blocks: B`, `The model's max seq len (L) is larger than the maximum number of tokens
/// that can be stored in KV cache (N)`).
fn vllm(line: &str, off: usize, no: usize, s: &mut Scan) {
    let r = rank(line);
    if let Some(c) = regex!(r"KV cache size: ([\d,]+) tokens").captures(line) {
        if let Some((v, at)) = num(&c, 1, off) {
            s.pool(&r, v, at, Weight::Scheduler, no, "`GPU KV cache size`");
        }
    }
    if let Some(c) =
        regex!(r"Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x").captures(line)
    {
        if let Some((v, at)) = num(&c, 1, off) {
            s.context = Some(Fact::new(
                v,
                at.clone(),
                format!("`Maximum concurrency for L tokens per request` on line {no}"),
            ));
            if let Some(x) = c.get(2).and_then(|m| m.as_str().parse::<f64>().ok()) {
                s.concurrency = Some((
                    x,
                    v,
                    off + c.get(2).map_or(0, |m| m.start())..off + c.get(2).map_or(0, |m| m.end()),
                    no,
                ));
            }
        }
    }
    if let Some(c) = regex!(r"max seq len \(([\d,]+)\).*(?:stored in KV cache \(([\d,]+)\)|estimated maximum model length is ([\d,]+))").captures(line) {
        if let Some((v, at)) = num(&c, 1, off) {
            s.context = Some(Fact::new(v, at, format!("the model's max seq len on line {no}")));
        }
        if let Some((v, at)) = num(&c, 2, off).or_else(|| num(&c, 3, off)) {
            s.pool(&r, v, at, Weight::Scheduler, no, "the tokens the KV cache holds (the engine refused to start)");
        }
    }
    if s.context.is_none() {
        if let Some((v, at)) = regex!(r"Using max model len ([\d,]+)")
            .captures(line)
            .and_then(|c| num(&c, 1, off))
        {
            s.context = Some(Fact::new(
                v,
                at,
                format!("`Using max model len` on line {no}"),
            ));
        }
    }
    if let Some(c) = regex!(r"\(v(\d+\.\d+\.\d+[\w.+]*)\) with config")
        .captures(line)
        .or_else(|| regex!(r"vLLM API server version (\d+\.\d+\.\d+[\w.+]*)").captures(line))
    {
        s.version = Some(c[1].to_string());
    }
    if let Some(c) =
        regex!(r#"kv_role['"]?\s*[:=]\s*['"](kv_producer|kv_consumer|kv_both)"#).captures(line)
    {
        s.role = match &c[1] {
            "kv_producer" => Some(Role::Prefill),
            "kv_consumer" => Some(Role::Decode),
            _ => Some(Role::Unified),
        };
    }
    if line.contains("with config:") {
        let txt = |re: &Regex| re.captures(line).and_then(|c| text(&c, 1, off));
        if let Some((v, at)) = txt(regex!(r"\bmodel='([^']+)'")) {
            s.model = Some(Fact::new(v, at, "engine config model"));
        }
        if let Some((v, at)) = txt(regex!(r"kv_cache_dtype=(\w+)")) {
            s.kv_cache_dtype = Some(Fact::new(v, at, "engine config kv_cache_dtype"));
        }
    }
}

/// vLLM V0 logs no token count: the pool is the concurrency it prints times the context
/// (`Maximum concurrency for L tokens per request: Xx`, X rounded to 2 decimals).
fn finish_vllm_v0(s: &mut Scan) {
    if !s.ranks.is_empty() {
        return;
    }
    if let Some((x, l, at, no)) = s.concurrency.take() {
        let v = (x * l as f64).floor() as u64;
        s.pool(
            "",
            v,
            at,
            Weight::Scheduler,
            no,
            "`Maximum concurrency` × context (vLLM V0 logs no token count)",
        );
    }
}

/// TensorRT-LLM: `cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp :: KVCacheManager::allocatePools`
/// (`[MemUsageChange] Allocated X GiB for max tokens in paged KV cache (N).`; older releases
/// `Using N tokens in paged KV cache.`), and `_torch/pyexecutor/resource_manager.py` window
/// validation (`Attention window size W exceeds upper bound U …`, `Adjusted max_seq_len to N`).
fn trtllm(line: &str, off: usize, no: usize, s: &mut Scan) {
    let r = rank(line);
    if let Some(c) = regex!(r"for max tokens in paged KV cache \((\d+)\)").captures(line) {
        if let Some((v, at)) = num(&c, 1, off) {
            s.pool(
                &r,
                v,
                at,
                Weight::Scheduler,
                no,
                "`Allocated … for max tokens in paged KV cache`",
            );
        }
    } else if let Some(c) = regex!(r"Using (\d+) tokens in paged KV cache").captures(line) {
        if let Some((v, at)) = num(&c, 1, off) {
            s.pool(
                &r,
                v,
                at,
                Weight::Scheduler,
                no,
                "`Using N tokens in paged KV cache`",
            );
        }
    }
    if let Some(c) = regex!(r"Attention window size (\d+) exceeds upper bound (\d+)").captures(line)
    {
        if let Some((v, at)) = num(&c, 1, off) {
            s.context = Some(Fact::new(
                v,
                at,
                format!("the attention window asked for, line {no}"),
            ));
        }
    }
    if let Some((v, at)) = regex!(r"Adjusted max_seq_len to (\d+)")
        .captures(line)
        .and_then(|c| num(&c, 1, off))
    {
        s.adjusted = Some(Fact::new(
            v,
            at,
            format!("`Adjusted max_seq_len` on line {no}"),
        ));
    }
    if s.context.is_none() && s.adjusted.is_none() {
        if let Some((v, at)) = regex!(r"\bmax_seq_len=(\d+), max_num_requests")
            .captures(line)
            .and_then(|c| num(&c, 1, off))
        {
            s.context = Some(Fact::new(v, at, format!("`max_seq_len` on line {no}")));
        }
    }
    if let Some(c) = regex!(r"TensorRT-LLM version: (\d+\.\d+\.\d+[\w.+]*)").captures(line) {
        s.version = Some(c[1].to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_of_each_engine() {
        assert_eq!(
            rank("[2026-03-14 10:23:53 DP1 TP3 EP3] KV Cache"),
            "DP1 TP3 EP3"
        );
        assert_eq!(rank("[TP0] x"), "TP0");
        assert_eq!(
            rank("(EngineCore_DP0 pid=201) INFO 11-28"),
            "EngineCore_DP0"
        );
        assert_eq!(rank("[TensorRT-LLM][RANK 3][INFO] x"), "RANK 3");
        assert_eq!(rank("[2026-03-14 10:20:01] server_args"), "");
    }

    #[test]
    fn sglang_server_args_in_both_forms() {
        for line in [
            "[x] server_args={'model_path': 'm', 'page_size': 64, 'disaggregation_mode': 'prefill'}\n",
            "[x] server_args=ServerArgs(model_path='m', page_size=64, disaggregation_mode='prefill')\n",
        ] {
            let mut s = Scan::default();
            sglang(line, 0, 1, &mut s);
            assert_eq!(s.role, Some(Role::Prefill), "{line}");
            assert_eq!(s.page_size.map(|f| f.value), Some(64), "{line}");
            assert_eq!(s.model.map(|f| f.value).as_deref(), Some("m"), "{line}");
        }
    }
}
