//! The Hugging Face Hub over HTTPS, with `hf-hub` (Hugging Face's Rust client): fetches a
//! model's `config.json`, and when the repository has them `model.safetensors.index.json` (exact
//! weight bytes) and `hf_quant_config.json` (ModelOpt quantization), into the local cache in
//! huggingface_hub's layout, where the next run and the engines find them.
//!
//! The environment is read as huggingface_hub reads it: `HF_ENDPOINT` (mirrors), `HF_TOKEN`,
//! else the token file (`HF_TOKEN_PATH`, else `$HF_HOME/token`), and `HF_HUB_DOWNLOAD_TIMEOUT`
//! (seconds). `hf-hub`'s blocking client sets no timeout, so each fetch runs on its own thread
//! and is given up after the deadline; an endpoint that failed is not asked again for a minute.

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use hf_hub::api::sync::{ApiBuilder, ApiError};
use hf_hub::{Cache, Repo, RepoType};

use super::cache::{hf_home, HubCache, Snapshot};

/// The public Hub.
pub const DEFAULT_ENDPOINT: &str = "https://huggingface.co";
/// Whole-fetch deadline when `HF_HUB_DOWNLOAD_TIMEOUT` is unset (huggingface_hub's default).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an endpoint that failed is left alone.
const RETRY_AFTER: Duration = Duration::from_secs(60);
/// The largest file read whole from a mirror that ignores `Range` (the files fetched are JSON).
const MAX_FILE_BYTES: u64 = 64 << 20;
/// Files fetched after `config.json` when the repository has them.
const OPTIONAL_FILES: [&str; 2] = ["model.safetensors.index.json", "hf_quant_config.json"];

/// Where and how to reach the Hub.
#[derive(Clone, PartialEq)]
pub struct Hub {
    pub endpoint: String,
    token: Option<String>,
    pub timeout: Duration,
}

// The token stays out of debug output.
impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("endpoint", &self.endpoint)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .finish()
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl Hub {
    /// The Hub this environment points at.
    pub fn from_env() -> Hub {
        let token = env("HF_TOKEN").or_else(|| {
            let path = env("HF_TOKEN_PATH")
                .map(PathBuf::from)
                .or_else(|| hf_home().map(|h| h.join("token")))?;
            let text = crate::input::read_regular(&path).ok()?;
            Some(text.trim().to_string()).filter(|t| !t.is_empty())
        });
        let timeout = env("HF_HUB_DOWNLOAD_TIMEOUT")
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| *s > 0.0 && *s < 3600.0)
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64);
        Hub {
            endpoint: env("HF_ENDPOINT")
                .unwrap_or_else(|| DEFAULT_ENDPOINT.into())
                .trim_end_matches('/')
                .to_string(),
            token,
            timeout,
        }
    }

    /// The URL of a file at a revision (`/{repo}/resolve/{revision}/{file}`).
    pub fn url(&self, id: &str, revision: &str, file: &str) -> String {
        format!("{}/{id}/resolve/{revision}/{file}", self.endpoint)
    }

    /// Fetches `config.json` and the optional files of `id` at `revision` into `cache`, and
    /// returns the snapshot. The error says what was asked and what went wrong.
    pub fn fetch(&self, cache: &HubCache, id: &str, revision: &str) -> Result<Snapshot, String> {
        let what = self.url(id, revision, "config.json");
        if let Some(when) = failed()
            .lock()
            .ok()
            .and_then(|m| m.get(&self.endpoint).copied())
        {
            if when.elapsed() < RETRY_AFTER {
                return Err(format!(
                    "{what}: not asked, {} failed earlier in this run",
                    self.endpoint
                ));
            }
        }
        let (tx, rx) = mpsc::channel();
        let job = (
            self.clone(),
            cache.dir.clone(),
            id.to_string(),
            revision.to_string(),
        );
        let spawned = std::thread::Builder::new()
            .name("kvlint-hub".into())
            .spawn(move || {
                let (hub, dir, id, rev) = job;
                let _ = tx.send(hub.fetch_blocking(dir, &id, &rev));
            });
        if let Err(e) = spawned {
            return Err(format!("{what}: cannot start the fetch: {e}"));
        }
        let result = match rx.recv_timeout(self.timeout) {
            Ok(r) => r,
            Err(_) => Err(Failure::Network(format!(
                "no answer within {:.0} s (HF_HUB_DOWNLOAD_TIMEOUT)",
                self.timeout.as_secs_f64()
            ))),
        };
        result.map_err(|f| {
            if let Failure::Network(_) = f {
                if let Ok(mut m) = failed().lock() {
                    m.insert(self.endpoint.clone(), Instant::now());
                }
            }
            format!("{what}: {f}")
        })
    }

    fn fetch_blocking(&self, dir: PathBuf, id: &str, revision: &str) -> Result<Snapshot, Failure> {
        let api = ApiBuilder::from_cache(Cache::new(dir.clone()))
            .with_endpoint(self.endpoint.clone())
            .with_token(self.token.clone())
            .with_progress(false)
            .with_retries(0)
            .build()
            .map_err(classify)?;
        let repo = api.repo(Repo::with_revision(
            id.to_string(),
            RepoType::Model,
            revision.to_string(),
        ));
        let whole = || self.download_whole(&dir, id, revision, "config.json");
        let config = whole_if_unranged(repo.download("config.json"), whole)?;
        let snapshot = config
            .parent()
            .ok_or_else(|| Failure::Other("the cache gave no snapshot directory".into()))?
            .to_path_buf();
        for file in OPTIONAL_FILES {
            let whole = || self.download_whole(&dir, id, revision, file);
            match whole_if_unranged(repo.download(file), whole) {
                Ok(_) | Err(Failure::Missing) => {}
                Err(f) => return Err(f),
            }
        }
        let commit = snapshot
            .file_name()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Snapshot {
            dir: snapshot,
            commit,
        })
    }
}

impl Hub {
    /// A plain GET of `file`, written into the cache as hf-hub writes it (blob by ETag, snapshot
    /// by `X-Repo-Commit`, ref by revision). For mirrors that answer hf-hub's ranged metadata
    /// request (`Range: bytes=0-0`) with 200 and the whole body: huggingface_hub accepts that
    /// (`file_download.py` `get_hf_file_metadata` reads the ETag and commit headers and takes the
    /// size from the response), hf-hub 0.4.3 `metadata` insists on `Content-Range`.
    fn download_whole(
        &self,
        dir: &std::path::Path,
        id: &str,
        revision: &str,
        file: &str,
    ) -> Result<PathBuf, Failure> {
        let mut request = ureq::get(&self.url(id, revision, file));
        if let Some(token) = &self.token {
            request = request.set("Authorization", &format!("Bearer {token}"));
        }
        let response = request
            .call()
            .map_err(|e| classify(ApiError::RequestError(Box::new(e))))?;
        let header = |name: &str| response.header(name).map(|v| v.replace('"', ""));
        let etag = header("x-linked-etag").or_else(|| header("etag"));
        let (Some(etag), Some(commit)) = (etag, header("x-repo-commit")) else {
            return Err(Failure::Other(
                "the endpoint sent no ETag or X-Repo-Commit header: it does not look like a Hugging Face mirror".into(),
            ));
        };
        let mut body = Vec::new();
        response
            .into_reader()
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut body)
            .map_err(|e| Failure::Network(e.to_string()))?;
        if body.len() as u64 > MAX_FILE_BYTES {
            return Err(Failure::Other(format!(
                "{file} is larger than {MAX_FILE_BYTES} bytes"
            )));
        }
        let repo = Cache::new(dir.to_path_buf()).repo(Repo::with_revision(
            id.to_string(),
            RepoType::Model,
            revision.to_string(),
        ));
        let write = |e: std::io::Error| Failure::Other(format!("cannot write the cache: {e}"));
        let folder = HubCache {
            dir: dir.to_path_buf(),
        }
        .repo_dir(id);
        let blob = folder.join("blobs").join(&etag);
        let pointer = folder.join("snapshots").join(&commit).join(file);
        for path in [&blob, &pointer] {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(write)?;
            }
            std::fs::write(path, &body).map_err(write)?;
        }
        repo.create_ref(&commit).map_err(write)?;
        Ok(pointer)
    }
}

/// hf-hub's download, or the whole-body GET when the endpoint ignored `Range`.
fn whole_if_unranged(
    ranged: Result<PathBuf, ApiError>,
    whole: impl FnOnce() -> Result<PathBuf, Failure>,
) -> Result<PathBuf, Failure> {
    match ranged {
        Err(ApiError::MissingHeader(h)) if h.eq_ignore_ascii_case("content-range") => whole(),
        other => other.map_err(classify),
    }
}

/// Endpoints that failed at the network level, and when.
fn failed() -> &'static Mutex<HashMap<String, Instant>> {
    static FAILED: OnceLock<Mutex<HashMap<String, Instant>>> = OnceLock::new();
    FAILED.get_or_init(Default::default)
}

enum Failure {
    /// 404 for the file (`X-Error-Code: EntryNotFound`): the repository does not have it.
    Missing,
    /// The endpoint could not be reached or did not answer in time.
    Network(String),
    /// An HTTP status: unknown repository or revision, gated model without a token, ...
    Status(u16, String),
    Other(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Missing => f.write_str("HTTP 404: not in the repository"),
            Failure::Network(m) => write!(f, "network error: {m}"),
            Failure::Status(code, m) => write!(f, "HTTP {code}{m}"),
            Failure::Other(m) => f.write_str(m),
        }
    }
}

/// Sorts hf-hub's errors into what the user can act on (the Hub's `X-Error-Code` header names
/// the cause: `RepoNotFound`, `GatedRepo`, `RevisionNotFound`, `EntryNotFound`).
fn classify(e: ApiError) -> Failure {
    match e {
        ApiError::RequestError(boxed) => match *boxed {
            ureq::Error::Status(code, resp) => {
                let cause = resp.header("x-error-code").unwrap_or("").to_string();
                match (code, cause.as_str()) {
                    (404, "EntryNotFound") | (404, "") => Failure::Missing,
                    (401 | 403, _) => Failure::Status(
                        code,
                        format!(
                            " {cause}: the repository is gated, private or absent; set HF_TOKEN (or log in with `hf auth login`) for a gated model"
                        ),
                    ),
                    _ => Failure::Status(code, format!(" {cause}")),
                }
            }
            ureq::Error::Transport(t) => Failure::Network(t.to_string()),
        },
        ApiError::IoError(e) => Failure::Other(format!("cannot write the cache: {e}")),
        other => Failure::Other(other.to_string()),
    }
}
