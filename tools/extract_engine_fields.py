#!/usr/bin/env python3
"""Extracts the fields of each engine's args dataclass per release: vLLM `EngineArgs` and
`AsyncEngineArgs` (vllm/engine/arg_utils.py), vLLM's OpenAI server `FrontendArgs`
(vllm/entrypoints/openai/cli_args.py: Ray Serve LLM sends an `engine_kwargs` key that is one of
its fields there), SGLang `ServerArgs` (sglang/srt/server_args.py).
Option maps (Ray Serve `engine_kwargs`, Triton `model.json`, `vllm.LLM(...)`) are keyword
arguments of these constructors: a key that is not a field is a TypeError at startup.

Only the one source file is read from each release's wheel on the package index, with HTTP range
requests (as pip's lazy wheel reads metadata), so no 400 MB wheel is downloaded. The releases are
those of src/engine/{vllm,sglang}_flags.toml. Usage:

    extract_engine_fields.py > src/engine/fields.toml
    extract_engine_fields.py --check      # exit 1 when src/engine/fields.toml is stale
"""
import ast
import io
import json
import os
import sys
import tomllib
import urllib.request
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("KVLINT_CACHE", Path.home() / ".cache" / "kvlint")) / "fields"
INDEX = "https://pypi.org/simple"
# table → (package, the file in the wheel (the first that exists), dataclasses whose fields are keyword arguments; a class's
# bases in the same file are followed)
SOURCES = {
    "vllm": ("vllm", ("vllm/engine/arg_utils.py",), ("EngineArgs", "AsyncEngineArgs")),
    # vLLM 0.29 moved the module to vllm/entrypoints/launchers/, 0.33 to entrypoints/common/.
    "vllm_frontend": ("vllm", ("vllm/entrypoints/openai/cli_args.py",
                               "vllm/entrypoints/launchers/cli_args.py",
                               "vllm/entrypoints/common/cli_args.py"), ("FrontendArgs",)),
    "sglang": ("sglang", ("sglang/srt/server_args.py",), ("ServerArgs",)),
}


class RangeFile(io.RawIOBase):
    """A remote file read with HTTP range requests."""

    def __init__(self, url):
        self.url, self.pos = url, 0
        head = urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=120)
        self.size = int(head.headers["Content-Length"])

    def seekable(self):
        return True

    def readable(self):
        return True

    def tell(self):
        return self.pos

    def seek(self, off, whence=0):
        self.pos = {0: off, 1: self.pos + off, 2: self.size + off}[whence]
        return self.pos

    def readinto(self, buf):
        if self.pos >= self.size:
            return 0
        end = min(self.size, self.pos + len(buf)) - 1
        req = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end}"})
        data = urllib.request.urlopen(req, timeout=120).read()
        buf[: len(data)] = data
        self.pos += len(data)
        return len(data)


_LISTINGS = {}


def wheel_url(package, version):
    if package not in _LISTINGS:
        req = urllib.request.Request(f"{INDEX}/{package}/",
                                     headers={"Accept": "application/vnd.pypi.simple.v1+json"})
        _LISTINGS[package] = json.load(urllib.request.urlopen(req, timeout=120))["files"]
    files = _LISTINGS[package]
    prefix = f"{package}-{version}-"
    wheels = [f for f in files if f["filename"].startswith(prefix) and f["filename"].endswith(".whl")]
    # Any platform's wheel holds the same Python source; the x86-64 one is listed by every release.
    wheels.sort(key=lambda f: ("x86_64" not in f["filename"], f["filename"]))
    if not wheels:
        raise SystemExit(f"no wheel of {package} {version} on the index")
    return wheels[0]["url"]


def source(engine, version):
    """The release's source file, cached."""
    package, paths, _ = SOURCES[engine]
    cached = CACHE / f"{engine}-{version}.py"
    if not cached.is_file():
        raw = io.BufferedReader(RangeFile(wheel_url(package, version)), buffer_size=1 << 18)
        wheel = zipfile.ZipFile(raw)
        names = set(wheel.namelist())
        text = next((wheel.read(p) for p in paths if p in names), b"")
        CACHE.mkdir(parents=True, exist_ok=True)
        cached.write_bytes(text)
    return cached.read_text()


def fields(engine, text):
    """Names of the dataclass fields (class-level annotated names, not ClassVar/InitVar) of the
    engine's classes, a subclass adding to its base."""
    classes = {n.name: n for n in ast.parse(text).body if isinstance(n, ast.ClassDef)}
    out = set()
    todo = list(SOURCES[engine][2])
    while todo:
        name = todo.pop()
        cls = classes.get(name)
        if cls is None:
            continue
        todo += [b.id for b in cls.bases if isinstance(b, ast.Name)]
        for stmt in cls.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                ann = ast.unparse(stmt.annotation)
                if not ann.startswith(("ClassVar", "InitVar", "typing.ClassVar", "dataclasses.InitVar")):
                    out.add(stmt.target.id)
    return out


def table():
    lines = ["# Generated by tools/extract_engine_fields.py: each engine's args dataclass fields per",
             "# release (vLLM EngineArgs + AsyncEngineArgs, SGLang ServerArgs). Do not edit."]
    for engine in ("sglang", "vllm", "vllm_frontend"):
        with open(ROOT / "src" / "engine" / f"{engine.split('_')[0]}_flags.toml", "rb") as f:
            versions = tomllib.load(f)["versions"]
        # A release whose class declares no fields itself (SGLang's namespace layout, which
        # assembles ServerArgs from arg_groups/fields/ at import) is left out: kvlint takes that
        # release's fields from its CLI flag table, which the same declarations generate.
        per = [(v, f) for v in versions if (f := fields(engine, source(engine, v)))]
        versions = [v for v, _ in per]
        names = sorted(set().union(*(f for _, f in per)))
        lines += ["", f"[{engine}]", f"versions = {json.dumps(versions)}"]
        for name in names:
            # Ranges of consecutive releases that have the field, as `since..=until`.
            spans, start, prev = [], None, None
            for v, f in per:
                if name in f and start is None:
                    start = v
                if name not in f and start is not None:
                    spans.append(f"{start}..={prev}")
                    start = None
                prev = v
            if start is not None:
                spans.append(f"{start}..")
            lines.append(f"{name} = {json.dumps(spans)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    out = table()
    target = ROOT / "src" / "engine" / "fields.toml"
    if sys.argv[1:] == ["--check"]:
        stale = not target.is_file() or target.read_text() != out
        print("src/engine/fields.toml is stale: run tools/extract_engine_fields.py" if stale else "up to date")
        sys.exit(1 if stale else 0)
    sys.stdout.write(out)
