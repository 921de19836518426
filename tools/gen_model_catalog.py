#!/usr/bin/env python3
"""Generate src/model/catalog.json from the project's model facts.

Two inputs, both facts with their public source:
- ../shared/reference/model-geometry.jsonl: the reference rows (config.json fields, `source`,
  public parameter totals). Fields the reference marks as assumed (`assumed_not_in_source`)
  are merged in and listed under `assumed`.
- tools/model_catalog/*.jsonl: catalog rows as they go into catalog.json (`id`, optional
  `aliases`, `source` as `github:owner/repo@<commit>:path`, `source_kind`, optional
  `same_geometry` ids with `same_geometry_why`, `config`). A row whose id is a reference id
  replaces that reference row.
- tools/model_catalog/pending/*.jsonl (not read here): pinned rows whose config kvlint cannot plan
  yet (an architecture it refuses by name, INP008, or a config its geometry code rejects). They
  move up into tools/model_catalog/ once their layout is modelled; tests/catalog.rs fails when
  one of them would plan.

Usage: python3 tools/gen_model_catalog.py [JSONL] [OUT]
"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JSONL = ROOT.parent / "shared" / "reference" / "model-geometry.jsonl"
ROWS = ROOT / "tools" / "model_catalog"
OUT = ROOT / "src" / "model" / "catalog.json"

# Reference bookkeeping, not config.json fields.
META = {"hf_id", "computed", "total_params", "source", "source_kind", "notes",
        "extra_sources", "assumed_not_in_source", "_name_or_path"}

# A public copy at a fixed revision: a GitHub commit, or a Hugging Face commit in the URL.
PINNED = re.compile(r"^(github:[\w.-]+/[\w.-]+@[0-9a-f]{40}:\S+"
                    r"|https://huggingface\.co/\S+/(blob|blame|commit)/[0-9a-f]{40}(/\S*)?)$")


# Old names of reference rows (repositories renamed on the Hub).
ALIASES = {
    "meta-llama/Llama-3.1-8B-Instruct": ["meta-llama/Meta-Llama-3.1-8B-Instruct"],
}


def entry(row):
    config = {k: v for k, v in row.items() if k not in META}
    assumed = []
    for k, v in (row.get("assumed_not_in_source") or {}).items():
        if k.startswith("_") or k in config:
            continue
        config[k] = v
        assumed.append(k)
    out = {"id": row["hf_id"]}
    if row["hf_id"] in ALIASES:
        out["aliases"] = ALIASES[row["hf_id"]]
    out.update(source=row["source"], source_kind=row.get("source_kind"))
    total = (row.get("total_params") or {}).get("total")
    if total:
        out["public_total_params"] = total
    if assumed:
        out["assumed"] = assumed
    out["config"] = config
    return out


def read_rows(folder):
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not PINNED.match(row.get("source", "")):
                sys.exit(f"{path.name}:{n}: {row.get('id')}: source lacks a pinned revision")
            rows.append(row)
    return rows


def check_unique(entries):
    seen = {}
    for e in entries:
        for name in [e["id"], *e.get("aliases", []), *e.get("same_geometry", [])]:
            key = name.lower()
            if key in seen:
                sys.exit(f"{name} names both {seen[key]} and {e['id']}")
            seen[key] = e["id"]


def main():
    src = Path(sys.argv[1]) if len(sys.argv) > 1 else JSONL
    dst = Path(sys.argv[2]) if len(sys.argv) > 2 else OUT
    rows = [json.loads(line) for line in src.read_text().splitlines() if line.strip()]
    entries = [entry(r) for r in rows]
    index = {e["id"]: i for i, e in enumerate(entries)}
    for row in read_rows(ROWS):
        if row["id"] in index:
            entries[index[row["id"]]] = row
        else:
            index[row["id"]] = len(entries)
            entries.append(row)
    missing = [e["id"] for e in entries if not e["source"]]
    if missing:
        sys.exit(f"entries without a source: {missing}")
    check_unique(entries)
    doc = {"generated_from": "model-geometry.jsonl, tools/model_catalog/*.jsonl",
           "models": entries}
    dst.write_text(json.dumps(doc, indent=1, allow_nan=False) + "\n")
    print(f"wrote {len(entries)} models to {dst}")


if __name__ == "__main__":
    main()
