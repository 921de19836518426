#!/usr/bin/env bash
# Release artifacts, as .github/workflows/release.yml makes them (cargo-dist's naming):
#
#   release.sh build TARGET            cargo auditable build --profile dist for TARGET (fat LTO,
#                                      one codegen unit; the binary carries its dependency list:
#                                      `cargo audit bin kvlint`) into target/TARGET/dist/kvlint
#   release.sh package TARGET [BINARY] [OUT]
#                                      OUT/kvlint-TARGET.tar.gz and its .sha256 ("HASH  NAME")
#
# The GitHub Action downloads exactly these names (scripts/kvlint-action.sh install_release).
set -euo pipefail
cd "$(dirname "$0")/.."

build() {
  local target=$1
  cargo auditable --version >/dev/null 2>&1 || {
    echo "cargo-auditable is required: cargo install cargo-auditable --locked" >&2
    exit 2
  }
  cargo auditable build --profile dist --locked --target "$target" --bin kvlint
}

package() {
  local target=$1 binary=${2:-target/$1/dist/kvlint} out=${3:-dist}
  local name="kvlint-$target.tar.gz" stage
  [ -x "$binary" ] || { echo "$binary: no kvlint binary (run: $0 build $target)" >&2; exit 2; }
  mkdir -p "$out"
  stage=$(mktemp -d)
  cp "$binary" "$stage/kvlint"
  cp LICENSE README.md "$stage/"
  tar -czf "$out/$name" -C "$stage" kvlint LICENSE README.md
  rm -rf "$stage"
  (cd "$out" && sha256sum "$name" >"$name.sha256")
  echo "$out/$name"
}

case "${1:-}" in
  build) build "${2:?target}" ;;
  package) package "${2:?target}" "${3:-}" "${4:-}" ;;
  *) echo "usage: $0 build TARGET | package TARGET [BINARY] [OUT]" >&2; exit 2 ;;
esac
