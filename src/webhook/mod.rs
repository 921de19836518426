//! `kvlint webhook`: a validating admission webhook (admission.k8s.io/v1 over HTTPS) that runs
//! the same checks as `kvlint check` on the object under review. See `deploy/` and docs/src/webhook.md.

pub mod admission;
pub mod metrics;
pub mod object;
pub mod prune;
pub mod request;
pub mod server;
pub mod slots;
pub mod tls;

pub use admission::{Controllers, Policy, Unknown, Verdict};
pub use server::{Settings, Webhook};

/// Failures that stop the webhook from starting or serving.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("TLS: {0}")]
    Tls(String),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: std::net::SocketAddr,
        source: std::io::Error,
    },
}
