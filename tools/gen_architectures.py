#!/usr/bin/env python3
"""Generate src/model/architectures.json: every architecture the supported engine releases
register, classified by KV layout from the engine's own model code.

Registries read (from each release's wheel, tools/engine_wheels.py):
- vLLM `model_executor/models/registry.py`: `_TEXT_GENERATION_MODELS`, `_MULTIMODAL_MODELS`,
  `_SPECULATIVE_DECODING_MODELS` and the pooling tables (`_EMBEDDING_MODELS`, ...): architecture
  -> (module, class).
- SGLang `srt/models/*.py`: each module's `EntryClass` (SGLang registers a class by its name).
- TensorRT-LLM `_torch/models/*.py`: `@register_auto_model("Arch")` (its wheels are on
  pypi.nvidia.com; a release that cannot be downloaded is reported, never skipped silently, and
  its architectures come from the registry index pinned in `TRTLLM_INDEX_SOURCE`).

Classification: the layouts whose markers (the attention, Mamba and indexer classes and config
keys the engine's code uses) appear in the architecture's module. `REVIEWED` holds what a person
decided from the code where the markers cannot. An architecture whose module defines several
architectures and shows a layout kvlint does not model is marked `review`: the markers cannot
say which architecture it belongs to.

Usage: python3 tools/gen_architectures.py [--check]
  KVLINT_ARCH_RELEASES=engine=version,... reads only those releases (for tests).
  --check: exit 1 when a supported release registers an architecture the table lacks, or a
  release the table was read from cannot be read (the CI step in .ci/run). A release listed
  under `unread` (TensorRT-LLM where pypi.nvidia.com is out of reach) is reported, not failed.
"""
import ast
import functools
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import engine_wheels  # noqa: E402

OUT = engine_wheels.ROOT / "src" / "model" / "architectures.json"

# vLLM registry tables and what the architectures in them do.
VLLM_TABLES = {
    "_TEXT_GENERATION_MODELS": "generate",
    "_MULTIMODAL_MODELS": "multimodal",
    "_SPECULATIVE_DECODING_MODELS": "draft",
    "_EMBEDDING_MODELS": "pooling",
    "_CROSS_ENCODER_MODELS": "pooling",
    "_REWARD_MODELS": "pooling",
    "_TOKEN_CLASSIFICATION_MODELS": "pooling",
    "_SEQUENCE_CLASSIFICATION_MODELS": "pooling",
    "_LATE_INTERACTION_MODELS": "pooling",
}

# Layout markers in an engine's model code, most specific first.
MARKERS = {
    "compressed": r"compress_ratio|class \w*Compressor\b",
    "dsa": r"\bIndexer\b|index_topk",
    "mla": r"kv_lora_rank",
    "mamba": r"MambaMixer2?\b|Mamba2Mixer|mamba_chunk_scan",
    "gdn": r"GatedDeltaNet|gated_delta_rule",
    "lightning": r"[Ll]ightning_?[Aa]ttention|MiniMaxText01LinearAttention",
    "kimi_linear": r"Kimi(K3)?DeltaAttention|kda_state_shape|KimiLinearCacheParams",
    "short_conv": r"\bShortConv",
    "cross_attention": r"ENCODER_DECODER|CrossAttention\b|cross_attn",
    "chunked": r"attention_chunk_size|ChunkedLocalAttention",
    "sliding": r"sliding_window|layer_types",
}
# Layouts a model's own file shows: an encoder-decoder model defines its cross-attention itself,
# and a multimodal model may import an audio encoder that has one (vLLM gemma4_mm.py).
OWN_ONLY = {"cross_attention"}
# SGLang's multimodal models embed their inputs through these (in the model's own file).
MULTIMODAL = r"general_mm_embed_routine|MultiModalityDataPaddingPattern"
# What kvlint's geometry and capacity code model (src/model/architectures.rs `MODELLED`, and
# `RECURRENT` where src/model/state.rs reads the family's state from its config).
MODELLED = {"standard", "mla", "dsa", "gdn", "chunked", "sliding", "multimodal", "draft",
            "mamba", "short_conv", "kimi_linear", "lightning"}
# Layouts that come on top of an attention kind.
EXTRAS = {"sliding", "multimodal", "draft"}
DRAFT_NAME = re.compile(r"NextN|MTP|Eagle|DFlash|DSpark|Medusa|Draft", re.I)

# Classified by a person from the engine's code where the markers cannot tell.
DSV4 = {
    "layout": ["compressed", "dsa", "sliding"],
    "why": "SGLang deepseek_v4.py MqaAttentionBase: per-layer config.compress_ratios[layer_id] "
           "(0: sliding window only; 4 with C4Indexer; 128), DSv4 memory calculation; vLLM "
           "vllm/models/deepseek_v4 (compressor.py, sparse_mla.py)",
}
REVIEWED = {
    "DeepseekV4ForCausalLM": DSV4,
    "DeepseekV41ForCausalLM": DSV4,
    "DeepseekV4ForConditionalGeneration": dict(DSV4, layout=DSV4["layout"] + ["multimodal"]),
    # One module registers several classes; every one of them keeps the same hybrid layout.
    **{arch: {
        "layout": ["mamba", "sliding", "standard"],
        "why": "vLLM and SGLang nemotron_h.py: MambaMixer2 on the 'M' layers of "
               "hybrid_override_pattern / layers_block_type, NemotronHAttention (GQA, optional "
               "config.sliding_window) on '*' layers; NemotronHPuzzleForCausalLM subclasses it",
    } for arch in ("NemotronHForCausalLM", "NemotronHPuzzleForCausalLM")},
    **{arch: {
        "layout": ["mamba", "multimodal", "sliding", "standard"],
        "why": "vLLM and SGLang nano_nemotron_vl.py: a vision/audio encoder over a NemotronH "
               "language model (nemotron_h.py: MambaMixer2 plus GQA attention layers)",
    } for arch in ("NemotronH_Nano_VL_V2", "NemotronH_Nano_Omni_Reasoning_V3",
                   "NemotronH_Omni_Reasoning_V3")},
    **{arch: {
        "layout": ["mamba", "sliding", "standard"],
        "why": "vLLM jamba.py: JambaMambaDecoderLayer (MambaMixer, Mamba1 state) and "
               "JambaAttentionDecoderLayer (GQA); JambaForSequenceClassification subclasses it",
    } for arch in ("JambaForCausalLM", "JambaForSequenceClassification")},
    **{arch: {
        "layout": ["short_conv", "sliding", "standard"],
        "why": "vLLM and SGLang lfm2.py: ShortConv on the layers config.layer_types does not "
               "mark full_attention, Lfm2Attention (GQA) on the others; Lfm2BidirectionalModel "
               "is its pooling twin",
    } for arch in ("Lfm2ForCausalLM", "Lfm2BidirectionalModel")},
    "DeciLMForCausalLM": {
        "layout": ["nas", "standard"],
        "why": "vLLM and SGLang nemotron_nas.py DeciLMDecoderLayer: per-layer block_configs; no-op "
               "attention layers build no attention, the others num_attention_heads // "
               "n_heads_in_group KV heads (vLLM keeps KV only for built layers, SGLang sizes its "
               "pool for every layer with one KV head count); no-op FFNs build no MLP, the others "
               "ffn_mult widths",
    },
    # The markers read MiniMax-M3's sparse attention as a DSA indexer; its index cache is its own.
    **{arch: {
        "layout": ["dsa", "multimodal", "sliding", "standard"],
        "why": "vLLM and SGLang minimax_m3.py: MSA sparse attention (config "
               "sparse_attention_config: sparse_index_dim, sparse_num_index_heads per "
               "sparse_attention_freq layer), SGLang layers/attention/minimax_sparse_ops/msa.py",
        "review": "MiniMax-M3's MSA index cache (sparse_attention_config) is not DeepSeek's "
                  "DSA indexer, which is all kvlint models",
    } for arch in ("MiniMaxM3ForCausalLM", "MiniMaxM3SparseForCausalLM",
                   "MiniMaxM3SparseForConditionalGeneration")},
    "MiniMaxM3MTP": {
        "layout": ["draft", "dsa", "sliding"],
        "why": "vLLM vllm/models/minimax_m3: the MiniMax-M3 MSA attention as a draft layer",
        "review": "MiniMax-M3's MSA index cache (sparse_attention_config) is not DeepSeek's "
                  "DSA indexer, which is all kvlint models",
    },
    "VoxtralForConditionalGeneration": {
        "layout": ["multimodal", "standard"],
        "why": "vLLM voxtral.py imports whisper.py for WhisperEncoder (AttentionType.ENCODER, no KV "
               "cache); its decoder is init_vllm_registered_model(text_config), SGLang voxtral.py "
               "the same; whisper.py's ENCODER_DECODER attention is WhisperForConditionalGeneration's",
    },
}


# TensorRT-LLM's wheels live on pypi.nvidia.com and are too large to fetch here; its PyTorch
# backend keeps a static registry of what `@register_auto_model` registers:
# `tensorrt_llm/_torch/models/_arch_index.py :: MODEL_ARCH_TO_MODULE`, read from the
# NVIDIA/TensorRT-LLM repository at the commit below (through the search tool's read_file,
# 2026-12-05). When no TensorRT-LLM wheel can be read, its architectures come from this index:
# an architecture vLLM or SGLang also registers keeps the layout their code shows; one only
# TensorRT-LLM registers is marked for review (its model code was not read).
TRTLLM_INDEX_SOURCE = ("github:NVIDIA/TensorRT-LLM@065ff9e93780bc0bdbfdbc7156a306ca14f5850c:"
                       "tensorrt_llm/_torch/models/_arch_index.py")
TRTLLM_INDEX = {
    "AfmoeForCausalLM": "modeling_afmoe",
    "BartForConditionalGeneration": "modeling_bart",
    "BertForSequenceClassification": "modeling_bert",
    "CLIPVisionModel": "modeling_clip",
    "Cohere2ForCausalLM": "modeling_cohere2",
    "Cosmos3ForConditionalGeneration": "modeling_cosmos3",
    "DeciLMForCausalLM": "modeling_nemotron_nas",
    "DeepseekV32ForCausalLM": "modeling_deepseekv3",
    "DeepseekV3ForCausalLM": "modeling_deepseekv3",
    "DeepseekV4ForCausalLM": "modeling_deepseekv4",
    "EAGLE3LlamaForCausalLM": "modeling_speculative",
    "Eagle3DeepSeekV3ForCausalLM": "modeling_speculative",
    "Exaone4ForCausalLM": "modeling_exaone4",
    "Exaone4_5_ForConditionalGeneration": "modeling_exaone4_5",
    "ExaoneMoEForCausalLM": "modeling_exaone_moe",
    "Gemma3ForCausalLM": "modeling_gemma3",
    "Gemma3ForConditionalGeneration": "modeling_gemma3vl",
    "Gemma4AssistantForCausalLM": "modeling_gemma4",
    "Gemma4ForCausalLM": "modeling_gemma4",
    "Gemma4ForConditionalGeneration": "modeling_gemma4mm",
    "Gemma4UnifiedForConditionalGeneration": "modeling_gemma4_unified",
    "Glm4MoeForCausalLM": "modeling_glm",
    "GlmMoeDsaForCausalLM": "modeling_deepseekv3",
    "GptOssForCausalLM": "modeling_gpt_oss",
    "HCXVisionForCausalLM": "modeling_hyperclovax",
    "HCXVisionModel": "modeling_hyperclovax",
    "HunYuanDenseV1ForCausalLM": "modeling_hunyuan_dense",
    "HunYuanMoEV1ForCausalLM": "modeling_hunyuan_moe",
    "KimiK25ForConditionalGeneration": "modeling_kimi_k25",
    "KimiK3ForConditionalGeneration": "modeling_kimi_k3_vl",
    "KimiLinearForCausalLM": "modeling_kimi_linear",
    "LagunaForCausalLM": "modeling_laguna",
    "Llama4ForConditionalGeneration": "modeling_llama",
    "LlamaForCausalLM": "modeling_llama",
    "LlavaLlamaModel": "modeling_vila",
    "LlavaNextForConditionalGeneration": "modeling_llava_next",
    "MBartForConditionalGeneration": "modeling_bart",
    "MTPDraftModelForCausalLM": "modeling_speculative",
    "MiniCPMV4_6ForConditionalGeneration": "modeling_minicpmv4_6",
    "MiniMaxM2ForCausalLM": "modeling_minimaxm2",
    "MiniMaxM3SparseForCausalLM": "modeling_minimaxm3",
    "MiniMaxM3SparseForConditionalGeneration": "modeling_minimaxm3",
    "Mistral3ForConditionalGeneration": "modeling_mistral",
    "MistralForCausalLM": "modeling_mistral",
    "MistralLarge3EagleForCausalLM": "modeling_speculative",
    "MistralLarge3ForCausalLM": "modeling_mistral_large3",
    "MixtralForCausalLM": "modeling_mixtral",
    "MllamaForConditionalGeneration": "modeling_mllama",
    "NemotronForCausalLM": "modeling_nemotron",
    "NemotronHForCausalLM": "modeling_nemotron_h",
    "NemotronHPuzzleForCausalLM": "modeling_nemotron_h",
    "NemotronH_Nano_Omni_Reasoning_V3": "modeling_nemotron_nano",
    "NemotronH_Nano_VL_V2": "modeling_nemotron_nano",
    "Phi3ForCausalLM": "modeling_phi3",
    "Phi4MMForCausalLM": "modeling_phi4mm",
    "PixtralForConditionalGeneration": "modeling_mistral",
    "PixtralVisionModel": "modeling_pixtral",
    "Qwen2ForCausalLM": "modeling_qwen",
    "Qwen2ForProcessRewardModel": "modeling_qwen",
    "Qwen2ForRewardModel": "modeling_qwen",
    "Qwen2MoeForCausalLM": "modeling_qwen_moe",
    "Qwen2VLForConditionalGeneration": "modeling_qwen2vl",
    "Qwen2_5_VLForConditionalGeneration": "modeling_qwen2vl",
    "Qwen3ForCausalLM": "modeling_qwen3",
    "Qwen3ForTextEmbedding": "modeling_qwen3",
    "Qwen3MoeForCausalLM": "modeling_qwen3_moe",
    "Qwen3NextForCausalLM": "modeling_qwen3_next",
    "Qwen3VLForConditionalGeneration": "modeling_qwen3vl",
    "Qwen3VLMoeForConditionalGeneration": "modeling_qwen3vl_moe",
    "Qwen3_5ForCausalLM": "modeling_qwen3_5",
    "Qwen3_5ForConditionalGeneration": "modeling_qwen3_5",
    "Qwen3_5MoeForCausalLM": "modeling_qwen3_5",
    "Qwen3_5MoeForConditionalGeneration": "modeling_qwen3_5",
    "QwenImageBenchForConditionalGeneration": "modeling_qwen_image_bench",
    "SeedOssForCausalLM": "modeling_seedoss",
    "SiglipVisionModel": "modeling_siglip",
    "Starcoder2ForCausalLM": "modeling_starcoder2",
    "Step3p5ForCausalLM": "modeling_step3p7",
    "Step3p7ForConditionalGeneration": "modeling_step3p7vl",
    "T5ForConditionalGeneration": "modeling_t5",
    "WhisperForConditionalGeneration": "modeling_whisper",
}
# Layouts of the architectures only TensorRT-LLM registers, from their names and modules
# (drafts, vision and text encoders, T5's encoder-decoder); each stays marked for review.
TRTLLM_ONLY = {
    "CLIPVisionModel": ["multimodal"],
    "SiglipVisionModel": ["multimodal"],
    "HCXVisionModel": ["multimodal"],
    "LlavaLlamaModel": ["multimodal", "standard"],
    "QwenImageBenchForConditionalGeneration": ["multimodal", "standard"],
    "EAGLE3LlamaForCausalLM": ["draft", "standard"],
    "Eagle3DeepSeekV3ForCausalLM": ["draft", "mla"],
    "MTPDraftModelForCausalLM": ["draft", "standard"],
    "MistralLarge3EagleForCausalLM": ["draft", "mla"],
    "Qwen3ForTextEmbedding": ["standard"],
    "T5ForConditionalGeneration": ["cross_attention"],
}


def add_trtllm_index(table):
    """The TensorRT-LLM rows from `TRTLLM_INDEX` (used when no TensorRT-LLM wheel was read)."""
    commit = TRTLLM_INDEX_SOURCE.split("@")[1].split(":")[0]
    for arch, module in TRTLLM_INDEX.items():
        e = table.setdefault(arch, {"architecture": arch, "layout": [], "engines": {}})
        if not e["engines"]:
            e["layout"] = TRTLLM_ONLY.get(arch, ["standard"])
            e["review"] = ("only TensorRT-LLM registers it (_arch_index.py); its model code "
                           "was not read, so its layout is not classified")
        e["engines"]["tensorrt_llm"] = {
            "releases": f"registry at {commit[:12]}",
            "file": f"tensorrt_llm/_torch/models/{module}.py",
        }


def vllm_registry(root):
    """architecture -> (task, module path, class) from registry.py's dict literals."""
    registry = root / "vllm" / "model_executor" / "models" / "registry.py"
    tables = {}
    for node in ast.walk(ast.parse(registry.read_text())):
        if not (isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        name = next((n for n in names if n in VLLM_TABLES), None)
        if name is None:
            continue
        tables[name] = node.value
    out = {}
    # In VLLM_TABLES order: an architecture that generates text and also pools (Phi3VForCausalLM
    # in `_EMBEDDING_MODELS`) is classified as it generates.
    for name, task in VLLM_TABLES.items():
        node = tables.get(name)
        if node is None:
            continue
        for k, v in zip(node.keys, node.values):
            if not (isinstance(k, ast.Constant) and isinstance(v, ast.Tuple) and v.elts):
                continue
            names = [e.value for e in v.elts if isinstance(e, ast.Constant)]
            if len(names) == len(v.elts) and all(isinstance(n, str) for n in names):
                cls = names[1] if len(names) > 1 else k.value
                out.setdefault(k.value, (task, vllm_module(root, names[0]), cls))
    return out


def vllm_module(root, module):
    """`deepseek_v2` -> model_executor/models/deepseek_v2.py; `vllm.models.x` -> that package."""
    parts = module.split(".") if module.startswith("vllm.") else [
        "vllm", "model_executor", "models", module]
    path = root.joinpath(*parts)
    return path if path.is_dir() else path.with_suffix(".py")


def sglang_registry(root):
    out = {}
    for path in sorted((root / "sglang" / "srt" / "models").glob("*.py")):
        try:
            tree = ast.parse(path.read_text())
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == "EntryClass" for t in node.targets):
                items = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
                for item in items:
                    if isinstance(item, ast.Name):
                        out.setdefault(item.id, ("generate", path, item.id))
    return out


def trtllm_registry(root):
    out = {}
    for path in sorted((root / "tensorrt_llm" / "_torch" / "models").glob("*.py")):
        for arch in re.findall(r"register_auto_model\(\s*[\"'](\w+)[\"']", path.read_text()):
            out.setdefault(arch, ("generate", path, arch))
    return out


REGISTRIES = {"vllm": vllm_registry, "sglang": sglang_registry, "tensorrt_llm": trtllm_registry}


# The model modules (or packages) a model file imports from: its decoder layers often live
# there (Llama 4's chunked attention in llama4.py, imported by mllama4.py; SGLang dots3_nextn.py
# from dots3_common/nextn.py, which imports dots3_common/modeling.py). Followed two levels deep.
IMPORT = re.compile(
    r"^from (\.|vllm\.model_executor\.models\.|sglang\.srt\.models\.)([\w.]+) import", re.M)


@functools.lru_cache(maxsize=None)
def source(path):
    return path.read_text(errors="replace")


def files_of(path):
    return sorted(path.rglob("*.py")) if path.is_dir() else [path]


def imported(path, models):
    """The model files `path` imports, relative (`.x`) or by their package path."""
    out = set()
    for prefix, name in IMPORT.findall(source(path)):
        target = (path.parent if prefix == "." else models).joinpath(*name.split("."))
        for candidate in (target.with_suffix(".py"), target):
            if candidate.exists():
                out.update(files_of(candidate))
                break
    return out


@functools.lru_cache(maxsize=None)
def imported_cached(path, models):
    return frozenset(imported(path, models))


@functools.lru_cache(maxsize=None)
def module_text(path, models):
    """The module's own code, and with that of the model modules it imports."""
    own = set(files_of(path))
    seen = set(own)
    if not path.is_dir():
        for _ in range(2):
            seen |= {i for f in seen for i in imported_cached(f, models)}
    read = lambda fs: "\n".join(source(f) for f in sorted(fs) if f.is_file())
    return read(own), read(seen)


@functools.lru_cache(maxsize=None)
def markers(path, models):
    """The layouts a module's code shows (computed once per module: a release registers many
    architectures per module)."""
    own, text = module_text(path, models)
    found = [k for k, rx in MARKERS.items() if re.search(rx, own if k in OWN_ONLY else text)]
    if re.search(MULTIMODAL, own):
        found.append("multimodal")
    return tuple(found)


def classify(arch, task, path, models, archs_in_module):
    """(layout list, review reason or None) for one architecture of one release."""
    if arch in REVIEWED:
        return REVIEWED[arch]["layout"], REVIEWED[arch].get("review")
    if not path.exists():
        return [], f"module {path.name} is not in the wheel"
    found = list(markers(path, models))
    if task == "multimodal":
        found.append("multimodal")
    if task == "draft" or DRAFT_NAME.search(arch):
        found.append("draft")
    unmodelled = [k for k in found if k not in MODELLED]
    review = None
    if unmodelled and archs_in_module > 1:
        review = (f"{path.name} defines {archs_in_module} registered classes and uses "
                  f"{', '.join(unmodelled)}: which of them is not clear from the markers")
    if not set(found) - EXTRAS:
        found.append("standard")
    return sorted(set(found)), review


def releases():
    """The supported releases; `KVLINT_ARCH_RELEASES=vllm=0.33.0,sglang=0.5.23` narrows them
    (tests/architectures.rs runs `--check` offline over a cache it builds)."""
    every = engine_wheels.releases()
    only = os.environ.get("KVLINT_ARCH_RELEASES")
    if not only:
        return every
    out = {}
    for item in only.split(","):
        engine, version = item.split("=")
        out.setdefault(engine, []).append(version)
    return out


def scan():
    """{arch: entry}, the releases that could not be read."""
    table, missing = {}, []
    for engine, versions in releases().items():
        for version in versions:
            root = engine_wheels.model_dir(engine, version)
            if root is None:
                missing.append(f"{engine} {version}")
                continue
            registry = REGISTRIES[engine](root)
            classes = {}
            for task, path, cls in registry.values():
                classes.setdefault(path, set()).add(cls)
            for arch, (task, path, _) in registry.items():
                models = root.joinpath(*engine_wheels.MODEL_DIRS[engine][0].split("/"))
                layout, review = classify(arch, task, path, models, len(classes[path]))
                e = table.setdefault(arch, {"architecture": arch, "layout": [], "engines": {}})
                e["layout"] = sorted(set(e["layout"]) | set(layout))
                if review:
                    e["review"] = review
                if arch in REVIEWED:
                    e["reviewed"] = REVIEWED[arch]["why"]
                seen = e["engines"].setdefault(engine, {"releases": [], "file": ""})
                seen["releases"].append(version)
                seen["file"] = str(path.relative_to(root))
    trtllm = releases().get("tensorrt_llm", [])
    if trtllm and all(f"tensorrt_llm {v}" in missing for v in trtllm):
        add_trtllm_index(table)
    return table, missing


def main():
    table, missing = scan()
    for m in missing:
        print(f"could not read {m}: its wheel did not download", file=sys.stderr)
    if "--check" in sys.argv:
        sys.exit(check(table, missing))
    rows = [table[a] for a in sorted(table)]
    supported = releases()
    for row in rows:
        for engine, seen in row["engines"].items():
            if isinstance(seen["releases"], list):
                seen["releases"] = span(seen["releases"], supported[engine])
    doc = {
        "generated_by": "tools/gen_architectures.py",
        "modelled": sorted(MODELLED),
        "unread": missing,
        "tensorrt_llm_registry": TRTLLM_INDEX_SOURCE,
        "architectures": rows,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    review = sum(1 for r in rows if "review" in r)
    print(f"{len(rows)} architectures, {review} marked for review, {len(missing)} releases unread")


def check(table, missing):
    """1 when a release registers an architecture the committed table lacks, or a release the
    table was generated from cannot be read now."""
    doc = json.loads(OUT.read_text())
    have = {e["architecture"] for e in doc["architectures"]}
    new = sorted(set(table) - have)
    for a in new:
        print(f"{a}: registered by {', '.join(sorted(table[a]['engines']))} but not in "
              f"src/model/{OUT.name}; run tools/gen_architectures.py", file=sys.stderr)
    lost = sorted(set(missing) - set(doc["unread"]))
    for m in lost:
        print(f"{m}: read when the table was generated, unreadable now", file=sys.stderr)
    for m in sorted(set(missing) & set(doc["unread"])):
        print(f"{m}: not read (as when the table was generated: listed under `unread`)")
    print(f"{len(table)} architectures registered, {len(new)} missing from the table")
    return 1 if new or lost else 0


def span(versions, supported):
    """`first..last` when the releases are a run of the supported list, else the list."""
    first = supported.index(versions[0])
    if len(versions) > 1 and supported[first:first + len(versions)] == versions:
        return f"{versions[0]}..{versions[-1]}"
    return ", ".join(versions)


if __name__ == "__main__":
    main()
