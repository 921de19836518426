#!/usr/bin/env python3
"""Fill in the KV bytes per token of tools/popular_models.toml from src/model/catalog.json.

For each listed id that the catalog holds (by id, alias or same-geometry name), `full` and
`windowed` are the bytes per token of a bf16 cache over all layers, before any TP split,
worked out here from the config.json independently of kvlint's geometry code:
- MLA (`kv_lora_rank`): one latent of kv_lora_rank + qk_rope_head_dim per layer;
- otherwise K and V: KV heads × head_dim × 2, with head_dim = hidden_size / heads if unset;
- `layer_types` counts full and sliding/chunked layers; Gemma 4 full layers use
  `num_global_key_value_heads` × `global_head_dim` (vLLM gemma4.py `per_layer_config`);
- `full_attention_interval` (Qwen3-Next): every n-th layer keeps KV, the rest are linear;
- `linear_attn_config.full_attn_layers` (Kimi-Linear): only those layers keep KV, the KDA layers
  hold a fixed state;
- `attention_chunk_size` (Llama 4): every 4th layer is global, the rest chunked;
- `sliding_window_pattern` (Gemma 2 alternates): every n-th layer global, the rest windowed;
- a config-wide `sliding_window` (unless `use_sliding_window` is false): every layer windowed;
- `hybrid_layer_pattern` (MiMo-V2): 1 marks a sliding layer with its own `swa_*` head shape.
An id the catalog lacks keeps no figures; `unmodelled` names the architecture of a row held in
tools/model_catalog/pending/. The ids and their `sources` are left as they are.

Usage: python3 tools/popular_models.py
"""
import json
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIST = ROOT / "tools" / "popular_models.toml"
CATALOG = ROOT / "src" / "model" / "catalog.json"
PENDING = ROOT / "tools" / "model_catalog" / "pending"


def kv(cfg):
    t = dict(cfg)
    if isinstance(cfg.get("text_config"), dict):
        t.update(cfg["text_config"])
    layers = t.get("num_hidden_layers") or t.get("num_layers") or t.get("n_layers")
    if t.get("kv_lora_rank"):
        per = (t["kv_lora_rank"] + t["qk_rope_head_dim"]) * 2
    else:
        heads = t.get("num_attention_heads") or t.get("n_head")
        kv_heads = t.get("num_key_value_heads") or t.get("multi_query_group_num") or heads
        head_dim = t.get("head_dim") or t.get("kv_channels") or t["hidden_size"] // heads
        per = kv_heads * head_dim * 2 * 2
    lin = t.get("linear_attn_config") or {}
    if lin.get("full_attn_layers"):
        # Kimi-Linear (vLLM kimi_linear.py `is_kda_layer`): the listed layers are MLA.
        return len(lin["full_attn_layers"]) * per, 0
    if t.get("hybrid_layer_pattern"):
        # MiMo-V2 (vLLM/SGLang mimo_v2.py `is_swa_layer`): 1 marks a sliding layer, which has
        # its own swa_* head shape; K and V widths may differ (v_head_dim).
        p = t["hybrid_layer_pattern"][:layers]
        full = p.count(0) * t["num_key_value_heads"] * (
            t["head_dim"] + t.get("v_head_dim", t["head_dim"])) * 2
        swa = p.count(1) * t["swa_num_key_value_heads"] * (
            t["swa_head_dim"] + t.get("swa_v_head_dim", t["swa_head_dim"])) * 2
        return full, swa
    kinds = t.get("layer_types")
    if kinds:
        full = sum(k in ("full_attention", "attention") for k in kinds)
        windowed = sum(k in ("sliding_attention", "chunked_attention") for k in kinds)
        if t.get("global_head_dim"):
            heads = t.get("num_global_key_value_heads") or t["num_key_value_heads"]
            return full * heads * t["global_head_dim"] * 2 * 2, windowed * per
        return full * per, windowed * per
    if t.get("full_attention_interval"):
        return layers // t["full_attention_interval"] * per, 0
    if t.get("attention_chunk_size"):
        return layers // 4 * per, (layers - layers // 4) * per
    pattern = 2 if t.get("model_type", "").startswith("gemma2") else t.get("sliding_window_pattern")
    if pattern and t.get("sliding_window"):
        return layers // pattern * per, (layers - layers // pattern) * per
    if t.get("sliding_window") and t.get("use_sliding_window") is not False:
        return 0, layers * per
    return layers * per, 0


def main():
    catalog = {}
    for m in json.loads(CATALOG.read_text())["models"]:
        for name in [m["id"], *m.get("aliases", []), *m.get("same_geometry", [])]:
            catalog[name.lower()] = m["config"]
    pending = {}
    for path in PENDING.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                pending[row["id"].lower()] = row["config"]["architectures"][0]
    text = LIST.read_text()
    head, _, _ = text.partition("[[model]]")
    out = [head.rstrip("\n"), ""]
    for m in tomllib.loads(text)["model"]:
        out += ["[[model]]", f"id = {json.dumps(m['id'])}"]
        key = m["id"].lower()
        if key in catalog:
            full, windowed = kv(catalog[key])
            out += [f"full = {full}", f"windowed = {windowed}"]
        elif key in pending:
            out.append(f"unmodelled = {json.dumps(pending[key])}")
        out += ["sources = [" + ", ".join(json.dumps(s) for s in m["sources"]) + "]", ""]
    LIST.write_text("\n".join(out))
    held = sum(m.lower() in catalog for m in re.findall(r'^id = "(.*)"$', text, re.M))
    print(f"{held} of the listed ids are in the catalog")


if __name__ == "__main__":
    main()
