//! The live inventory through NVML (nvml-wrapper dlopens `libnvidia-ml.so.1` at run time, so this
//! builds and fails cleanly without a driver).

use super::inventory::{GpuInfo, GpuProcess, Inventory, MemoryInfo, MigInfo, MigSlice};
use super::GpuError;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};

/// Reads every GPU NVML sees. No driver → `GpuError::NoDriver` (exit 4), never a panic.
pub fn inventory() -> Result<Inventory, GpuError> {
    let nvml = Nvml::init().map_err(init_error)?;
    let count = nvml
        .device_count()
        .map_err(|e| call_error("device count", e))?;
    let gpus = (0..count)
        .map(|i| {
            let dev = nvml
                .device_by_index(i)
                .map_err(|e| call_error("device handle", e))?;
            Ok(gpu_info(i, &dev))
        })
        .collect::<Result<Vec<_>, GpuError>>()?;
    let cuda = nvml.sys_cuda_driver_version().ok().map(|v| {
        format!(
            "{}.{}",
            nvml_wrapper::cuda_driver_version_major(v),
            nvml_wrapper::cuda_driver_version_minor(v)
        )
    });
    Ok(Inventory {
        source: "nvml".into(),
        driver_version: nvml.sys_driver_version().ok(),
        cuda_driver_version: cuda,
        gpus,
    })
}

/// Maps an `Nvml::init` failure: a missing library or unloaded driver means "no NVIDIA driver".
pub(crate) fn init_error(e: NvmlError) -> GpuError {
    match e {
        NvmlError::LibloadingError(_) | NvmlError::LibraryNotFound | NvmlError::DriverNotLoaded => {
            GpuError::NoDriver(format!("cannot load NVML (libnvidia-ml.so.1): {e}"))
        }
        NvmlError::NoPermission => GpuError::Nvml(format!("no permission to open the GPUs: {e}")),
        other => GpuError::Nvml(format!("NVML init failed: {other}")),
    }
}

fn call_error(what: &str, e: NvmlError) -> GpuError {
    GpuError::Nvml(format!("{what}: {e}"))
}

/// One GPU; fields NVML cannot give become `None` plus a note, so one bad query never hides the rest.
fn gpu_info(index: u32, dev: &Device) -> GpuInfo {
    let mut notes = Vec::new();
    let mut note = |what: &str, e: NvmlError| notes.push(format!("{what}: {e}"));
    let uuid = dev.uuid().unwrap_or_else(|e| {
        note("uuid", e);
        String::new()
    });
    let name = dev.name().unwrap_or_else(|e| {
        note("name", e);
        String::new()
    });
    let pci_bus_id = dev.pci_info().map(|p| p.bus_id).unwrap_or_else(|e| {
        note("pci info", e);
        String::new()
    });
    let compute_capability = dev
        .cuda_compute_capability()
        .map(|c| (c.major.max(0) as u32, c.minor.max(0) as u32))
        .map_err(|e| note("compute capability", e))
        .ok();
    let memory = memory_info(dev).map_err(|e| notes.push(e)).ok();
    let mig = mig_info(dev);
    let processes = dev
        .running_compute_processes()
        .map(|ps| ps.into_iter().map(process).collect())
        .unwrap_or_default();
    GpuInfo {
        index,
        uuid,
        name,
        pci_bus_id,
        compute_capability,
        memory,
        mig,
        processes,
        notes,
    }
}

/// NVML v2 memory info. Drivers older than R510 lack `nvmlDeviceGetMemoryInfo_v2`.
fn memory_info(dev: &Device) -> Result<MemoryInfo, String> {
    match dev.memory_info() {
        Ok(m) => Ok(MemoryInfo {
            total_bytes: m.total,
            reserved_bytes: m.reserved,
            free_bytes: m.free,
            used_bytes: m.used,
        }),
        Err(e @ (NvmlError::FailedToLoadSymbol(_) | NvmlError::NotSupported | NvmlError::FunctionNotFound)) => Err(
            format!("driver too old: NVML has no v2 memory info (needs R510 or newer), memory unknown ({e})"),
        ),
        Err(e) => Err(format!("memory info: {e}")),
    }
}

/// MIG mode and slices; `None` on GPUs without MIG support.
fn mig_info(dev: &Device) -> Option<MigInfo> {
    let mode = dev.mig_mode().ok()?;
    let enabled = mode.current == 1;
    let slices = if enabled {
        let max = dev.mig_device_count().unwrap_or(0);
        (0..max)
            .filter_map(|i| {
                let s = dev.mig_device_by_index(i).ok()?;
                Some(MigSlice {
                    index: i,
                    uuid: s.uuid().unwrap_or_default(),
                    name: s.name().unwrap_or_default(),
                    memory: memory_info(&s).ok(),
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    Some(MigInfo {
        enabled,
        pending_enabled: mode.pending == 1,
        slices,
    })
}

fn process(p: nvml_wrapper::struct_wrappers::device::ProcessInfo) -> GpuProcess {
    use nvml_wrapper::enums::device::UsedGpuMemory;
    let used_bytes = match p.used_gpu_memory {
        UsedGpuMemory::Used(b) => Some(b),
        UsedGpuMemory::Unavailable => None,
    };
    GpuProcess {
        pid: p.pid,
        used_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_library_is_no_driver() {
        let e = init_error(NvmlError::LibraryNotFound);
        assert!(matches!(e, GpuError::NoDriver(_)));
        assert_eq!(e.exit_code(), 4);
        assert_eq!(init_error(NvmlError::DriverNotLoaded).exit_code(), 4);
        assert_eq!(init_error(NvmlError::Unknown).exit_code(), 4);
    }

    #[test]
    fn inventory_without_a_driver_is_an_error_not_a_panic() {
        // On a GPU machine this reads real GPUs; elsewhere it must be a clean exit-4 error.
        match inventory() {
            Ok(inv) => assert!(inv.source == "nvml"),
            Err(e) => {
                assert_eq!(e.exit_code(), 4, "{e}");
                assert!(!e.to_string().contains('\n'), "one line: {e}");
            }
        }
    }
}
