//! A running server's own account of its pool, read from the endpoints each engine serves.
//! What was read is kept as text (one section per request, JSON pretty-printed) so findings
//! point at the number they are about.

use super::http::{Answer, Get};
use super::measured::{Fact, Reading};
use super::EngineArg;
use crate::capacity::Role;
use crate::launch::Engine;
use serde_json::Value;
use std::ops::Range;

/// The answers read so far, as one text with the offset where each begins.
struct Transcript {
    text: String,
    /// `path → URL` of each answer a same-origin redirect moved.
    redirected: Vec<String>,
}

impl Transcript {
    /// Appends an answer (JSON pretty-printed) and returns where its body begins.
    fn add(&mut self, what: &str, a: &Answer, body: &str) -> usize {
        // Where the numbers came from, when a same-origin redirect moved the request.
        let via = if !a.redirected {
            String::new()
        } else {
            self.redirected.push(format!(
                "{what} was read from {}, where it redirects",
                a.url
            ));
            format!(" (redirected to {})", a.url)
        };
        self.text
            .push_str(&format!("GET {what} → {}{via}\n", a.status));
        let start = self.text.len();
        self.text.push_str(body);
        self.text.push_str("\n\n");
        start
    }

    fn add_json(&mut self, what: &str, a: &Answer) -> Option<(Value, usize)> {
        let v = a.json()?;
        let pretty = serde_json::to_string_pretty(&v).ok()?;
        Some((v, self.add(what, a, &pretty)))
    }

    /// The range of the `n`-th (from 0) value written under `"key": ` after `from`.
    fn value_at(&self, from: usize, key: &str, n: usize) -> Option<Range<usize>> {
        let needle = format!("\"{key}\": ");
        let mut at = from;
        for _ in 0..=n {
            at += self.text.get(at..)?.find(&needle)? + needle.len();
        }
        let len = self.text[at..]
            .find([',', '\n'])
            .unwrap_or(self.text.len() - at);
        Some(at..at + len)
    }
}

/// Reads a server: the engine `--engine` names, else the one its answers show.
pub fn read(c: &impl Get, engine: Option<EngineArg>) -> Result<Reading, String> {
    let mut t = Transcript {
        text: String::new(),
        redirected: Vec::new(),
    };
    let models = c.get("/v1/models").ok().filter(|a| a.status == 200);
    let mut card = None;
    if let Some(a) = &models {
        if let Some((v, at)) = t.add_json("/v1/models", a) {
            card = v
                .get("data")
                .and_then(|d| d.get(0))
                .cloned()
                .map(|m| (m, at));
        }
    }
    let owner = card
        .as_ref()
        .and_then(|(m, _)| m.get("owned_by")?.as_str().map(str::to_string));
    let engine = match engine.map(Engine::from) {
        Some(e) => e,
        None => detect(c, owner.as_deref())?,
    };
    let context = card.as_ref().and_then(|(m, at)| {
        let v = m.get("max_model_len")?.as_u64()?;
        Some(Fact::new(
            v,
            t.value_at(*at, "max_model_len", 0)?,
            "/v1/models max_model_len",
        ))
    });
    let model = card.as_ref().and_then(|(m, at)| {
        let v = m.get("id")?.as_str()?.to_string();
        Some(Fact::new(v, t.value_at(*at, "id", 0)?, "/v1/models id"))
    });
    let mut r = match engine {
        Engine::Sglang => sglang(c, &mut t)?,
        Engine::Vllm => vllm(c, &mut t)?,
        Engine::Trtllm => return Err(trtllm_unreadable(c)),
    };
    r.context = context.or(r.context);
    r.model = r.model.or(model);
    r.name = c.base().to_string();
    r.notes.extend(t.redirected);
    r.text = t.text;
    Ok(r)
}

/// The engine a server is: its `/v1/models` cards' `owned_by` (SGLang
/// `entrypoints/openai/protocol.py :: ModelCard`, vLLM `entrypoints/serve/engine/protocol.py ::
/// ModelCard`), else the endpoints only one engine serves.
fn detect(c: &impl Get, owner: Option<&str>) -> Result<Engine, String> {
    match owner {
        Some("sglang") => return Ok(Engine::Sglang),
        Some("vllm") => return Ok(Engine::Vllm),
        Some(o) if o.contains("tensorrt") || o.contains("trtllm") => return Ok(Engine::Trtllm),
        _ => {}
    }
    let ok = |p: &str| c.get(p).ok().filter(|a| a.status == 200);
    if ok("/server_info")
        .or_else(|| ok("/get_server_info"))
        .is_some()
    {
        return Ok(Engine::Sglang);
    }
    if ok("/metrics").is_some_and(|a| a.body.contains("vllm:")) {
        return Ok(Engine::Vllm);
    }
    Err(format!(
        "{}: neither SGLang (/server_info) nor vLLM (/metrics vllm:*) answered; pass --engine, or use --log",
        c.base()
    ))
}

/// SGLang `/server_info` (0.5.20, 0.5.23; `/get_server_info` only in 0.4.6 and 0.5.2, deprecated since:
/// `entrypoints/http_server.py :: server_info`, `utils/common.py :: build_server_info`): the
/// resolved server arguments, the scheduler's `max_total_num_tokens` and `max_req_input_len`
/// (`managers/scheduler.py :: Scheduler.get_init_info`, DP rank 0), `version`, and per DP rank
/// `internal_states[i].memory_usage.token_capacity`
/// (`managers/scheduler_components/memory_usage.py :: build_memory_usage`; 0.4.6 merges one
/// rank's state into the top level).
fn sglang(c: &impl Get, t: &mut Transcript) -> Result<Reading, String> {
    let mut path = "/server_info";
    let mut a = c.get(path)?;
    if a.status == 404 {
        path = "/get_server_info";
        a = c.get(path)?;
    }
    if a.status != 200 {
        return Err(format!(
            "{}{path}: HTTP {} ({})",
            c.base(),
            a.status,
            a.body.chars().take(200).collect::<String>()
        ));
    }
    let (v, at) = t
        .add_json(path, &a)
        .ok_or_else(|| format!("{}{path}: the answer is not JSON", c.base()))?;
    let mut ranks: Vec<(String, u64, Range<usize>)> = Vec::new();
    if let Some(states) = v.get("internal_states").and_then(Value::as_array) {
        let list_at = t.value_at(at, "internal_states", 0).map_or(at, |r| r.start);
        for (i, s) in states.iter().enumerate() {
            let cap = s
                .pointer("/memory_usage/token_capacity")
                .and_then(Value::as_u64);
            if let (Some(cap), Some(r)) = (cap, t.value_at(list_at, "token_capacity", i)) {
                ranks.push((format!("DP{i}"), cap, r));
            }
        }
    }
    let what = if ranks.is_empty() {
        let top = v
            .get("max_total_num_tokens")
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("{}{path}: no max_total_num_tokens", c.base()))?;
        let r = t.value_at(at, "max_total_num_tokens", 0).unwrap_or(at..at);
        ranks.push((String::new(), top, r));
        format!("{path} max_total_num_tokens")
    } else {
        format!("{path} internal_states[].memory_usage.token_capacity")
    };
    let (i, least) = ranks
        .iter()
        .enumerate()
        .min_by_key(|(_, r)| r.1)
        .map(|(i, r)| (i, r.clone()))
        .ok_or("no pool")?;
    let of = if ranks.len() > 1 {
        format!(" (DP{i}, the smallest of {} ranks)", ranks.len())
    } else {
        String::new()
    };
    let text_fact = |key: &str| -> Option<Fact<String>> {
        let s = v.get(key)?.as_str()?.to_string();
        Some(Fact::new(
            s,
            t.value_at(at, key, 0)?,
            format!("{path} {key}"),
        ))
    };
    let num_fact = |key: &str| -> Option<Fact<u64>> {
        let n = v.get(key)?.as_u64()?;
        Some(Fact::new(
            n,
            t.value_at(at, key, 0)?,
            format!("{path} {key}"),
        ))
    };
    let role = match v.get("disaggregation_mode").and_then(Value::as_str) {
        Some("prefill") => Role::Prefill,
        Some("decode") => Role::Decode,
        _ => Role::Unified,
    };
    let mut notes = Vec::new();
    if let Some(n) = v.get("max_req_input_len").and_then(Value::as_u64) {
        notes.push(format!(
            "SGLang accepts prompts of at most {} tokens (max_req_input_len)",
            crate::rules::thousands(n)
        ));
    }
    Ok(Reading {
        name: String::new(),
        text: String::new(),
        engine: Engine::Sglang,
        version: v.get("version").and_then(Value::as_str).map(str::to_string),
        role: Some(role),
        pool: Fact::new(least.1, least.2.clone(), format!("{what}{of}")),
        ranks: ranks.iter().map(|(k, n, _)| (k.clone(), *n)).collect(),
        context: num_fact("context_length"),
        model: text_fact("model_path"),
        page_size: num_fact("page_size"),
        kv_cache_dtype: text_fact("kv_cache_dtype"),
        // server_args.py ServerArgs.disaggregation_transfer_backend, served whole by /server_info.
        transfer_backend: text_fact("disaggregation_transfer_backend"),
        notes,
    })
}

/// vLLM `/metrics` `vllm:cache_config_info` (`v1/metrics/loggers.py ::
/// PrometheusStatLogger.log_metrics_info`, labels = every `CacheConfig` field as text,
/// `config/cache.py :: CacheConfig.metrics_info`), one series per engine. 0.33 carries
/// `kv_cache_size_tokens` per engine; before, `num_gpu_blocks` is the sum over the data-parallel
/// engines (`v1/engine/core_client.py`), so each engine holds its share × `block_size`.
/// `/version` (`entrypoints/serve/instrumentator/basic.py :: show_version`).
fn vllm(c: &impl Get, t: &mut Transcript) -> Result<Reading, String> {
    let a = c.get("/metrics")?;
    let series: Vec<&str> = a
        .body
        .lines()
        .filter(|l| l.starts_with("vllm:cache_config_info{"))
        .collect();
    if a.status != 200 || series.is_empty() {
        return Err(format!(
            "{}/metrics: no vllm:cache_config_info (HTTP {}); is this a vLLM server?",
            c.base(),
            a.status
        ));
    }
    let start = t.add("/metrics (vllm:cache_config_info)", &a, &series.join("\n"));
    let mut ranks = Vec::new();
    let mut pos = start;
    let mut notes = Vec::new();
    let engines = series.len() as u64;
    let mut first_labels = Vec::new();
    for line in &series {
        let labels = labels(line);
        let get = |k: &str| {
            labels
                .iter()
                .find(|(n, _, _)| n == k)
                .map(|(_, v, r)| (v.clone(), pos + r.start..pos + r.end))
        };
        let parse = |k: &str| get(k).and_then(|(v, r)| Some((v.parse::<u64>().ok()?, r)));
        let engine = get("engine").map_or_else(String::new, |(v, _)| format!("engine {v}"));
        if let Some((n, r)) = parse("kv_cache_size_tokens") {
            ranks.push((engine, n, r, "kv_cache_size_tokens".to_string()));
        } else if let (Some((blocks, r)), Some((bs, _))) =
            (parse("num_gpu_blocks"), parse("block_size"))
        {
            let per = (blocks / engines).checked_mul(bs).ok_or_else(|| {
                format!(
                    "{}/metrics: num_gpu_blocks {blocks} × block_size {bs} is no pool size",
                    c.base()
                )
            })?;
            if engines > 1 {
                notes.push(format!(
                    "num_gpu_blocks {blocks} is the sum over {engines} engines; each holds {per} tokens"
                ));
            }
            ranks.push((engine, per, r, "num_gpu_blocks × block_size".to_string()));
        }
        if first_labels.is_empty() {
            first_labels = labels
                .iter()
                .map(|(n, v, r)| (n.clone(), v.clone(), pos + r.start..pos + r.end))
                .collect();
        }
        pos += line.len() + 1;
    }
    let least = ranks.iter().min_by_key(|r| r.1).cloned().ok_or_else(|| {
        format!(
            "{}/metrics: vllm:cache_config_info has no num_gpu_blocks yet",
            c.base()
        )
    })?;
    let of = if ranks.len() > 1 {
        format!(" ({}, the smallest of {} engines)", least.0, ranks.len())
    } else {
        String::new()
    };
    let label = |k: &str| first_labels.iter().find(|(n, _, _)| n == k).cloned();
    let version = c
        .get("/version")
        .ok()
        .filter(|a| a.status == 200)
        .and_then(|a| a.json()?.get("version")?.as_str().map(str::to_string));
    Ok(Reading {
        name: String::new(),
        text: String::new(),
        engine: Engine::Vllm,
        version,
        role: None,
        pool: Fact::new(
            least.1,
            least.2.clone(),
            format!("/metrics vllm:cache_config_info {}{of}", least.3),
        ),
        ranks: ranks.iter().map(|r| (r.0.clone(), r.1)).collect(),
        context: None,
        model: None,
        page_size: label("block_size").and_then(|(_, v, r)| {
            Some(Fact::new(
                v.parse().ok()?,
                r,
                "cache_config_info block_size",
            ))
        }),
        kv_cache_dtype: label("cache_dtype")
            .map(|(_, v, r)| Fact::new(v, r, "cache_config_info cache_dtype")),
        transfer_backend: None,
        notes,
    })
}

/// Prometheus labels `name="value"` of one series line, with the value's range in the line.
fn labels(line: &str) -> Vec<(String, String, Range<usize>)> {
    let mut out = Vec::new();
    let Some(open) = line.find('{') else {
        return out;
    };
    let b = line.as_bytes();
    let mut i = open + 1;
    while i < b.len() && b[i] != b'}' {
        let Some(eq) = line[i..].find("=\"").map(|k| i + k) else {
            break;
        };
        let name = line[i..eq]
            .trim_matches(|c| c == ',' || c == ' ')
            .to_string();
        let vstart = eq + 2;
        let mut value = String::new();
        let mut escaped = false;
        let mut j = b.len();
        for (k, ch) in line[vstart..].char_indices() {
            match (escaped, ch) {
                (false, '\\') => escaped = true,
                (false, '"') => {
                    j = vstart + k;
                    break;
                }
                _ => {
                    value.push(ch);
                    escaped = false;
                }
            }
        }
        out.push((name, value, vstart..j));
        i = j + 1;
    }
    out
}

/// trtllm-serve (`tensorrt_llm/serve/openai_server.py :: OpenAIServer.register_routes`) serves
/// `/v1/models` cards without `max_model_len`, `/version`, and `/metrics` as iteration stats that
/// each call drains (`get_iteration_stats`), present only after requests ran and with
/// `enable_iter_perf_stats`: no endpoint states the pool or the context.
fn trtllm_unreadable(c: &impl Get) -> String {
    format!(
        "{}: trtllm-serve states neither its KV pool nor max_seq_len over HTTP (its /metrics holds \
         only the iteration stats since the last call); run `kvlint verify --log` on its startup log",
        c.base()
    )
}

#[cfg(test)]
mod tests {
    use super::labels;

    #[test]
    fn prometheus_labels_with_escapes() {
        let l = labels(r#"vllm:cache_config_info{block_size="16",engine="0",prefix="a\"b"} 1.0"#);
        let names: Vec<(&str, &str)> = l.iter().map(|(n, v, _)| (n.as_str(), v.as_str())).collect();
        assert_eq!(
            names,
            [("block_size", "16"), ("engine", "0"), ("prefix", "a\"b")]
        );
    }
}
