//! The command-line options of `trtllm-serve serve` and of Dynamo's TRT-LLM worker, with the
//! LLM-API field each one sets.

use super::{CONFIG, FRACTION, OVERRIDE};

#[derive(Clone, Copy)]
pub(super) enum Ty {
    Int,
    Float,
    Str,
    Flag,
    Choice(&'static [&'static str]),
}

pub(super) struct Opt {
    pub(super) names: &'static [&'static str],
    pub(super) dest: &'static str,
    pub(super) ty: Ty,
}

const fn o(names: &'static [&'static str], dest: &'static str, ty: Ty) -> Opt {
    Opt { names, dest, ty }
}

/// `trtllm-serve serve` options (serve.py, as listed in vllm-trtllm-capacity.md §8.1 plus the
/// server options around them). `trt` is the older spelling of the engine backend.
pub(super) const SERVE: &[Opt] = &[
    o(&["--tokenizer"], "tokenizer", Ty::Str),
    o(&["--host"], "host", Ty::Str),
    o(&["--port"], "port", Ty::Int),
    o(&["--log_level"], "log_level", Ty::Str),
    o(
        &["--backend"],
        "backend",
        Ty::Choice(&["pytorch", "tensorrt", "trt", "_autodeploy"]),
    ),
    o(&["--max_beam_width"], "max_beam_width", Ty::Int),
    o(&["--max_batch_size"], "max_batch_size", Ty::Int),
    o(&["--max_num_tokens"], "max_num_tokens", Ty::Int),
    o(&["--max_seq_len"], "max_seq_len", Ty::Int),
    o(
        &["--tp_size", "--tensor_parallel_size"],
        "tensor_parallel_size",
        Ty::Int,
    ),
    o(
        &["--pp_size", "--pipeline_parallel_size"],
        "pipeline_parallel_size",
        Ty::Int,
    ),
    o(
        &["--cp_size", "--context_parallel_size"],
        "context_parallel_size",
        Ty::Int,
    ),
    o(
        &["--ep_size", "--moe_expert_parallel_size"],
        "moe_expert_parallel_size",
        Ty::Int,
    ),
    o(
        &["--cluster_size", "--moe_cluster_parallel_size"],
        "moe_cluster_parallel_size",
        Ty::Int,
    ),
    o(&["--gpus_per_node"], "gpus_per_node", Ty::Int),
    o(
        &[
            "--kv_cache_free_gpu_memory_fraction",
            "--free_gpu_memory_fraction",
        ],
        FRACTION,
        Ty::Float,
    ),
    o(
        &["--num_postprocess_workers"],
        "num_postprocess_workers",
        Ty::Int,
    ),
    o(&["--trust_remote_code"], "trust_remote_code", Ty::Flag),
    o(&["--extra_llm_api_options", "--config"], CONFIG, Ty::Str),
    o(&["--reasoning_parser"], "reasoning_parser", Ty::Str),
    o(&["--tool_parser"], "tool_parser", Ty::Str),
    o(
        &["--metadata_server_config_file"],
        "metadata_server_config_file",
        Ty::Str,
    ),
    o(&["--server_role"], "server_role", Ty::Str),
    o(
        &["--fail_fast_on_attention_window_too_large"],
        "fail_fast_on_attention_window_too_large",
        Ty::Flag,
    ),
    o(
        &["--enable_chunked_prefill"],
        "enable_chunked_prefill",
        Ty::Flag,
    ),
    o(&["--otlp_traces_endpoint"], "otlp_traces_endpoint", Ty::Str),
    o(&["--disagg_cluster_uri"], "disagg_cluster_uri", Ty::Str),
    o(&["--media_io_kwargs"], "media_io_kwargs", Ty::Str),
    o(&["--chat_template"], "chat_template", Ty::Str),
    o(&["--revision"], "revision", Ty::Str),
    o(&["--custom_module_dirs"], "custom_module_dirs", Ty::Str),
    o(&["--served_model_name"], "served_model_name", Ty::Str),
];

/// Dynamo's TRT-LLM worker options that reach the engine, with their LLM-API field names
/// (main.py builds `KvCacheConfig(free_gpu_memory_fraction=...)` and the `arg_map`).
pub(super) const DYNAMO: &[Opt] = &[
    o(&["--model-path"], "model", Ty::Str),
    o(&["--served-model-name"], "served_model_name", Ty::Str),
    o(&["--endpoint"], "endpoint", Ty::Str),
    o(&["--tensor-parallel-size"], "tensor_parallel_size", Ty::Int),
    o(
        &["--pipeline-parallel-size"],
        "pipeline_parallel_size",
        Ty::Int,
    ),
    o(
        &["--expert-parallel-size"],
        "moe_expert_parallel_size",
        Ty::Int,
    ),
    o(&["--enable-attention-dp"], "enable_attention_dp", Ty::Flag),
    o(&["--kv-block-size"], "kv_block_size", Ty::Int),
    o(&["--max-batch-size"], "max_batch_size", Ty::Int),
    o(&["--max-num-tokens"], "max_num_tokens", Ty::Int),
    o(&["--max-seq-len"], "max_seq_len", Ty::Int),
    o(&["--max-beam-width"], "max_beam_width", Ty::Int),
    o(&["--free-gpu-memory-fraction"], FRACTION, Ty::Float),
    o(&["--extra-engine-args"], CONFIG, Ty::Str),
    o(&["--override-engine-args"], OVERRIDE, Ty::Str),
    o(&["--disaggregation-mode"], "disaggregation_mode", Ty::Str),
    o(
        &["--disaggregation-strategy"],
        "disaggregation_strategy",
        Ty::Str,
    ),
    o(&["--gpus-per-node"], "gpus_per_node", Ty::Int),
];
