# kvlint-test: --gpu h100-80gb --engine-version 0.5.20
python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --cuda-graph-max-bs 160 --context-length 32768
