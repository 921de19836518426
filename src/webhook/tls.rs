//! The serving certificate, reloaded from disk when its files change: cert-manager rotates the
//! Secret and the kubelet swaps the mounted files, and the webhook must serve the new pair without
//! a restart. Each handshake asks the store for the current pair.

use super::WebhookError;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::{ClientHello, ResolvesServerCert};
use tokio_rustls::rustls::sign::CertifiedKey;
use tokio_rustls::rustls::ServerConfig;

/// The certificate chain and key files and the pair last loaded from them.
pub struct CertStore {
    cert_path: PathBuf,
    key_path: PathBuf,
    current: RwLock<Arc<CertifiedKey>>,
    /// The bytes the current pair was parsed from: comparing contents, not mtimes, catches a
    /// swap within the file system's timestamp granularity.
    loaded: Mutex<(Vec<u8>, Vec<u8>)>,
    /// The last pair refused on reload, so that it is logged and counted once, not every tick.
    refused: Mutex<Option<(Vec<u8>, Vec<u8>)>>,
}

impl std::fmt::Debug for CertStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CertStore")
            .field("cert_path", &self.cert_path)
            .field("key_path", &self.key_path)
            .finish_non_exhaustive()
    }
}

impl CertStore {
    /// Loads the pair; an unreadable or mismatched pair is an error at start-up.
    pub fn load(cert_path: &Path, key_path: &Path) -> Result<Self, WebhookError> {
        let (cert, key) = read_files(cert_path, key_path)?;
        let pair = parse(&cert, &key).map_err(|e| tls_error(cert_path, key_path, &e))?;
        Ok(Self {
            cert_path: cert_path.to_path_buf(),
            key_path: key_path.to_path_buf(),
            current: RwLock::new(Arc::new(pair)),
            loaded: Mutex::new((cert, key)),
            refused: Mutex::new(None),
        })
    }

    /// Reloads the pair when either file's contents changed. Returns whether it did. A pair
    /// that does not parse or match (one file written, the other not yet), or whose certificate
    /// is expired or not yet valid, is an error, reported once, and the previous pair stays in
    /// service.
    pub fn reload_if_changed(&self) -> Result<bool, WebhookError> {
        let (cert, key) = read_files(&self.cert_path, &self.key_path)?;
        let mut loaded = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if loaded.0 == cert && loaded.1 == key {
            return Ok(false);
        }
        let mut refused = self.refused.lock().unwrap_or_else(|e| e.into_inner());
        if refused.as_ref().is_some_and(|r| r.0 == cert && r.1 == key) {
            return Ok(false);
        }
        let pair = match parse(&cert, &key) {
            Ok(pair) => pair,
            Err(e) => {
                *refused = Some((cert, key));
                return Err(tls_error(&self.cert_path, &self.key_path, &e));
            }
        };
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(pair);
        *loaded = (cert, key);
        Ok(true)
    }

    /// A rustls server configuration that serves whatever pair is current, over HTTP/2 or 1.1.
    pub fn server_config(self: &Arc<Self>) -> Result<ServerConfig, WebhookError> {
        let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| WebhookError::Tls(e.to_string()))?
            .with_no_client_auth()
            .with_cert_resolver(self.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(config)
    }
}

impl ResolvesServerCert for CertStore {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(
            self.current
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        )
    }
}

fn read_files(cert: &Path, key: &Path) -> Result<(Vec<u8>, Vec<u8>), WebhookError> {
    let read = |p: &Path| {
        crate::input::read_regular(p)
            .map(String::into_bytes)
            .map_err(|e| WebhookError::Tls(e.to_string()))
    };
    Ok((read(cert)?, read(key)?))
}

fn parse(cert: &[u8], key: &[u8]) -> Result<CertifiedKey, String> {
    let chain = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("certificate: {e}"))?;
    if chain.is_empty() {
        return Err("the certificate file holds no PEM certificate".into());
    }
    check_validity(&chain[0])?;
    let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| format!("private key: {e}"))?;
    CertifiedKey::from_der(chain, key, &ring::default_provider()).map_err(|e| e.to_string())
}

/// Refuses a serving certificate outside its validity period: the API server would refuse every
/// handshake, and with `failurePolicy: Ignore` that lets every object in unchecked.
fn check_validity(leaf: &CertificateDer<'_>) -> Result<(), String> {
    let (_, cert) = x509_parser::parse_x509_certificate(leaf.as_ref())
        .map_err(|e| format!("certificate: {e}"))?;
    let validity = cert.validity();
    let now = x509_parser::time::ASN1Time::now();
    if now < validity.not_before {
        return Err(format!(
            "the certificate is not valid before {}",
            validity.not_before
        ));
    }
    if now > validity.not_after {
        return Err(format!("the certificate expired at {}", validity.not_after));
    }
    Ok(())
}

fn tls_error(cert: &Path, key: &Path, e: &str) -> WebhookError {
    WebhookError::Tls(format!("{} / {}: {e}", cert.display(), key.display()))
}
