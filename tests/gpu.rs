//! GPU checks. The `#[ignore = "needs an NVIDIA GPU"]` tests run on a GPU machine with
//! `KVLINT_GPU_TESTS=1 ... --ignored` (see ../shared/gpu/README.md); the rest run everywhere.
//! Paths are relative to the project root, where both `cargo test` and `.gpu/run.sh` run.

mod common;

use kvlint::gpu::inventory::{GpuInfo, Inventory};
use kvlint::gpu::nvml;
use kvlint::probe::{self, ProbeReport, ProbeRequest, RankOutcome, RankPlan};
use std::process::Command;

const MIB: u64 = 1024 * 1024;
const GIB: u64 = 1024 * MIB;
/// Llama-3-8B KV bytes per token in bf16: 32 layers x 8 KV heads x 128 dims x 2 (K, V) x 2 bytes.
const KV_BYTES_PER_TOKEN: u64 = 32 * 8 * 128 * 2 * 2;
/// A 16-token page, vLLM's default block size.
const PAGE_BYTES: u64 = 16 * KV_BYTES_PER_TOKEN;

fn gpu_tests_enabled() -> bool {
    std::env::var("KVLINT_GPU_TESTS").is_ok_and(|v| v == "1")
}

/// Saves a result under `$OUT` when the GPU runner provides one, and prints it.
fn record(name: &str, json: &str) {
    println!("== {name}\n{json}");
    if let Ok(dir) = std::env::var("OUT") {
        let _ = std::fs::write(format!("{dir}/{name}.json"), json);
    }
}

fn report_json(r: &ProbeReport) -> String {
    serde_json::to_string_pretty(r).unwrap_or_default()
}

fn first_gpu() -> GpuInfo {
    let inv = nvml::inventory().expect("NVML inventory on a GPU machine");
    inv.gpus.first().cloned().expect("at least one GPU")
}

fn rank(pool_bytes: u64, weights_bytes: u64, context_tokens: u64) -> RankPlan {
    let pool_bytes = pool_bytes / PAGE_BYTES * PAGE_BYTES;
    RankPlan {
        gpu_index: 0,
        weights_bytes,
        pool_bytes,
        page_bytes: PAGE_BYTES,
        pool_tokens: pool_bytes / KV_BYTES_PER_TOKEN,
        context_tokens,
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn gpus_agrees_with_nvidia_smi() {
    if !common::gpu_or_skip("gpus_agrees_with_nvidia_smi") {
        return;
    }
    let inv = nvml::inventory().expect("NVML inventory");
    record("inventory", &inv.to_json());
    println!("{}", inv.render_table());
    let out = Command::new("nvidia-smi")
        .args([
            "--query-gpu=index,uuid,name,memory.total",
            "--format=csv,noheader,nounits",
        ])
        .output()
        .expect("nvidia-smi runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<String>> = text
        .lines()
        .map(|l| l.split(',').map(|f| f.trim().to_string()).collect())
        .collect();
    assert_eq!(rows.len(), inv.gpus.len(), "GPU count: {text}");
    for (row, g) in rows.iter().zip(&inv.gpus) {
        assert_eq!(row[0], g.index.to_string());
        assert_eq!(row[1], g.uuid);
        assert_eq!(row[2], g.name);
        let m = g.memory.expect("v2 memory info on a current driver");
        assert_eq!(
            row[3],
            (m.total_bytes / MIB).to_string(),
            "memory.total MiB"
        );
        assert!(g.catalog_spec().is_some(), "catalog knows {}", g.name);
    }
    // The captured inventory round-trips through the fixture loader.
    assert_eq!(Inventory::from_json(&inv.to_json()).as_ref(), Ok(&inv));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn probe_allocates_writes_verifies_and_releases_the_pool() {
    if !common::gpu_or_skip("probe_allocates_writes_verifies_and_releases_the_pool") {
        return;
    }
    let g = first_gpu();
    let free = g.memory.expect("memory").free_bytes;
    // Weights of a ~16 GiB model and a pool of most of the rest: tens of GiB on a data-center GPU.
    let weights = 16 * GIB;
    let pool = (free * 3 / 4).saturating_sub(weights);
    let plan = rank(pool, weights, 8192);
    let report = probe::run(
        &ProbeRequest {
            ranks: vec![plan.clone()],
            corrupt_page: None,
        },
        true,
    )
    .expect("probe runs");
    record("probe-fits", &report_json(&report));
    let r = &report.ranks[0];
    assert_eq!(
        r.outcome,
        RankOutcome::Verified {
            pool_covers_context: true
        },
        "{r:?}"
    );
    assert!(r.pool_allocated_bytes >= plan.pool_bytes);
    assert_eq!(r.pages, plan.pool_bytes / PAGE_BYTES);
    assert!(
        r.free_before_bytes.abs_diff(r.free_after_bytes) <= 8 * MIB,
        "memory released"
    );
    let (verify, d2d) = (
        r.verify_gbs.expect("verify bandwidth"),
        r.d2d_copy_gbs.expect("copy bandwidth"),
    );
    println!(
        "verify {verify:.0} GB/s = {:.0} % of D2D copy {d2d:.0} GB/s",
        100.0 * verify / d2d
    );
    assert!(
        verify >= 0.7 * d2d,
        "verify bandwidth {verify:.0} GB/s below 70 % of D2D {d2d:.0} GB/s"
    );
    assert_eq!(report.exit_code(), 0);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn probe_refuses_a_pool_that_cannot_fit_before_allocating() {
    if !common::gpu_or_skip("probe_refuses_a_pool_that_cannot_fit_before_allocating") {
        return;
    }
    let g = first_gpu();
    let total = g.memory.expect("memory").total_bytes;
    let plan = rank(total, 8 * GIB, 8192);
    let report = probe::run(
        &ProbeRequest {
            ranks: vec![plan],
            corrupt_page: None,
        },
        false,
    )
    .expect("probe runs");
    record("probe-does-not-fit", &report_json(&report));
    let r = &report.ranks[0];
    match r.outcome {
        RankOutcome::DoesNotFit {
            need_bytes,
            free_bytes,
        } => {
            assert!(need_bytes > free_bytes);
            assert_eq!(free_bytes, r.free_before_bytes);
        }
        ref other => panic!("expected DoesNotFit, got {other:?}"),
    }
    assert_eq!(
        (r.pool_allocated_bytes, r.pages, r.d2d_copy_gbs),
        (0, 0, None),
        "nothing allocated"
    );
    assert_eq!(report.exit_code(), 1);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn probe_detects_a_corrupted_page() {
    if !common::gpu_or_skip("probe_detects_a_corrupted_page") {
        return;
    }
    let plan = rank(2 * GIB, 0, 1024);
    let req = ProbeRequest {
        ranks: vec![plan],
        corrupt_page: Some(737),
    };
    let report = probe::run(&req, false).expect("probe runs");
    record("probe-corrupt", &report_json(&report));
    let r = &report.ranks[0];
    assert_eq!(
        r.outcome,
        RankOutcome::Corrupt {
            mismatched_words: PAGE_BYTES / 8,
            first_bad_page: Some(737)
        },
        "{r:?}"
    );
    assert!(
        r.free_before_bytes.abs_diff(r.free_after_bytes) <= 8 * MIB,
        "memory released after a failure"
    );
    assert_eq!(report.exit_code(), 1);
}

#[test]
fn without_a_driver_everything_is_exit_4() {
    if gpu_tests_enabled() {
        return;
    }
    if let Err(e) = nvml::inventory() {
        assert_eq!(e.exit_code(), 4, "{e}");
    }
    let req = ProbeRequest {
        ranks: vec![rank(GIB, 0, 1)],
        corrupt_page: None,
    };
    if let Err(e) = probe::run(&req, false) {
        assert_eq!(e.exit_code(), 4, "{e}");
    }
}

#[test]
fn fixture_inventory_loads() {
    let text = std::fs::read_to_string("fixtures/gpus/h100-80gb-x8.json")
        .expect("fixture at the project root");
    let inv = Inventory::from_json(&text).expect("valid");
    let specs: Vec<_> = inv.gpus.iter().filter_map(GpuInfo::measured_spec).collect();
    assert_eq!(specs.len(), 8);
    assert!(specs
        .iter()
        .all(|s| s.name == "H100-80GB" && s.memory_mib == 81559));
}
