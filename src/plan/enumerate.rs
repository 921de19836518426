//! The layouts an engine accepts for a model on a GPU type, each with its launch line in the
//! engine's own flags.

use super::Request;
use crate::capacity::Role;
use crate::gpu::GpuSpec;
use crate::launch::Engine;
use crate::model::Geometry;
use crate::version::Version;
use std::ops::RangeInclusive;

/// One layout: how many GPUs, split how, with which KV dtype and memory fraction.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    pub engine: Engine,
    pub version: Version,
    pub role: Role,
    pub model: String,
    pub gpu: GpuSpec,
    pub tp: u32,
    pub pp: u32,
    /// Attention data parallelism over the TP group (SGLang `--dp-size TP --enable-dp-attention`).
    pub dp_attention: bool,
    /// None: the engine's default.
    pub kv_cache_dtype: Option<String>,
    /// None: the engine's default.
    pub memory_fraction: Option<f64>,
    pub context: Option<u64>,
}

impl Layout {
    /// GPUs of one server: attention-DP ranks live inside the TP group.
    pub fn gpus(&self) -> u32 {
        self.tp * self.pp
    }

    /// Attention-DP ranks (1 without DP attention).
    pub fn dp(&self) -> u32 {
        if self.dp_attention {
            self.tp
        } else {
            1
        }
    }

    /// The launch line, in the engine's own flags.
    pub fn argv(&self) -> Vec<String> {
        let (tp, pp) = (self.tp.to_string(), self.pp.to_string());
        let m = self.model.as_str();
        let role = |prefill: &'static str, decode: &'static str| match self.role {
            Role::Prefill => Some(prefill),
            Role::Decode => Some(decode),
            Role::Unified => None,
        };
        let mut a = Words::default();
        match self.engine {
            Engine::Sglang => {
                a.words(&["python3", "-m", "sglang.launch_server", "--model-path", m]);
                a.pair("--tp-size", &tp);
                a.pair_if(self.pp > 1, "--pp-size", &pp);
                a.pair_if(self.dp_attention, "--dp-size", &tp);
                self.common(&mut a, "--mem-fraction-static", "--context-length");
                a.opt("--disaggregation-mode", role("prefill", "decode"));
                if self.dp_attention {
                    a.words(&["--enable-dp-attention"]);
                }
            }
            Engine::Vllm => {
                a.words(&["vllm", "serve", m, "--tensor-parallel-size", &tp]);
                a.pair_if(self.pp > 1, "--pipeline-parallel-size", &pp);
                self.common(&mut a, "--gpu-memory-utilization", "--max-model-len");
                let json = role("kv_producer", "kv_consumer")
                    .map(|r| format!(r#"{{"kv_connector":"NixlConnector","kv_role":"{r}"}}"#));
                a.opt("--kv-transfer-config", json.as_deref());
            }
            Engine::Trtllm => {
                a.words(&["trtllm-serve", m, "--tp_size", &tp]);
                a.pair_if(self.pp > 1, "--pp_size", &pp);
                self.common(
                    &mut a,
                    "--kv_cache_free_gpu_memory_fraction",
                    "--max_seq_len",
                );
                a.opt("--server_role", role("context", "generation"));
            }
        }
        a.0
    }

    /// KV dtype, memory fraction and context, as `fraction` and `context` spell them.
    fn common(&self, a: &mut Words, fraction: &str, context: &str) {
        a.opt("--kv-cache-dtype", self.kv_cache_dtype.as_deref());
        a.opt(
            fraction,
            self.memory_fraction.map(|f| f.to_string()).as_deref(),
        );
        a.opt(context, self.context.map(|c| c.to_string()).as_deref());
    }
}

/// A launch line being written.
#[derive(Default)]
struct Words(Vec<String>);

impl Words {
    fn words(&mut self, w: &[&str]) {
        self.0.extend(w.iter().map(|s| (*s).to_string()));
    }
    fn pair(&mut self, flag: &str, value: &str) {
        self.words(&[flag, value]);
    }
    fn pair_if(&mut self, when: bool, flag: &str, value: &str) {
        if when {
            self.pair(flag, value);
        }
    }
    fn opt(&mut self, flag: &str, value: Option<&str>) {
        if let Some(v) = value {
            self.pair(flag, v);
        }
    }
}

/// Every layout of `engine` for `model` on `gpu` whose GPU count lies in `gpus`.
pub fn layouts(
    req: &Request,
    engine: Engine,
    version: &Version,
    gpu: &GpuSpec,
    model: &Geometry,
    gpus: RangeInclusive<u32>,
) -> Vec<Layout> {
    let mut out = Vec::new();
    for (tp, pp) in splits(model, *gpus.end()) {
        if !gpus.contains(&(tp * pp)) {
            continue;
        }
        for dp_attention in dp_attention(engine, model, tp, pp) {
            for kv in kv_dtypes(req, engine, gpu) {
                for fraction in fractions(req) {
                    out.push(Layout {
                        engine,
                        version: version.clone(),
                        role: req.role,
                        model: req.model.clone(),
                        gpu: gpu.clone(),
                        tp,
                        pp,
                        dp_attention,
                        kv_cache_dtype: kv.clone(),
                        memory_fraction: fraction,
                        context: req.context,
                    });
                }
            }
        }
    }
    out
}

/// TP × PP pairs (powers of two) up to `max` GPUs that the model's heads and layers allow: TP
/// divides the attention heads and divides or is a multiple of the KV heads (vLLM
/// config/parallel.py :: verify_with_model_config; SGLang configs/model_config.py ::
/// get_num_kv_heads), PP leaves every stage a layer (`get_pp_indices`).
fn splits(m: &Geometry, max: u32) -> Vec<(u32, u32)> {
    let heads_split = |tp: u32| {
        let kv = m.num_kv_heads.max(1);
        m.num_attention_heads.is_multiple_of(tp)
            && (m.mla.is_some() || kv.is_multiple_of(tp) || tp.is_multiple_of(kv))
    };
    let powers = |limit: u32| {
        std::iter::successors(Some(1u32), |n| n.checked_mul(2)).take_while(move |n| *n <= limit)
    };
    let mut out = Vec::new();
    for tp in powers(max).filter(|tp| heads_split(*tp)) {
        for pp in powers(max / tp).filter(|pp| *pp <= m.num_layers.max(1)) {
            out.push((tp, pp));
        }
    }
    out
}

/// SGLang's DP attention for MLA models (each rank holds the latent cache of its own requests):
/// offered beside plain TP when TP > 1 and there is one pipeline stage.
fn dp_attention(engine: Engine, m: &Geometry, tp: u32, pp: u32) -> Vec<bool> {
    match engine == Engine::Sglang && m.mla.is_some() && tp > 1 && pp == 1 {
        true => vec![false, true],
        false => vec![false],
    }
}

/// The engine's default (None) and the dtypes given, or an FP8 cache where the GPU computes in
/// FP8: compute capability 8.9 and up (vLLM's FlashAttention takes an FP8 cache on 9.x only,
/// `attention/utils/fa_utils.py :: flash_attn_supports_fp8`, and hands the others to FlashInfer
/// or Triton, whose FP8 conversions need sm_89; SGLang's FP8 KV kernels likewise). TensorRT-LLM
/// sets its KV dtype in the `--extra_llm_api_options` YAML, which a launch line cannot carry: its
/// layouts keep the default.
fn kv_dtypes(req: &Request, engine: Engine, gpu: &GpuSpec) -> Vec<Option<String>> {
    let mut out = vec![None];
    if engine == Engine::Trtllm {
        return out;
    }
    if req.kv_cache_dtypes.is_empty() {
        if gpu.compute_capability >= (8, 9) {
            out.push(Some(fp8_name(engine).to_string()));
        }
        return out;
    }
    for d in &req.kv_cache_dtypes {
        let d = match (d.as_str(), engine) {
            ("auto", _) => continue,
            ("fp8" | "fp8_e4m3", _) => fp8_name(engine).to_string(),
            _ => d.clone(),
        };
        if !out.contains(&Some(d.clone())) {
            out.push(Some(d));
        }
    }
    out
}

/// The FP8 KV dtype as the engine names it.
fn fp8_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Sglang => "fp8_e4m3",
        Engine::Vllm | Engine::Trtllm => "fp8",
    }
}

fn fractions(req: &Request) -> Vec<Option<f64>> {
    std::iter::once(None)
        .chain(req.memory_fractions.iter().map(|f| Some(*f)))
        .collect()
}
