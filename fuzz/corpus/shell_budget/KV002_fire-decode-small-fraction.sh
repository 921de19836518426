# kvlint-test: --gpu h200x8 --engine-version 0.5.22
python3 -m sglang.launch_server --model-path zai-org/GLM-5.3 --tp-size 8 --quantization fp8 \
  --kv-cache-dtype fp8_e4m3 --mem-fraction-static 0.75 \
  --disaggregation-mode decode --context-length 1048576
