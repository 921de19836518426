//! `kvlint webhook`: the admission webhook's settings from the command line and kvlint.toml.

use super::{catalogs, exit, options, Run, UnknownPolicy, UsageError, WebhookArgs};
use crate::config::{self, Config};
use crate::gpu;
use crate::pipeline::Options;
use crate::rules::select::Selection;

pub(super) fn webhook(mut a: WebhookArgs) -> Run {
    use crate::webhook::{Controllers, Policy, Settings, Unknown, Webhook};
    let cfg = match &a.config {
        Some(p) => config::load(p).map_err(|e| UsageError(e.to_string()))?,
        None => Config::default(),
    };
    gpu::catalog::add_local(cfg.gpus.clone());
    crate::platform::set_site(cfg.platforms.clone());
    a.hardware.gpu_source = gpu::GpuSource::Webhook;
    a.hardware.engine_version = a
        .hardware
        .engine_version
        .take()
        .or_else(|| cfg.engine_version.clone());
    let mut settings = Settings::new(a.listen, a.tls_cert, a.tls_key);
    // The webhook's own node says nothing about where admitted pods run: no NVML fallback.
    let mut options = Options {
        rules: cfg.rule_settings(&Selection::default()),
        node_gpu: None,
        ..options(&a.hardware, cfg.gpu.as_ref())?
    };
    options.models.table = cfg.models.clone();
    options.models.hub = catalogs::webhook_hub(a.hub, &a.hardware);
    settings.policy = Policy {
        options,
        unknown: match a.unknown {
            UnknownPolicy::Warn => Unknown::Warn,
            UnknownPolicy::Deny => Unknown::Deny,
        },
        controllers: Controllers::with(
            cfg.trusted_controllers
                .iter()
                .chain(&a.trusted_controller)
                .cloned(),
        ),
    };
    // Threads stay bounded (at most 2 × CPUs + 2 with the main thread, from 2 CPUs): async workers
    // for I/O, one blocking thread per review slot, one per abandoned review (half the CPUs) and
    // one for certificate reloads. Half the CPUs go to async
    // workers, as reviews run on the blocking threads: an idle worker looks for work before it
    // parks, and on 2 cores a second one cost a tenth more CPU per review (docs/src/webhook/load-test.md).
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads((settings.max_concurrency / 2).clamp(1, 4))
        .max_blocking_threads(settings.max_concurrency.max(1) + settings.max_abandoned + 1)
        .enable_all()
        .build()
        .map_err(|e| UsageError(format!("cannot start the runtime: {e}")))?;
    let served = runtime.block_on(async {
        let hook = Webhook::bind(settings)
            .await
            .map_err(|e| UsageError(e.to_string()))?;
        if let Some(addr) = hook.local_addr() {
            eprintln!("kvlint webhook: listening on https://{addr}");
        }
        hook.serve(terminated())
            .await
            .map_err(|e| UsageError(e.to_string()))
    });
    // Requests are drained; work abandoned at its deadline is not waited for (dropping the
    // runtime would wait for every blocking thread).
    runtime.shutdown_background();
    served?;
    Ok(exit::CLEAN)
}

/// SIGTERM (what the kubelet sends) or Ctrl-C.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
