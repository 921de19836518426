//! A small blocking HTTP client for `verify --url` and `canary`: one base URL, the user's extra
//! headers, a timeout on every call, and bodies read up to a limit. Redirects are followed only
//! within the base URL's origin (scheme, host and port): the user's headers (an `X-Api-Key`, a
//! cookie) are meant for that server alone, and numbers read elsewhere would not be its own.

use std::time::{Duration, Instant};

/// Largest body read from a server (a `/server_info` is a few kB; a completion a few).
const BODY_LIMIT: u64 = 16 * 1024 * 1024;
/// Redirects followed within the origin before giving up.
const MAX_REDIRECTS: usize = 5;

pub struct Client {
    agent: ureq3::Agent,
    base: String,
    headers: Vec<(String, String)>,
}

/// A server's answer: status, body and how long it took.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The URL that answered: the one asked for, or where a same-origin redirect led.
    pub url: String,
    /// Whether a redirect led to `url`.
    pub redirected: bool,
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
            .max_redirects(0)
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
        self.call("GET", path, None)
    }

    pub fn post_json(&self, path: &str, body: &serde_json::Value) -> Result<Answer, String> {
        self.call("POST", path, Some(body.to_string()))
    }

    /// One request, following redirects that stay within the base URL's origin; one that leaves it
    /// is an error naming where it led, and nothing is sent there.
    fn call(&self, method: &str, path: &str, body: Option<String>) -> Result<Answer, String> {
        let asked = format!("{}{path}", self.base);
        let mut url = asked.clone();
        let start = Instant::now();
        for _ in 0..=MAX_REDIRECTS {
            let resp = self
                .send(&url, body.as_deref())
                .map_err(|e| format!("{method} {url}: {e}"))?;
            let status = resp.status().as_u16();
            let location = resp.headers().get("location").and_then(|v| v.to_str().ok());
            let (true, Some(location)) = ((300..400).contains(&status), location) else {
                return read(resp, start, &url).map(|a| Answer {
                    redirected: url != asked,
                    ..a
                });
            };
            let next = resolve(&url, location);
            if origin(&next) != origin(&self.base) {
                return Err(format!(
                    "{method} {url}: HTTP {status} redirects to {next}, another host; not followed, \
                     so neither the request nor the --header values go there (pass --url {} to read that server)",
                    origin(&next).unwrap_or_else(|| next.clone())
                ));
            }
            url = next;
        }
        Err(format!(
            "{method} {asked}: more than {MAX_REDIRECTS} redirects"
        ))
    }

    fn send(
        &self,
        url: &str,
        body: Option<&str>,
    ) -> Result<ureq3::http::Response<ureq3::Body>, ureq3::Error> {
        match body {
            None => {
                let mut req = self.agent.get(url);
                for (k, v) in &self.headers {
                    req = req.header(k, v);
                }
                req.call()
            }
            Some(body) => {
                let mut req = self
                    .agent
                    .post(url)
                    .header("content-type", "application/json");
                for (k, v) in &self.headers {
                    req = req.header(k, v);
                }
                req.send(body)
            }
        }
    }
}

/// `scheme://host[:port]` of an absolute URL, host in lower case and the scheme's default port
/// made explicit, or None for a URL without one.
fn origin(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let scheme = scheme.to_ascii_lowercase();
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    // userinfo@ is part of no origin.
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    // `[::1]:8000`: the port follows the bracket.
    let after_host = host_port.rsplit_once(']').map_or(host_port, |(_, p)| p);
    let has_port = after_host
        .rsplit_once(':')
        .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    let default = match scheme.as_str() {
        "http" => "80",
        "https" => "443",
        _ => "",
    };
    let host_port = host_port.to_ascii_lowercase();
    Some(if has_port {
        format!("{scheme}://{host_port}")
    } else {
        format!("{scheme}://{host_port}:{default}")
    })
}

/// A `Location` made absolute against the URL that answered with it (RFC 9110 §10.2.2).
fn resolve(base: &str, location: &str) -> String {
    if location.contains("://") {
        return location.to_string();
    }
    let scheme = base.split_once("://").map_or("http", |(s, _)| s);
    if let Some(rest) = location.strip_prefix("//") {
        return format!("{scheme}://{rest}");
    }
    let root_end = base
        .split_once("://")
        .map_or(0, |(s, r)| s.len() + 3 + r.find('/').unwrap_or(r.len()));
    let root = &base[..root_end];
    if location.starts_with('/') {
        return format!("{root}{location}");
    }
    let path = base[root_end..].split(['?', '#']).next().unwrap_or("");
    let dir = path.rfind('/').map_or("/", |i| &path[..=i]);
    format!("{root}{dir}{location}")
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
        url: url.to_string(),
        redirected: false,
        status,
        body,
        elapsed: start.elapsed(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_compare_scheme_host_and_port() {
        let o = |u: &str| origin(u);
        assert_eq!(o("http://Server:80/x"), o("http://server/y?z"));
        assert_eq!(o("https://s/"), Some("https://s:443".into()));
        assert_ne!(o("https://s/"), o("http://s/"));
        assert_ne!(o("http://s:8000/"), o("http://s:8001/"));
        assert_ne!(o("http://127.0.0.1:8000"), o("http://127.0.0.2:8000"));
        assert_eq!(o("http://[::1]:8000/a"), Some("http://[::1]:8000".into()));
        assert_eq!(o("http://[::1]/a"), Some("http://[::1]:80".into()));
        // userinfo names no other host: `evil@` is not where the request goes.
        assert_eq!(o("http://s@evil:9/"), Some("http://evil:9".into()));
        assert_eq!(o("/relative"), None);
    }

    #[test]
    fn locations_resolve_against_the_answering_url() {
        let base = "http://s:8000/v1/models?x=1";
        assert_eq!(resolve(base, "/v2/models"), "http://s:8000/v2/models");
        assert_eq!(resolve(base, "other"), "http://s:8000/v1/other");
        assert_eq!(resolve(base, "//evil:9/a"), "http://evil:9/a");
        assert_eq!(resolve(base, "https://evil/a"), "https://evil/a");
        assert_eq!(resolve("http://s:8000", "a"), "http://s:8000/a");
    }
}
