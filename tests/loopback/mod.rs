//! Loopback HTTP/1.1 servers for `verify --url` and `canary`: each answers the endpoints an engine
//! serves with the shapes its source gives them (cited where each server is built).
#![allow(dead_code)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A request as the handler sees it.
pub struct Request {
    pub method: String,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

pub type Handler = dyn Fn(&Request) -> (u16, String) + Send + Sync;

pub struct Server {
    pub url: String,
    /// POST /v1/completions received.
    pub completions: Arc<AtomicUsize>,
}

/// Serves `handler` on 127.0.0.1 until the test process ends. A 3xx answer's text is its
/// `Location` ([`redirect`]).
pub fn serve(handler: impl Fn(&Request) -> (u16, String) + Send + Sync + 'static) -> Server {
    serve_at("127.0.0.1", handler)
}

/// [`serve`] on another loopback address (`127.0.0.2`): another host to a client.
pub fn serve_at(
    ip: &str,
    handler: impl Fn(&Request) -> (u16, String) + Send + Sync + 'static,
) -> Server {
    let listener = TcpListener::bind((ip, 0)).expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let handler: Arc<Handler> = Arc::new(handler);
    let completions = Arc::new(AtomicUsize::new(0));
    let count = completions.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let h = handler.clone();
            let count = count.clone();
            std::thread::spawn(move || answer(stream, &*h, &count));
        }
    });
    Server { url, completions }
}

fn answer(stream: TcpStream, handler: &Handler, count: &AtomicUsize) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (method, path) = (
            parts.next().unwrap_or("").to_string(),
            parts.next().unwrap_or("").to_string(),
        );
        let mut length = 0usize;
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            if h == "\r\n" || h == "\n" {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let req = Request {
            method,
            path,
            headers,
            body: String::from_utf8_lossy(&body).into_owned(),
        };
        if req.method == "POST" && req.path == "/v1/completions" {
            count.fetch_add(1, Ordering::SeqCst);
        }
        let (status, text) = handler(&req);
        let mut out = &stream;
        let head = if (300..400).contains(&status) {
            format!("HTTP/1.1 {status} X\r\nlocation: {text}\r\ncontent-length: 0\r\n\r\n")
        } else {
            format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                text.len()
            )
        };
        let text = if (300..400).contains(&status) {
            ""
        } else {
            text.as_str()
        };
        if out.write_all(head.as_bytes()).is_err() || out.write_all(text.as_bytes()).is_err() {
            return;
        }
    }
}

/// A redirect to `to` (HTTP 302 `Location: to`), as a reverse proxy or a moved server answers.
pub fn redirect(to: &str) -> (u16, String) {
    (302, to.to_string())
}

pub fn not_found() -> (u16, String) {
    (404, json!({"detail": "Not Found"}).to_string())
}

/// `/v1/models`: SGLang `entrypoints/http_server.py :: available_models` and vLLM
/// `entrypoints/serve/engine/protocol.py :: ModelCard` (owned_by names the engine).
pub fn models(id: &str, owned_by: &str, max_model_len: Option<u64>) -> String {
    json!({"object": "list", "data": [{
        "id": id, "object": "model", "created": 1764580000, "owned_by": owned_by,
        "root": id, "parent": null, "max_model_len": max_model_len
    }]})
    .to_string()
}

/// SGLang `/server_info` (0.5.20 `entrypoints/http_server.py :: server_info`): resolved server
/// args, `launch_command`, the scheduler info (`status`, `max_total_num_tokens`,
/// `max_req_input_len`), `internal_states` per DP rank with `memory_usage`, and `version`.
pub fn sglang_server_info(
    role: &str,
    context: Option<u64>,
    pools: &[u64],
    version: &str,
) -> String {
    let pool0 = pools[0];
    let ctx = context.unwrap_or(131072);
    let max_req_len = (ctx - 1).min(pool0 - 1);
    let states: Vec<Value> = pools
        .iter()
        .map(|p| {
            json!({"model_path": "zai-org/GLM-5.3", "disaggregation_mode": role,
                   "last_gen_throughput": 0.0,
                   "memory_usage": {"weight": 42.31, "kvcache": 42.51, "token_capacity": p, "graph": 1.2},
                   "effective_max_running_requests_per_dp": 64})
        })
        .collect();
    json!({
        "model_path": "zai-org/GLM-5.3", "tokenizer_path": "zai-org/GLM-5.3",
        "quantization": "fp8", "kv_cache_dtype": "fp8_e4m3", "context_length": context,
        "mem_fraction_static": 0.88, "tp_size": 8, "dp_size": pools.len(), "page_size": 64,
        "disaggregation_mode": role, "disaggregation_transfer_backend": "mooncake",
        "launch_command": "python3 -m sglang.launch_server --model-path zai-org/GLM-5.3 --tp-size 8",
        "status": "ready", "max_total_num_tokens": pool0, "max_req_input_len": max_req_len - 5,
        "startup_time": 1764580000.0, "internal_states": states, "version": version
    })
    .to_string()
}

/// vLLM `/metrics` (`v1/metrics/loggers.py :: log_metrics_info`: every `CacheConfig` field as a
/// label, `engine` per engine) with a few other series around it.
pub fn vllm_metrics(blocks: u64, block_size: u64, engines: usize) -> String {
    let mut m = String::from(
        "# HELP vllm:num_requests_running Number of requests in model execution batches.\n\
         # TYPE vllm:num_requests_running gauge\n\
         vllm:num_requests_running{engine=\"0\",model_name=\"Qwen/Qwen3-14B\"} 0.0\n\
         # HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n\
         # TYPE vllm:cache_config_info gauge\n",
    );
    for e in 0..engines {
        m.push_str(&format!(
            "vllm:cache_config_info{{block_size=\"{block_size}\",cache_dtype=\"auto\",calculate_kv_scales=\"False\",cpu_offload_gb=\"0\",enable_prefix_caching=\"True\",engine=\"{e}\",gpu_memory_utilization=\"0.9\",is_attention_free=\"False\",num_cpu_blocks=\"None\",num_gpu_blocks=\"{blocks}\",num_gpu_blocks_override=\"None\",prefix_caching_hash_algo=\"sha256\",sliding_window=\"None\",swap_space=\"4\",swap_space_bytes=\"4294967296\"}} 1.0\n"
        ));
    }
    m.push_str("# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n");
    m
}

/// An OpenAI completion (`CompletionResponse` in both engines) whose text is `text`.
pub fn completion(model: &str, text: &str) -> String {
    json!({
        "id": "cmpl-5f0c", "object": "text_completion", "created": 1764580000, "model": model,
        "choices": [{"index": 0, "text": text, "logprobs": null, "finish_reason": "length", "matched_stop": null}],
        "usage": {"prompt_tokens": 24, "total_tokens": 56, "completion_tokens": 32}
    })
    .to_string()
}

/// The error both engines answer a too-long prompt with (`ErrorResponse`, HTTP 400).
pub fn too_long(n: usize, limit: u64) -> (u16, String) {
    (
        400,
        json!({"object": "error", "message": format!("The input ({n} tokens) is longer than the model's context length ({limit} tokens)."),
               "type": "BadRequestError", "param": null, "code": 400})
        .to_string(),
    )
}

/// The nonce a canary prompt asks to have repeated.
pub fn nonce_of(req: &Request) -> String {
    let v = req.json();
    let p = v["prompt"].as_str().unwrap_or("");
    p.split("Code: ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or("")
        .to_string()
}

/// The previous nonce seen, for a server that leaks one request's text into another's answer.
pub type Last = Arc<Mutex<Option<String>>>;
