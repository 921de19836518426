#!/usr/bin/env python3
"""Generate src/model/catalog.json from ../shared/reference/model-geometry.jsonl.

Keeps the config.json fields of each model (facts), its public `source`, and the
public parameter total where the reference gives one. Fields the reference marks
as assumed (`assumed_not_in_source`) are merged in and listed under `assumed`.

Usage: python3 tools/gen_model_catalog.py [JSONL] [OUT]
"""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JSONL = ROOT.parent / "shared" / "reference" / "model-geometry.jsonl"
OUT = ROOT / "src" / "model" / "catalog.json"

# Reference bookkeeping, not config.json fields.
META = {"hf_id", "computed", "total_params", "source", "source_kind", "notes",
        "extra_sources", "assumed_not_in_source", "_name_or_path"}


# Checkpoints that share a catalog entry's config.json geometry, with the reason. Only ids whose
# sameness the reference states are listed: kvlint never guesses a model.
SAME_GEOMETRY = {
    "mistralai/Mixtral-8x7B-v0.1": (["mistralai/Mixtral-8x7B-Instruct-v0.1"],
                                    "the Instruct fine-tune keeps the base config (source_kind)"),
}


def entry(row):
    config = {k: v for k, v in row.items() if k not in META}
    assumed = []
    for k, v in (row.get("assumed_not_in_source") or {}).items():
        if k.startswith("_") or k in config:
            continue
        config[k] = v
        assumed.append(k)
    out = {"id": row["hf_id"], "source": row["source"], "source_kind": row.get("source_kind")}
    total = (row.get("total_params") or {}).get("total")
    if total:
        out["public_total_params"] = total
    if assumed:
        out["assumed"] = assumed
    if row["hf_id"] in SAME_GEOMETRY:
        out["same_geometry"], out["same_geometry_why"] = SAME_GEOMETRY[row["hf_id"]]
    out["config"] = config
    return out


def main():
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else JSONL
    dst = Path(sys.argv[2]) if len(sys.argv) > 2 else OUT
    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    entries = [entry(r) for r in rows]
    missing = [e["id"] for e in entries if not e["source"]]
    if missing:
        sys.exit(f"entries without a source: {missing}")
    dst.write_text(json.dumps({"generated_from": "model-geometry.jsonl", "models": entries},
                              indent=1) + "\n")
    print(f"wrote {len(entries)} models to {dst}")


if __name__ == "__main__":
    main()
