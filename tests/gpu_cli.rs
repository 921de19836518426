//! `kvlint gpus` and `kvlint probe` as whole CLI runs. Without a GPU they must exit 4 with one
//! line and no panic; the ignored tests prove the probe end to end on a GPU machine
//! (`KVLINT_GPU_TESTS=1`, see ../shared/gpu/README.md).

mod common;

use common::kvlint;

fn has_driver() -> bool {
    kvlint::gpu::nvml::inventory().is_ok()
}

#[test]
fn gpus_and_probe_without_a_gpu_exit_4_with_one_clear_line() {
    if has_driver() {
        return; // a GPU machine: the ignored tests below cover it
    }
    let probe = [
        "probe",
        "--",
        "vllm",
        "serve",
        "Qwen/Qwen3-8B",
        "--max-model-len",
        "32768",
    ];
    for args in [&["gpus"][..], &["gpus", "--format", "json"][..], &probe[..]] {
        let run = kvlint(args);
        assert_eq!(run.code, 4, "{args:?}: {}", run.stderr);
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("no NVIDIA driver"), "{}", run.stderr);
        assert!(!run.stderr.contains("panick"), "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    let auto = kvlint(&["check", "--gpu", "auto", "fixtures/incident/prefill.sh"]);
    assert_eq!(auto.code, 4, "{}", auto.stderr);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn probe_cli_proves_a_pool_that_fits_on_this_node() {
    if !common::gpu_or_skip("probe_cli_proves_a_pool_that_fits_on_this_node") {
        return;
    }
    let args = [
        "probe",
        "--format",
        "json",
        "--",
        "vllm",
        "serve",
        "Qwen/Qwen3-8B",
        "--max-model-len",
        "32768",
        "--gpu-memory-utilization",
        "0.5",
    ];
    let run = kvlint(&args);
    println!("{}\n{}", run.stdout, run.stderr);
    if let Ok(dir) = std::env::var("OUT") {
        let _ = std::fs::write(format!("{dir}/probe-cli.json"), &run.stdout);
    }
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert!(!report["ranks"].as_array().unwrap().is_empty());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn capacity_with_gpu_auto_plans_with_the_measured_gpu() {
    if !common::gpu_or_skip("capacity_with_gpu_auto_plans_with_the_measured_gpu") {
        return;
    }
    let run = kvlint(&[
        "capacity",
        "--gpu",
        "auto",
        "--format",
        "json",
        "--",
        "vllm",
        "serve",
        "Qwen/Qwen3-8B",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let plan: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    println!("{plan:#}");
    let inv = kvlint::gpu::nvml::inventory().unwrap();
    let measured = inv.gpus[0].measured_spec().unwrap();
    assert_eq!(plan["gpu"], measured.name.as_str());
}
