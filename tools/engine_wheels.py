"""Fetches the supported releases' model code from their PyPI wheels (`pip download --no-deps`),
keeping only the files tools/gen_architectures.py reads. Cached per release in
$KVLINT_CACHE/architectures/<engine>-<version> (default ~/.cache/kvlint), as
tools/differential.sh caches its wheels.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = Path(os.environ.get("KVLINT_CACHE", Path.home() / ".cache" / "kvlint")) / "architectures"

# The model code each engine keeps in its wheel: the registry's directory first (vLLM 0.2x
# registers some architectures from packages under `vllm/models/`).
MODEL_DIRS = {
    "vllm": ("vllm/model_executor/models/", "vllm/models/"),
    "sglang": ("sglang/srt/models/",),
    "tensorrt_llm": ("tensorrt_llm/_torch/models/",),
}
PACKAGES = {"vllm": "vllm", "sglang": "sglang", "tensorrt_llm": "tensorrt-llm"}


def releases():
    """Every release kvlint supports: src/engine/{sglang,vllm}_flags.toml `versions` and
    src/engine/mod.rs `TRTLLM_VERSIONS`."""
    out = {}
    for engine in ("vllm", "sglang"):
        with open(ROOT / "src" / "engine" / f"{engine}_flags.toml", "rb") as f:
            out[engine] = tomllib.load(f)["versions"]
    mod = (ROOT / "src" / "engine" / "mod.rs").read_text()
    block = re.search(r"TRTLLM_VERSIONS: &\[Version\] = &\[(.*?)\];", mod, re.S)
    out["tensorrt_llm"] = [".".join(v) for v in re.findall(r"Version::new\((\d+), (\d+), (\d+)\)",
                                                           block.group(1))]
    return out


def model_dir(engine, version):
    """The release's extracted model code, downloading and extracting it on first use. None when
    the wheel cannot be downloaded (TensorRT-LLM's wheels live on pypi.nvidia.com)."""
    root = CACHE / f"{engine}-{version}"
    if not (root / "complete").is_file():
        tmp = Path(f"{root}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check",
               "--no-deps", "--only-binary=:all:", f"{PACKAGES[engine]}=={version}", "-d", str(tmp)]
        if engine == "tensorrt_llm":
            cmd[-2:-2] = ["--extra-index-url", "https://pypi.nvidia.com",
                          "--python-version", "3.12", "--platform", "manylinux_2_28_x86_64"]
        if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            return None
        for wheel in glob.glob(f"{tmp}/*.whl"):
            with zipfile.ZipFile(wheel) as z:
                z.extractall(tmp, [n for n in z.namelist()
                                   if n.startswith(MODEL_DIRS[engine]) and n.endswith(".py")])
            os.remove(wheel)
        (tmp / "complete").touch()
        shutil.rmtree(root, ignore_errors=True)
        tmp.rename(root)
    return root


if __name__ == "__main__":
    for engine, versions in releases().items():
        for v in versions:
            print(engine, v, model_dir(engine, v), flush=True)
