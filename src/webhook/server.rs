//! The HTTPS server: TLS with a reloading certificate, HTTP/1.1 and HTTP/2, `POST /validate`,
//! `/healthz`, `/readyz`, `/metrics`, limits on body size, time and concurrency, and a drain of
//! in-flight requests on shutdown.

use super::admission::{self, Policy, Verdict};
use super::metrics::Metrics;
use super::prune;
use super::request::Review;
use super::slots::{NoSlot, Slots};
use super::tls::CertStore;
use super::WebhookError;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{CONTENT_LENGTH, CONTENT_TYPE};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_rustls::TlsAcceptor;

/// A TLS handshake or a request's headers that take longer than this are dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// How the webhook runs.
#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: SocketAddr,
    pub tls_cert: PathBuf,
    pub tls_key: PathBuf,
    pub policy: Policy,
    /// Largest request body; larger ones get 413. An UPDATE review carries the object twice.
    pub body_limit: usize,
    /// Deadline for reading and answering one review, kept under the configuration's
    /// `timeoutSeconds` so kvlint answers before the API server gives up.
    pub request_timeout: Duration,
    /// Reviews checked at once (one blocking thread each). Default: the CPUs available.
    pub max_concurrency: usize,
    /// Reviews that may wait for a slot, until their deadline; a review that finds this line
    /// full is answered at once under `--unknown` ([`super::slots`]).
    pub max_queued: usize,
    /// Threads that reviews answered at their deadline may hold while their work runs on; their
    /// slots are free meanwhile ([`super::slots`]). Default: half the CPUs, at least one, which
    /// keeps the process within 2 × CPUs + 2 threads.
    pub max_abandoned: usize,
    /// Request bytes held at once, by bodies being read and reviewed: a review peaks at a small
    /// multiple of its body, so this bounds the webhook's memory. A request waits for its share
    /// (its Content-Length, else `body_limit`) until the deadline, then gets 503.
    pub memory_budget: usize,
    /// A connection with no request for this long is closed (keep-alive connections of
    /// clients that went away).
    pub idle_timeout: Duration,
    /// How often the certificate files are compared with the pair in service.
    pub reload_interval: Duration,
    /// After the shutdown signal, how long the webhook keeps accepting with `/readyz` at 503,
    /// while the endpoints controller takes it out of the Service.
    pub shutdown_delay: Duration,
    /// How long shutdown then waits for in-flight requests.
    pub drain_timeout: Duration,
}

impl Settings {
    /// Settings with the default limits.
    pub fn new(listen: SocketAddr, tls_cert: PathBuf, tls_key: PathBuf) -> Self {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        Settings {
            listen,
            tls_cert,
            tls_key,
            policy: Policy::default(),
            body_limit: 3 * 1024 * 1024,
            request_timeout: Duration::from_secs(3),
            max_concurrency: cpus,
            max_queued: 64,
            max_abandoned: (cpus / 2).max(1),
            memory_budget: 3 * 1024 * 1024,
            idle_timeout: Duration::from_secs(20),
            reload_interval: Duration::from_secs(2),
            shutdown_delay: Duration::from_secs(5),
            drain_timeout: Duration::from_secs(20),
        }
    }
}

/// Shared by every connection.
struct State {
    settings: Settings,
    /// `settings.policy`, shared with the review threads without a copy per review.
    policy: Arc<Policy>,
    metrics: Metrics,
    slots: Slots,
    /// Units of [`MEMORY_UNIT`] bytes out of `memory_budget`.
    memory: Arc<Semaphore>,
    draining: AtomicBool,
}

/// A bound, not yet serving webhook.
pub struct Webhook {
    listener: TcpListener,
    acceptor: TlsAcceptor,
    certs: Arc<CertStore>,
    state: Arc<State>,
}

impl Webhook {
    /// Loads the certificate and binds the address (port 0 picks a free one).
    pub async fn bind(settings: Settings) -> Result<Self, WebhookError> {
        let certs = Arc::new(CertStore::load(&settings.tls_cert, &settings.tls_key)?);
        let acceptor = TlsAcceptor::from(Arc::new(certs.server_config()?));
        let listener =
            TcpListener::bind(settings.listen)
                .await
                .map_err(|source| WebhookError::Listen {
                    addr: settings.listen,
                    source,
                })?;
        let slots = Slots::new(
            settings.max_concurrency,
            settings.max_queued,
            settings.max_abandoned,
        );
        let memory = Arc::new(Semaphore::new(memory_units(
            settings.memory_budget.max(settings.body_limit),
        )));
        Ok(Webhook {
            listener,
            acceptor,
            certs,
            state: Arc::new(State {
                policy: Arc::new(settings.policy.clone()),
                settings,
                metrics: Metrics::default(),
                slots,
                memory,
                draining: AtomicBool::new(false),
            }),
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.listener.local_addr().ok()
    }

    /// Serves until `shutdown` completes; then turns `/readyz` to 503, keeps accepting for the
    /// shutdown delay, stops accepting and waits up to the drain timeout for requests in flight.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) -> Result<(), WebhookError> {
        let Webhook {
            listener,
            acceptor,
            certs,
            state,
        } = self;
        let reload = tokio::spawn(reload_loop(certs, state.clone()));
        let graceful = GracefulShutdown::new();
        tokio::pin!(shutdown);
        let stop = tokio::time::sleep(Duration::MAX);
        tokio::pin!(stop);
        let mut stopping = false;
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((tcp, _)) => {
                        let _ = tcp.set_nodelay(true);
                        let watcher = graceful.watcher();
                        let (acceptor, state) = (acceptor.clone(), state.clone());
                        let idle_timeout = state.settings.idle_timeout;
                        tokio::spawn(async move {
                            let Ok(Ok(tls)) =
                                tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await
                            else {
                                return;
                            };
                            let idle = Arc::new(Idle::default());
                            let seen = idle.clone();
                            let service = hyper::service::service_fn(move |req| {
                                let busy = seen.busy();
                                let state = state.clone();
                                async move {
                                    let reply = handle(req, state).await;
                                    drop(busy);
                                    reply
                                }
                            });
                            let mut builder = auto::Builder::new(TokioExecutor::new());
                            builder
                                .http1()
                                .timer(TokioTimer::new())
                                .header_read_timeout(HANDSHAKE_TIMEOUT);
                            let conn = builder.serve_connection(TokioIo::new(tls), service);
                            tokio::select! {
                                _ = watcher.watch(conn.into_owned()) => {}
                                () = idle.expired(idle_timeout) => {}
                            }
                        });
                    }
                    // Out of file descriptors and the like: back off instead of spinning.
                    Err(e) => {
                        eprintln!("kvlint webhook: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                },
                () = &mut shutdown, if !stopping => {
                    stopping = true;
                    state.draining.store(true, Ordering::SeqCst);
                    eprintln!("kvlint webhook: shutting down; not ready, still accepting for {:?}", state.settings.shutdown_delay);
                    stop.as_mut().reset(tokio::time::Instant::now() + state.settings.shutdown_delay);
                }
                () = &mut stop => break,
            }
        }
        drop(listener);
        reload.abort();
        eprintln!("kvlint webhook: stopped accepting; draining requests in flight");
        if tokio::time::timeout(state.settings.drain_timeout, graceful.shutdown())
            .await
            .is_err()
        {
            eprintln!("kvlint webhook: drain timed out; closing the remaining connections");
        }
        Ok(())
    }
}

/// Compares the certificate files with the pair in service every `reload_interval`.
async fn reload_loop(certs: Arc<CertStore>, state: Arc<State>) {
    let mut tick = tokio::time::interval(state.settings.reload_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let c = certs.clone();
        match tokio::task::spawn_blocking(move || c.reload_if_changed()).await {
            Ok(Ok(true)) => {
                state.metrics.tls_reloaded();
                eprintln!("kvlint webhook: reloaded the serving certificate");
            }
            Ok(Ok(false)) => {}
            Ok(Err(e)) => {
                state.metrics.error("tls_reload");
                eprintln!("kvlint webhook: keeping the current certificate: {e}");
            }
            Err(e) => eprintln!("kvlint webhook: certificate reload task failed: {e}"),
        }
    }
}

type Reply = Response<Full<Bytes>>;

async fn handle(req: Request<Incoming>, state: Arc<State>) -> Result<Reply, Infallible> {
    let path = req.uri().path().to_string();
    let reply = match (req.method(), path.as_str()) {
        (&Method::POST, "/validate") => {
            let start = Instant::now();
            let _guard = state.metrics.in_flight();
            let reply = validate(req, &state).await;
            state.metrics.observe(start.elapsed());
            reply
        }
        (&Method::GET, "/healthz") => text(StatusCode::OK, "ok\n"),
        (&Method::GET, "/readyz") if state.draining.load(Ordering::SeqCst) => {
            text(StatusCode::SERVICE_UNAVAILABLE, "shutting down\n")
        }
        (&Method::GET, "/readyz") => text(StatusCode::OK, "ok\n"),
        (&Method::GET, "/metrics") => Response::builder()
            .header(CONTENT_TYPE, super::metrics::CONTENT_TYPE)
            .body(Full::from(state.metrics.render()))
            .unwrap_or_default(),
        (_, "/validate" | "/healthz" | "/readyz" | "/metrics") => {
            text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n")
        }
        _ => text(StatusCode::NOT_FOUND, "not found: POST /validate\n"),
    };
    state.metrics.request(&path, reply.status().as_u16());
    Ok(reply)
}

fn text(code: StatusCode, body: impl Into<String>) -> Reply {
    Response::builder()
        .status(code)
        .header(CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(Full::from(body.into()))
        .unwrap_or_default()
}

/// A request that gets an HTTP error instead of an AdmissionReview.
struct Refusal(StatusCode, &'static str, String);

impl Refusal {
    fn reply(self, state: &State) -> Reply {
        let Refusal(code, kind, reason) = self;
        state.metrics.error(kind);
        text(code, format!("{reason}\n"))
    }
}

async fn validate(req: Request<Incoming>, state: &Arc<State>) -> Reply {
    let deadline = Instant::now() + state.settings.request_timeout;
    let limit = state.settings.body_limit;
    let declared = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        discard_later(req.version(), req.into_body());
        return too_large(limit).reply(state);
    }
    let share = memory_units(declared.unwrap_or(limit).max(MEMORY_UNIT));
    let memory = match tokio::time::timeout_at(
        deadline.into(),
        state.memory.clone().acquire_many_owned(share as u32),
    )
    .await
    {
        Ok(Ok(m)) => m,
        _ => {
            return Refusal(
                StatusCode::SERVICE_UNAVAILABLE,
                "overloaded",
                "too many reviews in progress".into(),
            )
            .reply(state)
        }
    };
    let body = match tokio::time::timeout_at(deadline.into(), read_body(req, limit)).await {
        Ok(Ok(body)) => body,
        Ok(Err(refusal)) => return refusal.reply(state),
        Err(_) => {
            return Refusal(
                StatusCode::REQUEST_TIMEOUT,
                "timeout",
                "the request body did not arrive in time".into(),
            )
            .reply(state)
        }
    };
    let (body, cut) = match prune::prune(&body, prune::MAX_DEPTH) {
        Some((pruned, cut)) => (Bytes::from(pruned), cut),
        None => (body, 0),
    };
    // Parsed once, here: every answer, even one given when the check cannot run, carries the
    // uid. The body goes once the object's text is copied out of it.
    let review = match parse_review(&body) {
        Ok(review) => review,
        Err(reason) => return Refusal(StatusCode::BAD_REQUEST, "bad_request", reason).reply(state),
    };
    drop(body);
    let uid = review.uid.clone();
    let verdict = check(review, cut, memory, state, deadline).await;
    for (rule, level) in &verdict.findings {
        state.metrics.finding(rule, level.name());
    }
    state
        .metrics
        .decision(match (verdict.understood, verdict.allowed) {
            (false, _) => "skipped",
            (true, true) => "allowed",
            (true, false) => "denied",
        });
    let body = verdict.answer(&uid);
    Response::builder()
        .header(CONTENT_TYPE, "application/json")
        .body(Full::from(body))
        .unwrap_or_default()
}

/// Bytes of request body per permit of the memory budget.
const MEMORY_UNIT: usize = 16 * 1024;

fn memory_units(bytes: usize) -> usize {
    bytes.div_ceil(MEMORY_UNIT).min(Semaphore::MAX_PERMITS)
}

fn too_large(limit: usize) -> Refusal {
    Refusal(
        StatusCode::PAYLOAD_TOO_LARGE,
        "too_large",
        format!("the request body exceeds {limit} bytes"),
    )
}

/// Reads the body within the size limit.
async fn read_body(req: Request<Incoming>, limit: usize) -> Result<Bytes, Refusal> {
    let version = req.version();
    let mut body = req.into_body();
    let mut bytes = Vec::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| {
            Refusal(
                StatusCode::BAD_REQUEST,
                "bad_request",
                format!("cannot read the request body: {e}"),
            )
        })?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if bytes.len() + data.len() > limit {
            discard_later(version, body);
            return Err(too_large(limit));
        }
        bytes.extend_from_slice(&data);
    }
    Ok(Bytes::from(bytes))
}

/// Keeps an HTTP/2 request body that will not be read alive, discarding what arrives, until the
/// answer has gone out: a stream whose request side is dropped first is reset with CANCEL and
/// the client never sees the 413; dropped after the answer it ends with NO_ERROR (RFC 9113
/// §8.1). Bounded in time and bytes. HTTP/1.1 needs none of this.
fn discard_later(version: hyper::Version, mut body: Incoming) {
    if version != hyper::Version::HTTP_2 {
        return;
    }
    tokio::spawn(async move {
        let mut left: usize = 64 * 1024 * 1024;
        let drain = async {
            while let Some(Ok(frame)) = body.frame().await {
                let n = frame.data_ref().map_or(0, Bytes::len);
                left = left.saturating_sub(n);
                if left == 0 {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
    });
}

/// An admission.k8s.io/v1 AdmissionReview with a request, or the reason it is not one. The body
/// must already be pruned to [`prune::MAX_DEPTH`] when it may nest deeper.
pub fn parse_review(body: &[u8]) -> Result<Review, String> {
    super::request::parse(body)
}

/// Reviews on a blocking thread, in a review slot and within the deadline, the work holding the
/// request's share of the memory budget until it ends. A review run on the async worker instead
/// saves two thread hand-offs but raised the p50 at 2,000 requests/s from 1.6–2.1 to 3.1–3.3 ms, as
/// the worker running it serves no other connection meanwhile (docs/src/webhook/load-test.md). At the
/// deadline the review is answered and its slot freed even if its work runs on: that work keeps
/// only its thread ([`super::slots`]), so work that ignores the deadline cannot take the slots
/// from every other review. A panic, a missed deadline or no slot is answered by the unknown
/// policy, logged and counted; the process lives.
async fn check(
    review: Review,
    cut: usize,
    memory: OwnedSemaphorePermit,
    state: &Arc<State>,
    deadline: Instant,
) -> Verdict {
    let policy = &state.policy;
    let (slot, thread) = match state.slots.enter(deadline, &state.metrics).await {
        Ok(held) => held,
        Err(no) => {
            state.metrics.error(match no {
                NoSlot::Full { .. } => "overloaded",
                NoSlot::Late => "timeout",
            });
            return Verdict::internal_error(policy, &no.reason());
        }
    };
    let fate = thread.fate();
    let p = Arc::clone(policy);
    let task = tokio::task::spawn_blocking(move || {
        let _held = (thread, memory);
        admission::review(review, cut, &p, Some(deadline))
    });
    let reviewed = match tokio::time::timeout_at(deadline.into(), task).await {
        Ok(done) => done,
        Err(_) => {
            fate.abandon(&state.metrics);
            Ok(Err(admission::Expired))
        }
    };
    drop(slot);
    match reviewed {
        Ok(Ok(verdict)) => verdict,
        Ok(Err(admission::Expired)) => {
            state.metrics.error("timeout");
            eprintln!("kvlint webhook: a review missed its deadline");
            Verdict::internal_error(policy, "the check did not finish in time")
        }
        Err(e) => {
            state.metrics.error("internal");
            eprintln!("kvlint webhook: internal error in a review: {e}");
            Verdict::internal_error(policy, "internal error")
        }
    }
}

/// When a connection last finished a request, and how many it has in flight.
#[derive(Default)]
struct Idle {
    in_flight: std::sync::atomic::AtomicUsize,
    last: std::sync::Mutex<Option<Instant>>,
}

impl Idle {
    fn busy(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        Busy(self.clone())
    }

    /// Completes once the connection has had no request in flight for `timeout`.
    async fn expired(&self, timeout: Duration) {
        let opened = Instant::now();
        loop {
            let last = self
                .last
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or(opened);
            let quiet_until = last + timeout;
            if self.in_flight.load(Ordering::SeqCst) == 0 && Instant::now() >= quiet_until {
                return;
            }
            let wake = quiet_until.max(Instant::now() + Duration::from_millis(100));
            tokio::time::sleep_until(wake.into()).await;
        }
    }
}

struct Busy(Arc<Idle>);

impl Drop for Busy {
    fn drop(&mut self) {
        *self.0.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}
