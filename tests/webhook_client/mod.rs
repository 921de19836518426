//! The API server's side of the webhook, for tests and the load generator: a CA and serving
//! pair made on the spot, and an HTTPS client (HTTP/1.1 or HTTP/2) that trusts only that CA.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::{http1, http2};
use hyper::{Method, Request, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair, SanType};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{ClientConfig, RootCertStore};
use tokio_rustls::TlsConnector;

/// Writes a new CA-signed serving pair for `localhost` and 127.0.0.1 and returns the CA
/// certificate that verifies it.
pub fn write_pair(cert_path: &Path, key_path: &Path) -> CertificateDer<'static> {
    write_pair_valid(cert_path, key_path, None)
}

/// A calendar date: year, month, day.
pub type Date = (i32, u8, u8);

/// As [`write_pair`], with the serving certificate valid from one date to another, e.g. already
/// expired.
pub fn write_pair_valid(
    cert_path: &Path,
    key_path: &Path,
    validity: Option<(Date, Date)>,
) -> CertificateDer<'static> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().expect("CA key"))
        .expect("CA certificate");
    let mut params = CertificateParams::new(vec!["localhost".to_string()]).expect("params");
    params
        .subject_alt_names
        .push(SanType::IpAddress([127, 0, 0, 1].into()));
    if let Some(((y0, m0, d0), (y1, m1, d1))) = validity {
        params.not_before = rcgen::date_time_ymd(y0, m0, d0);
        params.not_after = rcgen::date_time_ymd(y1, m1, d1);
    }
    let key = KeyPair::generate().expect("serving key");
    let cert = params.signed_by(&key, &ca).expect("serving certificate");
    // Key first, so a reload between the two writes sees a mismatched pair, never a half file.
    std::fs::write(key_path, key.serialize_pem()).expect("write key");
    std::fs::write(cert_path, cert.pem()).expect("write certificate");
    ca.der().clone()
}

/// HTTP version to speak, chosen by ALPN.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    H1,
    H2,
}

enum Sender {
    H1(http1::SendRequest<Full<Bytes>>),
    H2(http2::SendRequest<Full<Bytes>>),
}

/// One HTTPS connection to the webhook.
pub struct Client {
    sender: Sender,
}

/// A TLS connection to `addr` that verifies the server against `ca` only, for `localhost`.
pub async fn tls(
    addr: SocketAddr,
    ca: &CertificateDer<'static>,
    alpn: &[u8],
) -> Result<TlsStream<TcpStream>, String> {
    let mut roots = RootCertStore::empty();
    roots.add(ca.clone()).map_err(|e| e.to_string())?;
    let mut config = ClientConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![alpn.to_vec()];
    let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    tcp.set_nodelay(true).map_err(|e| e.to_string())?;
    let name = ServerName::try_from("localhost").map_err(|e| e.to_string())?;
    TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .map_err(|e| e.to_string())
}

impl Client {
    /// Another handle on the same HTTP/2 connection, for concurrent requests (None for HTTP/1.1).
    pub fn try_clone(&self) -> Option<Client> {
        match &self.sender {
            Sender::H2(s) => Some(Client {
                sender: Sender::H2(s.clone()),
            }),
            Sender::H1(_) => None,
        }
    }

    pub async fn connect(
        addr: SocketAddr,
        ca: &CertificateDer<'static>,
        proto: Proto,
    ) -> Result<Client, String> {
        let alpn: &[u8] = match proto {
            Proto::H1 => b"http/1.1",
            Proto::H2 => b"h2",
        };
        let stream = tls(addr, ca, alpn).await?;
        let negotiated = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
        if negotiated.as_deref() != Some(alpn) {
            return Err(format!("ALPN negotiated {negotiated:?}"));
        }
        let io = TokioIo::new(stream);
        let sender = match proto {
            Proto::H1 => {
                let (send, conn) = http1::handshake(io).await.map_err(|e| e.to_string())?;
                tokio::spawn(conn);
                Sender::H1(send)
            }
            Proto::H2 => {
                let (send, conn) = http2::handshake(TokioExecutor::new(), io)
                    .await
                    .map_err(|e| e.to_string())?;
                tokio::spawn(conn);
                Sender::H2(send)
            }
        };
        Ok(Client { sender })
    }

    /// Sends one request and reads the whole answer.
    pub async fn request(
        &mut self,
        method: Method,
        path: &str,
        body: Vec<u8>,
    ) -> Result<(StatusCode, Bytes), String> {
        // HTTP/2 carries scheme and authority in the URI; HTTP/1.1 a path and a Host header.
        let uri = match self.sender {
            Sender::H1(_) => path.to_string(),
            Sender::H2(_) => format!("https://localhost{path}"),
        };
        let req = Request::builder()
            .method(method)
            .uri(uri)
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(Full::from(body))
            .map_err(|e| e.to_string())?;
        let res = match &mut self.sender {
            Sender::H1(s) => {
                s.ready().await.map_err(|e| e.to_string())?;
                s.send_request(req).await
            }
            Sender::H2(s) => {
                s.ready().await.map_err(|e| e.to_string())?;
                s.send_request(req).await
            }
        }
        .map_err(|e| e.to_string())?;
        let status = res.status();
        let body = res
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok((status, body))
    }
}
