//! The CUDA microprobe: on each GPU rank, prove that the planned KV pool can be allocated next to
//! the weights and holds what is written into it.
//!
//! Plain `cuMemAlloc` (never managed memory, never the stream-ordered pool allocator, which may keep
//! freed memory), a fill kernel that writes a pattern unique to (GPU, word, run nonce), and a verify
//! kernel that counts mismatches on the device. The kernels are hand-written PTX (`pattern.ptx`, from
//! `pattern.cu`), loaded with `cuModuleLoadData`, so neither NVRTC nor a toolkit is needed.
//! cudarc is built with `dynamic-loading` and panics when libcuda is missing, so `run` checks for the
//! library first and keeps a `catch_unwind` as the last guard: every failure is a `ProbeError`.

use cudarc::driver::{result, sys, DriverError};
use std::ffi::{c_void, CString};
use std::io::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::time::Instant;

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;
/// Pool allocations are made in chunks of whole pages of at most this size.
const CHUNK_BYTES: u64 = GIB;
/// Kept free beyond weights + pool: the verify counters and allocation granularity.
const HEADROOM_BYTES: u64 = 64 * MIB;
/// Free memory after the probe may differ from before by this much and still count as released.
const RELEASE_TOLERANCE_BYTES: u64 = 8 * MIB;
const THREADS_PER_BLOCK: u32 = 256;
const PTX: &str = include_str!("pattern.ptx");

mod report;

pub use report::*;

/// Names a driver error without calling into libcuda (`DriverError`'s Display does).
fn cuda_err(during: &str) -> impl Fn(DriverError) -> ProbeError + '_ {
    move |e| match e.0 {
        sys::CUresult::CUDA_ERROR_NO_DEVICE | sys::CUresult::CUDA_ERROR_INVALID_DEVICE => {
            ProbeError::NoDevice(format!("{during}: {:?}", e.0))
        }
        code => ProbeError::Cuda {
            during: during.to_string(),
            error: format!("{code:?}"),
        },
    }
}

/// Runs the probe for every rank, in order.
pub fn run(req: &ProbeRequest, progress: bool) -> Result<ProbeReport, ProbeError> {
    validate(req)?;
    guarded(|| run_checked(req, progress))
}

fn validate(req: &ProbeRequest) -> Result<(), ProbeError> {
    if req.ranks.is_empty() {
        return Err(ProbeError::BadPlan("no GPU ranks to probe".into()));
    }
    match req
        .ranks
        .iter()
        .find(|r| r.page_bytes == 0 || r.page_bytes > CHUNK_BYTES)
    {
        Some(r) => Err(ProbeError::BadPlan(format!(
            "GPU {}: page size {} B is outside 1 B..1 GiB",
            r.gpu_index, r.page_bytes
        ))),
        None => Ok(()),
    }
}

/// Checks for libcuda, then runs `f` with panics caught and kept off stderr.
fn guarded<T>(f: impl FnOnce() -> Result<T, ProbeError>) -> Result<T, ProbeError> {
    // SAFETY: only tries to dlopen the library names cudarc would use.
    if !unsafe { sys::is_culib_present() } {
        return Err(ProbeError::NoDriver(
            "cannot load the CUDA driver library (libcuda.so.1)".into(),
        ));
    }
    let previous = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    panic::set_hook(previous);
    outcome.unwrap_or_else(|payload| {
        let msg = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("unknown panic");
        Err(ProbeError::Panicked(
            msg.lines().next().unwrap_or_default().to_string(),
        ))
    })
}

fn run_checked(req: &ProbeRequest, progress: bool) -> Result<ProbeReport, ProbeError> {
    result::init().map_err(cuda_err("cuInit"))?;
    let count = result::device::get_count().map_err(cuda_err("device count"))?;
    let nonce = run_nonce();
    let mut ranks = Vec::with_capacity(req.ranks.len());
    for plan in &req.ranks {
        if i64::from(plan.gpu_index) >= i64::from(count) {
            return Err(ProbeError::NoDevice(format!(
                "the plan uses GPU {} but CUDA sees {count} device(s)",
                plan.gpu_index
            )));
        }
        ranks.push(probe_rank(plan, nonce, req.corrupt_page, progress)?);
    }
    Ok(ProbeReport { nonce, ranks })
}

fn run_nonce() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    splitmix(t ^ (u64::from(std::process::id()) << 32))
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The per-GPU pattern seed: differs between GPUs and between runs.
fn seed(gpu: u32, nonce: u64) -> u64 {
    splitmix(nonce ^ splitmix(u64::from(gpu) + 1))
}

/// The primary context of one device, current on this thread until dropped.
struct Context {
    dev: sys::CUdevice,
}

impl Context {
    fn open(ordinal: u32) -> Result<Context, ProbeError> {
        let dev = result::device::get(ordinal as i32).map_err(cuda_err("device handle"))?;
        // SAFETY: `dev` is a valid device; the context is released in `drop`.
        let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(cuda_err("context"))?;
        let current = Context { dev };
        // SAFETY: `ctx` was just retained.
        unsafe { result::ctx::set_current(ctx) }.map_err(cuda_err("set context"))?;
        Ok(current)
    }

    fn sync(&self) -> Result<(), ProbeError> {
        result::ctx::synchronize().map_err(cuda_err("synchronize"))
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: pairs with the retain in `open`.
        let _ = unsafe { result::primary_ctx::release(self.dev) };
    }
}

/// The fill and verify kernels of `pattern.ptx`.
struct Kernels {
    module: sys::CUmodule,
    fill: sys::CUfunction,
    verify: sys::CUfunction,
}

impl Kernels {
    fn load() -> Result<Kernels, ProbeError> {
        let ptx =
            CString::new(PTX).map_err(|_| ProbeError::BadPlan("PTX holds a NUL byte".into()))?;
        // SAFETY: a NUL-terminated PTX image; the module is unloaded in `drop`.
        let module = unsafe { result::module::load_data(ptx.as_ptr().cast()) }
            .map_err(cuda_err("load PTX"))?;
        let mut k = Kernels {
            module,
            fill: std::ptr::null_mut(),
            verify: std::ptr::null_mut(),
        };
        let func = |name: &str| {
            let cname = CString::new(name).map_err(|_| ProbeError::BadPlan(name.into()))?;
            // SAFETY: `module` is loaded.
            unsafe { result::module::get_function(module, cname) }
                .map_err(cuda_err("kernel lookup"))
        };
        k.fill = func("kvlint_fill")?;
        k.verify = func("kvlint_verify")?;
        Ok(k)
    }
}

impl Drop for Kernels {
    fn drop(&mut self) {
        // SAFETY: loaded in `load`, no launch outlives the synchronize that precedes the drop.
        let _ = unsafe { result::module::unload(self.module) };
    }
}

/// Device allocations freed together on drop.
#[derive(Default)]
struct Allocations(Vec<sys::CUdeviceptr>);

impl Allocations {
    fn alloc(&mut self, bytes: u64) -> Result<sys::CUdeviceptr, DriverError> {
        // SAFETY: plain cuMemAlloc; freed in `drop`.
        let ptr = unsafe { result::malloc_sync(bytes as usize) }?;
        self.0.push(ptr);
        Ok(ptr)
    }
}

impl Drop for Allocations {
    fn drop(&mut self) {
        for &ptr in &self.0 {
            // SAFETY: each pointer came from `malloc_sync` and is freed once.
            let _ = unsafe { result::free_sync(ptr) };
        }
    }
}

/// A run of whole pool pages in one allocation.
struct Chunk {
    ptr: sys::CUdeviceptr,
    /// Allocated bytes (the pages, rounded up to 16 for the kernels' 16-byte accesses).
    bytes: u64,
    /// Byte offset of the chunk in the pool's pattern space.
    base: u64,
    first_page: u64,
}

/// Pages of `page_bytes` covering `pool_bytes`, grouped into chunks of at most `CHUNK_BYTES`:
/// (first page, pages, allocated bytes) per chunk.
fn chunk_layout(pool_bytes: u64, page_bytes: u64) -> Vec<(u64, u64, u64)> {
    let pages = pool_bytes.div_ceil(page_bytes);
    let per_chunk = (CHUNK_BYTES / page_bytes).max(1);
    let mut out = Vec::new();
    let mut first = 0;
    while first < pages {
        let n = per_chunk.min(pages - first);
        out.push((first, n, (n * page_bytes).next_multiple_of(16)));
        first += n;
    }
    out
}

fn probe_rank(
    plan: &RankPlan,
    nonce: u64,
    corrupt_page: Option<u64>,
    progress: bool,
) -> Result<RankReport, ProbeError> {
    let ctx = Context::open(plan.gpu_index)?;
    let kernels = Kernels::load()?;
    let gpu_name = result::device::get_name(ctx.dev).map_err(cuda_err("device name"))?;
    let uuid = format_uuid(&result::device::get_uuid(ctx.dev).map_err(cuda_err("device uuid"))?);
    // SAFETY: valid device and attribute.
    let sms = unsafe {
        result::device::get_attribute(
            ctx.dev,
            sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        )
    }
    .map_err(cuda_err("SM count"))?;
    let (free, total) = result::mem_get_info().map_err(cuda_err("memory info"))?;
    let (free_before, total) = (free as u64, total as u64);
    let layout = chunk_layout(plan.pool_bytes, plan.page_bytes);
    let pool_alloc: u64 = layout.iter().map(|c| c.2).sum();
    let mut report = RankReport {
        plan: plan.clone(),
        gpu_name,
        uuid,
        total_bytes: total,
        free_before_bytes: free_before,
        free_after_bytes: free_before,
        outcome: RankOutcome::Verified {
            pool_covers_context: plan.pool_tokens >= plan.context_tokens,
        },
        pages: 0,
        pool_allocated_bytes: 0,
        alloc_seconds: 0.0,
        write_seconds: 0.0,
        verify_seconds: 0.0,
        write_gbs: None,
        verify_gbs: None,
        d2d_copy_gbs: None,
    };
    let need = plan.weights_bytes + pool_alloc + HEADROOM_BYTES;
    if need > free_before {
        report.outcome = RankOutcome::DoesNotFit {
            need_bytes: need,
            free_bytes: free_before,
        };
        return Ok(report);
    }
    let grid = (sms.max(1) as u32) * (2048 / THREADS_PER_BLOCK);
    report.d2d_copy_gbs = measure_d2d(&ctx, free_before - need)?;
    let gpu = Gpu {
        ctx: &ctx,
        kernels: &kernels,
        grid,
        seed: seed(plan.gpu_index, nonce),
    };
    {
        let mut allocs = Allocations::default();
        if let Some(outcome) = gpu.exercise(
            plan,
            &layout,
            &mut allocs,
            &mut report,
            corrupt_page,
            progress,
        )? {
            report.outcome = outcome;
        }
    }
    ctx.sync()?;
    let (free_after, _) = result::mem_get_info().map_err(cuda_err("memory info"))?;
    report.free_after_bytes = free_after as u64;
    let released = report.free_after_bytes.abs_diff(free_before) <= RELEASE_TOLERANCE_BYTES;
    if !released && matches!(report.outcome, RankOutcome::Verified { .. }) {
        report.outcome = RankOutcome::NotReleased {
            free_before_bytes: free_before,
            free_after_bytes: report.free_after_bytes,
        };
    }
    Ok(report)
}

fn format_uuid(u: &sys::CUuuid) -> String {
    let b: Vec<u8> = u.bytes.iter().map(|&c| c as u8).collect();
    let hex =
        |r: std::ops::Range<usize>| b[r].iter().map(|x| format!("{x:02x}")).collect::<String>();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        hex(0..4),
        hex(4..6),
        hex(6..8),
        hex(8..10),
        hex(10..16)
    )
}

/// Device-to-device copy bandwidth (read + written bytes per second) with two buffers of up to
/// 1 GiB taken from `spare` bytes; `None` when there is too little room to measure.
fn measure_d2d(ctx: &Context, spare: u64) -> Result<Option<f64>, ProbeError> {
    let bytes = (spare / 2).min(GIB) / MIB * MIB;
    if bytes < 64 * MIB {
        return Ok(None);
    }
    let mut allocs = Allocations::default();
    let alloc = |a: &mut Allocations| a.alloc(bytes).map_err(cuda_err("copy buffer"));
    let (src, dst) = (alloc(&mut allocs)?, alloc(&mut allocs)?);
    // SAFETY: both buffers hold `bytes` bytes.
    let copy = || {
        unsafe { result::memcpy_dtod_async(dst, src, bytes as usize, result::stream::null()) }
            .map_err(cuda_err("copy"))
    };
    copy()?;
    ctx.sync()?;
    const REPS: u32 = 10;
    let t = Instant::now();
    for _ in 0..REPS {
        copy()?;
    }
    ctx.sync()?;
    let secs = t.elapsed().as_secs_f64();
    Ok(Some(2.0 * (bytes * u64::from(REPS)) as f64 / secs / 1e9))
}

struct Gpu<'a> {
    ctx: &'a Context,
    kernels: &'a Kernels,
    grid: u32,
    seed: u64,
}

impl Gpu<'_> {
    /// Reserves the weights, allocates, writes and verifies the pool. `Some(outcome)` on failure.
    fn exercise(
        &self,
        plan: &RankPlan,
        layout: &[(u64, u64, u64)],
        allocs: &mut Allocations,
        report: &mut RankReport,
        corrupt_page: Option<u64>,
        progress: bool,
    ) -> Result<Option<RankOutcome>, ProbeError> {
        let bar = Progress::new(progress, plan.gpu_index);
        let t = Instant::now();
        let mut left = plan.weights_bytes;
        while left > 0 {
            let n = left.min(CHUNK_BYTES);
            if let Err(e) = allocs.alloc(n) {
                return Ok(Some(alloc_failed(plan.weights_bytes - left, e)));
            }
            left -= n;
        }
        let mut chunks = Vec::with_capacity(layout.len());
        let mut base = 0;
        for &(first_page, _, bytes) in layout {
            match allocs.alloc(bytes) {
                Ok(ptr) => chunks.push(Chunk {
                    ptr,
                    bytes,
                    base,
                    first_page,
                }),
                Err(e) => return Ok(Some(alloc_failed(plan.weights_bytes + base, e))),
            }
            base += bytes;
            bar.show("allocating", base, report_total(layout));
        }
        report.alloc_seconds = t.elapsed().as_secs_f64();
        report.pool_allocated_bytes = base;
        report.pages = layout.iter().map(|c| c.1).sum();

        let t = Instant::now();
        for c in &chunks {
            self.launch_fill(c)?;
        }
        self.ctx.sync()?;
        report.write_seconds = t.elapsed().as_secs_f64();
        bar.show("written", base, base);

        if let Some(page) = corrupt_page {
            corrupt(&chunks, page, plan.page_bytes)?;
        }
        let t = Instant::now();
        let (bad, first_word) = self.verify(&chunks, allocs)?;
        report.verify_seconds = t.elapsed().as_secs_f64();
        bar.show("verified", base, base);
        bar.done();
        report.write_gbs = gbs(base, report.write_seconds);
        report.verify_gbs = gbs(base, report.verify_seconds);
        if bad > 0 {
            let first_bad_page = first_word.and_then(|w| page_of(&chunks, w * 8, plan.page_bytes));
            return Ok(Some(RankOutcome::Corrupt {
                mismatched_words: bad,
                first_bad_page,
            }));
        }
        Ok(None)
    }

    fn launch_fill(&self, c: &Chunk) -> Result<(), ProbeError> {
        let (mut buf, mut n_vec, mut base_word, mut seed) =
            (c.ptr, c.bytes / 16, c.base / 8, self.seed);
        let mut params = [
            ptr_of(&mut buf),
            ptr_of(&mut n_vec),
            ptr_of(&mut base_word),
            ptr_of(&mut seed),
        ];
        self.launch(self.kernels.fill, n_vec, &mut params, "fill kernel")
    }

    /// (mismatched words, first mismatching word in the pool's pattern space).
    fn verify(
        &self,
        chunks: &[Chunk],
        allocs: &mut Allocations,
    ) -> Result<(u64, Option<u64>), ProbeError> {
        let mut out = allocs.alloc(16).map_err(cuda_err("verify counters"))?;
        // SAFETY: `out` holds 16 bytes.
        unsafe { result::memcpy_htod_sync(out, &[0u64, u64::MAX]) }
            .map_err(cuda_err("verify counters"))?;
        for c in chunks {
            let (mut buf, mut n_vec, mut base_word, mut seed) =
                (c.ptr, c.bytes / 16, c.base / 8, self.seed);
            let mut params = [
                ptr_of(&mut buf),
                ptr_of(&mut n_vec),
                ptr_of(&mut base_word),
                ptr_of(&mut seed),
                ptr_of(&mut out),
            ];
            self.launch(self.kernels.verify, n_vec, &mut params, "verify kernel")?;
        }
        self.ctx.sync()?;
        let mut host = [0u64; 2];
        // SAFETY: `out` holds 16 bytes.
        unsafe { result::memcpy_dtoh_sync(&mut host, out) }.map_err(cuda_err("verify counters"))?;
        Ok((host[0], (host[1] != u64::MAX).then_some(host[1])))
    }

    fn launch(
        &self,
        f: sys::CUfunction,
        n_vec: u64,
        params: &mut [*mut c_void],
        what: &str,
    ) -> Result<(), ProbeError> {
        let blocks_needed = n_vec.div_ceil(u64::from(THREADS_PER_BLOCK)).max(1);
        let grid = u64::from(self.grid).min(blocks_needed) as u32;
        // SAFETY: `params` point at live locals matching the kernel's parameter list.
        unsafe {
            result::launch_kernel(
                f,
                (grid, 1, 1),
                (THREADS_PER_BLOCK, 1, 1),
                0,
                result::stream::null(),
                params,
            )
        }
        .map_err(cuda_err(what))
    }
}

fn ptr_of<T>(v: &mut T) -> *mut c_void {
    (v as *mut T).cast()
}

fn report_total(layout: &[(u64, u64, u64)]) -> u64 {
    layout.iter().map(|c| c.2).sum()
}

fn alloc_failed(allocated_bytes: u64, e: DriverError) -> RankOutcome {
    RankOutcome::AllocFailed {
        allocated_bytes,
        error: format!("{:?}", e.0),
    }
}

fn gbs(bytes: u64, secs: f64) -> Option<f64> {
    (secs > 0.0).then(|| bytes as f64 / secs / 1e9)
}

/// The pool page that holds pattern-space byte `byte`.
fn page_of(chunks: &[Chunk], byte: u64, page_bytes: u64) -> Option<u64> {
    let c = chunks.iter().rev().find(|c| c.base <= byte)?;
    Some(c.first_page + (byte - c.base) / page_bytes)
}

/// Test hook: overwrites one pool page with a byte the pattern never produces page-wide.
fn corrupt(chunks: &[Chunk], page: u64, page_bytes: u64) -> Result<(), ProbeError> {
    let Some(c) = chunks.iter().rev().find(|c| c.first_page <= page) else {
        return Ok(());
    };
    let offset = (page - c.first_page) * page_bytes;
    if offset + page_bytes > c.bytes {
        return Ok(());
    }
    // SAFETY: the range lies inside the chunk's allocation.
    unsafe { result::memset_d8_sync(c.ptr + offset, 0xA5, page_bytes as usize) }
        .map_err(cuda_err("corrupt page"))
}

/// A one-line progress display on stderr.
struct Progress {
    on: bool,
    gpu: u32,
}

impl Progress {
    fn new(on: bool, gpu: u32) -> Progress {
        Progress { on, gpu }
    }

    fn show(&self, what: &str, done: u64, total: u64) {
        if self.on {
            let width = 30;
            let filled = if total == 0 {
                width
            } else {
                (done as u128 * width as u128 / total as u128) as usize
            };
            eprint!(
                "\rGPU {} [{}{}] {what} {:.1}/{:.1} GiB   ",
                self.gpu,
                "#".repeat(filled),
                " ".repeat(width - filled.min(width)),
                done as f64 / GIB as f64,
                total as f64 / GIB as f64
            );
            let _ = std::io::stderr().flush();
        }
    }

    fn done(&self) {
        if self.on {
            eprintln!();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(pool_bytes: u64, page_bytes: u64) -> RankPlan {
        RankPlan {
            gpu_index: 0,
            weights_bytes: 0,
            pool_bytes,
            page_bytes,
            pool_tokens: 1,
            context_tokens: 1,
        }
    }

    #[test]
    fn chunks_hold_whole_pages_and_cover_the_pool() {
        let page = 3 * MIB + 8;
        let layout = chunk_layout(5 * GIB, page);
        let pages: u64 = layout.iter().map(|c| c.1).sum();
        assert_eq!(pages, (5 * GIB).div_ceil(page));
        for w in layout.windows(2) {
            assert_eq!(w[0].0 + w[0].1, w[1].0);
        }
        for &(_, n, bytes) in &layout {
            assert!(bytes >= n * page && bytes < n * page + 16 && bytes % 16 == 0);
            assert!(n * page <= CHUNK_BYTES);
        }
    }

    #[test]
    fn seeds_differ_per_gpu_and_run() {
        assert_ne!(seed(0, 1), seed(1, 1));
        assert_ne!(seed(0, 1), seed(0, 2));
    }

    #[test]
    fn uuid_formats_like_nvml() {
        let mut u = sys::CUuuid { bytes: [0; 16] };
        for (i, b) in u.bytes.iter_mut().enumerate() {
            *b = (i as u8 * 17) as _;
        }
        assert_eq!(format_uuid(&u), "GPU-00112233-4455-6677-8899-aabbccddeeff");
    }

    #[test]
    fn driver_errors_map_without_calling_libcuda() {
        let e = cuda_err("cuInit")(DriverError(sys::CUresult::CUDA_ERROR_NO_DEVICE));
        assert_eq!(
            e,
            ProbeError::NoDevice("cuInit: CUDA_ERROR_NO_DEVICE".into())
        );
        assert_eq!(e.exit_code(), 4);
        let e = cuda_err("alloc")(DriverError(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        assert_eq!(e.to_string(), "CUDA alloc failed: CUDA_ERROR_OUT_OF_MEMORY");
        assert_eq!(e.exit_code(), 4);
    }

    #[test]
    fn bad_plans_are_rejected_before_cuda() {
        assert_eq!(
            run(&ProbeRequest::default(), false)
                .unwrap_err()
                .exit_code(),
            2
        );
        let req = ProbeRequest {
            ranks: vec![plan(GIB, 0)],
            corrupt_page: None,
        };
        assert!(matches!(run(&req, false), Err(ProbeError::BadPlan(_))));
    }

    #[test]
    fn panics_become_errors() {
        let r: Result<(), ProbeError> =
            guarded(|| panic!("Unable to dynamically load the \"cuda\" shared library"));
        match r {
            // Without libcuda the guard stops before running the closure.
            Err(ProbeError::NoDriver(_)) => {}
            Err(ProbeError::Panicked(m)) => assert!(m.contains("cuda")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn without_a_driver_run_is_exit_4() {
        if unsafe { sys::is_culib_present() } {
            return; // a CUDA machine: covered by tests/gpu.rs
        }
        let req = ProbeRequest {
            ranks: vec![plan(GIB, 2 * MIB)],
            corrupt_page: None,
        };
        let e = run(&req, false).unwrap_err();
        assert!(matches!(e, ProbeError::NoDriver(_)));
        assert_eq!(e.exit_code(), 4);
        assert!(!e.to_string().contains('\n'));
    }

    #[test]
    fn page_lookup_maps_bytes_to_pages() {
        let chunks = [
            Chunk {
                ptr: 0,
                bytes: 4096,
                base: 0,
                first_page: 0,
            },
            Chunk {
                ptr: 0,
                bytes: 4096,
                base: 4096,
                first_page: 4,
            },
        ];
        assert_eq!(page_of(&chunks, 0, 1024), Some(0));
        assert_eq!(page_of(&chunks, 3 * 1024 + 8, 1024), Some(3));
        assert_eq!(page_of(&chunks, 4096 + 2048, 1024), Some(6));
    }

    #[test]
    fn report_exit_codes() {
        let rank = |outcome| RankReport {
            plan: plan(GIB, MIB),
            gpu_name: "NVIDIA H200".into(),
            uuid: "GPU-x".into(),
            total_bytes: 0,
            free_before_bytes: 0,
            free_after_bytes: 0,
            outcome,
            pages: 0,
            pool_allocated_bytes: 0,
            alloc_seconds: 0.0,
            write_seconds: 0.0,
            verify_seconds: 0.0,
            write_gbs: None,
            verify_gbs: None,
            d2d_copy_gbs: None,
        };
        let ok = rank(RankOutcome::Verified {
            pool_covers_context: true,
        });
        assert_eq!(
            ProbeReport {
                nonce: 0,
                ranks: vec![ok.clone()]
            }
            .exit_code(),
            0
        );
        for bad in [
            RankOutcome::Verified {
                pool_covers_context: false,
            },
            RankOutcome::DoesNotFit {
                need_bytes: 2,
                free_bytes: 1,
            },
            RankOutcome::Corrupt {
                mismatched_words: 1,
                first_bad_page: Some(0),
            },
        ] {
            assert_eq!(
                ProbeReport {
                    nonce: 0,
                    ranks: vec![ok.clone(), rank(bad)]
                }
                .exit_code(),
                1
            );
        }
    }
}
