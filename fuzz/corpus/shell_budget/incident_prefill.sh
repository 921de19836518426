#!/usr/bin/env bash
# The 2026 incident, reproduced: the prefill half of a GLM-5.3 deployment on 8×H200 with
# SGLang 0.5.20 advertised a 1,048,576-token context on a KV pool of about 680k tokens.
# Check it with:
#   kvlint check --gpu h200x8 --engine-version 0.5.20 fixtures/incident/prefill.sh
set -euo pipefail

python3 -m sglang.launch_server \
  --model-path zai-org/GLM-5.3 \
  --tp-size 8 \
  --quantization fp8 \
  --kv-cache-dtype fp8_e4m3 \
  --mem-fraction-static 0.88 \
  --disaggregation-mode prefill \
  --disaggregation-transfer-backend mooncake \
  --disaggregation-ib-device mlx5_0,mlx5_1 \
  --context-length 1048576 \
  --host 0.0.0.0 \
  --port 30000
