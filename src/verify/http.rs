//! A small blocking HTTP client for `verify --url` and `canary`: one base URL, the user's extra
//! headers, a timeout on every call, and bodies read up to a limit.

use std::time::{Duration, Instant};

/// Largest body read from a server (a `/server_info` is a few kB; a completion a few).
const BODY_LIMIT: u64 = 16 * 1024 * 1024;

pub struct Client {
    agent: ureq3::Agent,
    base: String,
    headers: Vec<(String, String)>,
}

/// A server's answer: status, body and how long it took.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub body: String,
    pub elapsed: Duration,
}

impl Answer {
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_str(&self.body).ok()
    }
}

/// What the server readers need of a client: a test or fuzz harness answers with canned bodies.
pub trait Get {
    fn base(&self) -> &str;
    fn get(&self, path: &str) -> Result<Answer, String>;
}

impl Get for Client {
    fn base(&self) -> &str {
        Client::base(self)
    }
    fn get(&self, path: &str) -> Result<Answer, String> {
        Client::get(self, path)
    }
}

impl Client {
    /// `base` is `http(s)://host[:port][/prefix]`; `headers` are `Name: value` (or `Name:value`).
    pub fn new(base: &str, headers: &[String], timeout: Duration) -> Result<Self, String> {
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!("--url {base}: give an http:// or https:// URL"));
        }
        let headers = headers
            .iter()
            .map(|h| {
                let (k, v) = h
                    .split_once(':')
                    .filter(|(k, _)| !k.trim().is_empty())
                    .ok_or_else(|| format!("--header {h:?}: write it as Name: value"))?;
                Ok((k.trim().to_string(), v.trim().to_string()))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let agent = ureq3::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Client {
            agent,
            base: base.trim_end_matches('/').to_string(),
            headers,
        })
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    pub fn get(&self, path: &str) -> Result<Answer, String> {
        let url = format!("{}{path}", self.base);
        let mut req = self.agent.get(&url);
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let start = Instant::now();
        let resp = req.call().map_err(|e| format!("GET {url}: {e}"))?;
        read(resp, start, &url)
    }

    pub fn post_json(&self, path: &str, body: &serde_json::Value) -> Result<Answer, String> {
        let url = format!("{}{path}", self.base);
        let mut req = self
            .agent
            .post(&url)
            .header("content-type", "application/json");
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let start = Instant::now();
        let resp = req
            .send(body.to_string())
            .map_err(|e| format!("POST {url}: {e}"))?;
        read(resp, start, &url)
    }
}

fn read(
    mut resp: ureq3::http::Response<ureq3::Body>,
    start: Instant,
    url: &str,
) -> Result<Answer, String> {
    let status = resp.status().as_u16();
    let body = resp
        .body_mut()
        .with_config()
        .limit(BODY_LIMIT)
        .read_to_string()
        .map_err(|e| format!("{url}: cannot read the answer: {e}"))?;
    Ok(Answer {
        status,
        body,
        elapsed: start.elapsed(),
    })
}
