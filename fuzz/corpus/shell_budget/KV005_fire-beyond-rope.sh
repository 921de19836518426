# kvlint-test: --gpu h100-80gb --engine-version 0.33.0
# Qwen3-8B's config allows 40,960 positions; no rope scaling is configured.
vllm serve Qwen/Qwen3-8B --max-model-len 131072
