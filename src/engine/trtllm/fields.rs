//! The LLM-API field names an engine YAML may use. `BaseLlmArgs` is a pydantic model with
//! `extra="forbid"` (tensorrt_llm/llmapi/llm_args.py; "Disallow arbitrary argument in
//! BaseLlmArgs", NVIDIA/TensorRT-LLM#4600, May 2025, before 1.0.0rc0), and
//! `update_llm_args_with_extra_dict` builds `KvCacheConfig(**yaml["kv_cache_config"])`, a
//! `StrictBaseModel` (`extra="forbid"`, tensorrt_llm/llmapi/utils.py; so on main in August 2025,
//! NVIDIA/TensorRT-LLM#6574, and in the 2026 tree; the 1.0.0 file itself was not read). An unknown key at either
//! level is a pydantic `ValidationError`: `trtllm-serve` (serve.py `launch_server` →
//! `LLM(**llm_args)`) and Dynamo's worker exit before loading the model.
//!
//! The lists are the union over the releases read, so that kvlint never refuses a key some 1.x
//! release takes: the 2026 development tree (llm_args.py at 0004396720054fd8e205cbf616f21f0b57c6b412:
//! `BaseLlmArgs`, `TorchLlmArgs`, `KvCacheConfig`), the 1.0.0rc4 API-stability references
//! (tests/unittest/api_stability/references*/llm.yaml at 000a01de66f0eab4ab05640711f0253f50f5209c),
//! the 1.4.0rc4 `KvCacheConfig` reference page, and the TensorRT backend's `TrtLlmArgs` fields.

/// `BaseLlmArgs` and `TorchLlmArgs` fields, `TrtLlmArgs` fields, keys
/// `update_llm_args_with_extra_dict` converts (`field_mapping`, `hf_revision`), and
/// `sampler_type`, removed but still dropped with a warning by `TorchLlmArgs._drop_removed_args`.
const TOP: &[&str] = &[
    // BaseLlmArgs (2026 development tree)
    "model",
    "tokenizer",
    "tokenizer_mode",
    "custom_tokenizer",
    "post_processor_hook",
    "skip_tokenizer_init",
    "trust_remote_code",
    "tensor_parallel_size",
    "dtype",
    "revision",
    "tokenizer_revision",
    "model_kwargs",
    "pipeline_parallel_size",
    "context_parallel_size",
    "gpus_per_node",
    "moe_cluster_parallel_size",
    "moe_tensor_parallel_size",
    "moe_expert_parallel_size",
    "enable_attention_dp",
    "enable_lm_head_tp_in_adp",
    "pp_partition",
    "cp_config",
    "load_format",
    "enable_lora",
    "lora_config",
    "kv_cache_config",
    "enable_chunked_prefill",
    "guided_decoding_backend",
    "batched_logits_processor",
    "iter_stats_max_iterations",
    "request_stats_max_iterations",
    "peft_cache_config",
    "scheduler_config",
    "cache_transceiver_config",
    "sparse_attention_config",
    "kv_cache_compression_config",
    "speculative_config",
    "max_batch_size",
    "max_input_len",
    "max_seq_len",
    "max_beam_width",
    "max_num_tokens",
    "gather_generation_logits",
    "num_postprocess_workers",
    "postprocess_tokenizer_dir",
    "num_serve_frontends",
    "reasoning_parser",
    "decoding_config",
    "mpi_session",
    "_mpi_session",
    "otlp_traces_endpoint",
    "backend",
    "return_perf_metrics",
    "perf_metrics_output_dir",
    "perf_metrics_max_requests",
    "prometheus_metrics_config",
    "enable_energy_metrics",
    "orchestrator_type",
    "env_overrides",
    "telemetry_config",
    // TorchLlmArgs (2026 development tree)
    "generation_config",
    "garbage_collection_gen0_threshold",
    "cuda_graph_config",
    "encoder_cuda_graph_config",
    "enable_encoder_decoder_mixed_cuda_graph",
    "multimodal_config",
    "attention_dp_config",
    "disable_overlap_scheduler",
    "moe_config",
    "nvfp4_gemm_config",
    "dwdp_config",
    "encoder_max_batch_size",
    "encoder_max_num_tokens",
    "attn_backend",
    "enable_mla_skip_correction",
    "mla_skip_correction_threshold",
    "sampler_force_async_worker",
    "enable_in_graph_sampling",
    "enable_speculative_beam_history_d2h",
    "enable_early_first_token_response",
    "enable_low_latency_host_dispatch",
    "enable_iter_perf_stats",
    "enable_iter_req_stats",
    "print_iter_log",
    "batch_wait_timeout_ms",
    "batch_wait_timeout_iters",
    "batch_wait_max_tokens_ratio",
    "torch_compile_config",
    "prefill_cuda_graph_backend",
    "prefill_capture_num_tokens",
    "enable_autotuner",
    "use_fine_grained_sync",
    "enable_layerwise_nvtx_marker",
    "enable_min_latency",
    "stream_interval",
    "force_dynamic_quantization",
    "allreduce_strategy",
    "checkpoint_loader",
    "checkpoint_format",
    "checkpoint_io_policy",
    "mx_config",
    "gms_config",
    "kv_connector_config",
    "mm_encoder_only",
    "disable_mm_encoder",
    "encode_only",
    "ray_worker_extension_cls",
    "ray_placement_config",
    "ray_worker_nsight_options",
    "sleep_config",
    "reorder_policy_config",
    "enable_resource_governor",
    "use_cute_dsl_blockscaling_mm",
    "use_cute_dsl_blockscaling_bmm",
    "use_cute_dsl_bf16_bmm",
    "use_cute_dsl_bf16_gemm",
    "max_stats_len",
    "layer_wise_benchmarks_config",
    "sampler_type",
    // update_llm_args_with_extra_dict
    "hf_revision",
    "quant_config",
    "calib_config",
    "build_config",
    "enable_build_cache",
    // 1.0.0rc4 references: TorchLlmArgs fields later renamed or removed
    "batching_type",
    "normalize_log_probs",
    "enable_mixed_sampler",
    "enable_trtllm_sampler",
    "kv_cache_dtype",
    // TrtLlmArgs (`--backend tensorrt`)
    "enable_tqdm",
    "workspace",
    "extended_runtime_perf_knob_config",
    "embedding_parallel_mode",
    "fast_build",
    "auto_parallel",
    "auto_parallel_world_size",
    "enable_prompt_adapter",
    "max_prompt_adapter_token",
    "fail_fast_on_attention_window_too_large",
];

/// `KvCacheConfig` fields: the 2026 development tree, the 1.4.0rc4 reference page's additions, and
/// `onboard_blocks` of the 1.x bindings mirror.
const KV_CACHE: &[&str] = &[
    "enable_block_reuse",
    "max_tokens",
    "max_attention_window",
    "sink_token_length",
    "free_gpu_memory_fraction",
    "host_cache_size",
    "host_cache_bind_to_gpu_numa_node",
    "disk_cache_size",
    "disk_cache_path",
    "disk_io_threads",
    "disk_keep_copy_after_restore",
    "disk_write_through",
    "disk_protected_copy_fraction",
    "cross_kv_cache_fraction",
    "cold_tier_offload_min_priority",
    "secondary_offload_min_priority",
    "event_buffer_max_size",
    "attention_dp_events_gather_period_ms",
    "kv_events_config",
    "enable_partial_reuse",
    "copy_on_partial_reuse",
    "use_uvm",
    "max_gpu_total_bytes",
    "iteration_stats_interval",
    "dtype",
    "mixed_precision_first_n",
    "mamba_ssm_cache_dtype",
    "mamba_ssm_stochastic_rounding",
    "mamba_ssm_philox_rounds",
    "tokens_per_block",
    "mamba_state_cache_interval",
    "mamba_state_config",
    "use_kv_cache_manager_v2",
    "enable_swa_scratch_reuse",
    "kv_cache_event_hash_algo",
    "max_util_for_resume",
    "enable_kv_pool_rebalance",
    "kv_pool_rebalance_min_sampled_kv_caches",
    "kv_pool_rebalance_cooldown_secs",
    "kv_pool_rebalance_target_ratio_update_interval",
    "kv_pool_rebalance_ratio_threshold",
    "kv_pool_rebalance_moving_average_decay",
    "kv_pool_rebalance_check_interval",
    "disk_prefetch_num_reqs",
    "fp8_context_mla_kv_len_cap",
    "pool_ratio",
    "avg_seq_len",
    "block_reuse_config",
    "onboard_blocks",
];

/// The strict model a YAML mapping at `path` is validated by: the top level, `kv_cache_config`.
/// Other nested models (cuda_graph_config, speculative_config, ...) are not modelled here.
pub(super) fn strict_fields(path: &str) -> Option<&'static [&'static str]> {
    match path {
        "" => Some(TOP),
        "kv_cache_config" => Some(KV_CACHE),
        _ => None,
    }
}

/// The closest field name, when it is close enough to be a typo. Names whose length alone puts
/// them out of reach are not compared, so a file of many unknown keys stays linear.
pub(super) fn closest(name: &str, fields: &[&'static str]) -> Option<&'static str> {
    let reach = |f: &str| 2.max(f.len() / 6);
    fields
        .iter()
        .filter(|f| name.len().abs_diff(f.len()) <= reach(f))
        .map(|f| (strsim::damerau_levenshtein(name, f), *f))
        .filter(|(d, f)| *d <= reach(f))
        .min_by_key(|(d, _)| *d)
        .map(|(_, f)| f)
}
