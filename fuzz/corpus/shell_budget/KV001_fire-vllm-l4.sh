# kvlint-test: --gpu l4 --engine-version 0.33.0
# Llama 3.1 8B in bf16 on one 24 GB L4 leaves a few GiB of KV: far below 128k tokens.
vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072
