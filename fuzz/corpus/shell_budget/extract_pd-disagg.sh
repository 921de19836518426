#!/usr/bin/env bash
# Prefill and decode servers on one node (GPUs 0-3 and 4-7).
set -euo pipefail

export MODEL=zai-org/GLM-5
CTX=1048576
LOG_DIR=/var/log/sglang

CUDA_VISIBLE_DEVICES=0,1,2,3 nohup python3 -m sglang.launch_server \
  --model-path "$MODEL" \
  --disaggregation-mode prefill \
  --context-length $CTX \
  --tp 4 --mem-fraction-static ${MEM_FRACTION:-0.88} \
  --port 30000 > "$LOG_DIR/prefill.log" 2>&1 &

CUDA_VISIBLE_DEVICES=4,5,6,7 nohup python3 -m sglang.launch_server \
  --model-path "$MODEL" \
  --disaggregation-mode decode \
  --context-length $CTX \
  --tp 4 --mem-fraction-static $DECODE_MEM \
  --port 30001 > "$LOG_DIR/decode.log" 2>&1 &

wait
