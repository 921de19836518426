# kvlint-test: --gpu l4 --engine-version 1.0.0
# Llama 3.1 8B in bf16 on one 24 GB L4 with the full 128k context: TensorRT-LLM would start and
# silently lower max_seq_len to the few thousand tokens its pool holds.
trtllm-serve meta-llama/Llama-3.1-8B-Instruct --max_seq_len 131072 --max_num_tokens 8192
