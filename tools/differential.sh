#!/usr/bin/env bash
# Runs tools/differential.py for the newest supported release of each engine (the last entry
# of src/engine/{sglang,vllm}_flags.toml `versions`). Wheels and the virtualenv are cached in
# $KVLINT_CACHE (default ~/.cache/kvlint). Usage: tools/differential.sh [KVLINT_BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${KVLINT_CACHE:-$HOME/.cache/kvlint}/differential"
mkdir -p "$cache"
kvlint="${1:-target/debug/kvlint}"
[ -x "$kvlint" ] || cargo build --locked --bin kvlint

command -v python3 >/dev/null || { echo "python3 is required"; exit 1; }
if [ ! -x "$cache/venv/bin/python" ]; then
  python3 -m venv "$cache/venv" 2>/dev/null || {
    command -v apt-get >/dev/null && apt-get install -y -q python3-venv python3-pip >/dev/null
    python3 -m venv "$cache/venv"
  }
fi
py="$cache/venv/bin/python"
"$py" -m pip --version >/dev/null 2>&1 || "$py" -m ensurepip --upgrade >/dev/null
"$py" -m pip install -q --disable-pip-version-check -r tools/differential-requirements.txt

latest() { "$py" -c "import sys, tomllib; print(tomllib.load(open(sys.argv[1], 'rb'))['versions'][-1])" "$1"; }
status=0
for engine in sglang vllm; do
  version=$(latest "src/engine/${engine}_flags.toml")
  root="$cache/$engine-$version"
  if [ ! -d "$root/$engine" ]; then
    rm -rf "$root.tmp" && mkdir -p "$root.tmp"
    "$py" -m pip download -q --disable-pip-version-check --no-deps "$engine==$version" -d "$root.tmp"
    "$py" - "$root.tmp" "$engine" <<'PY'
import glob, sys, zipfile
root, pkg = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(glob.glob(f"{root}/*.whl")[0]) as z:
    z.extractall(root, [n for n in z.namelist() if n.startswith(pkg + "/") and n.endswith(".py")])
PY
    rm -f "$root.tmp"/*.whl && mv "$root.tmp" "$root"
  fi
  "$py" tools/differential.py "$engine" "$root" "$kvlint" --version "$version" --count 400 --seed 11 || status=1
done
exit $status
