#!/usr/bin/env bash
# The GitHub Action's logic (action.yml runs it; tests/ci.rs runs it locally with a fake GITHUB_*
# environment). Inputs arrive as environment variables, never spliced into the script.
#
#   kvlint-action.sh install   put kvlint on PATH: the release binary of the `version:` input for
#                              this runner, checked against its SHA-256, else `cargo install
#                              --locked --profile dist` from the action's own ref
#   kvlint-action.sh run       run `kvlint check`, annotate, write the summary and the outputs
set -euo pipefail

action_dir="${GITHUB_ACTION_PATH:-$(cd "$(dirname "$0")/.." && pwd)}"

# The release target triple of this runner, or nothing. Linux builds are static (musl), so one
# archive serves every distribution.
target() {
  case "${RUNNER_OS:-$(uname -s)}/${RUNNER_ARCH:-$(uname -m)}" in
    Linux/X64 | Linux/x86_64) echo x86_64-unknown-linux-musl ;;
    Linux/ARM64 | Linux/aarch64) echo aarch64-unknown-linux-musl ;;
    macOS/ARM64 | Darwin/arm64) echo aarch64-apple-darwin ;;
    macOS/X64 | Darwin/x86_64) echo x86_64-apple-darwin ;;
    *) ;;
  esac
}

add_path() {
  if [ -n "${GITHUB_PATH:-}" ]; then echo "$1" >>"$GITHUB_PATH"; fi
  export PATH="$1:$PATH"
}

# The release to install: the `version:` input, else the action's own version (Cargo.toml).
version() {
  local v="${INPUT_VERSION:-}"
  if [ -z "$v" ]; then
    v=$(sed -n 's/^version = "\(.*\)"$/\1/p' "$action_dir/Cargo.toml" | head -n1)
  fi
  echo "${v#v}"
}

# Downloads the release archive (as .github/workflows/release.yml names it) and checks it against
# its published SHA-256. KVLINT_RELEASE_URL replaces `<repository>/releases/download` (a mirror).
install_release() {
  local version base triple url tmp
  version=$(version)
  base="${KVLINT_RELEASE_URL:-$(sed -n 's/^repository = "\(.*\)"$/\1/p' "$action_dir/Cargo.toml" | head -n1)/releases/download}"
  triple=$(target)
  [ -n "$version" ] && [ -n "$triple" ] || return 1
  command -v curl >/dev/null && command -v sha256sum >/dev/null || return 1
  url="$base/v$version/kvlint-$triple.tar.gz"
  tmp=$(mktemp -d)
  curl -fsSL --retry 2 --max-time 60 "$url" -o "$tmp/kvlint.tar.gz" || return 1
  curl -fsSL --retry 2 --max-time 30 "$url.sha256" -o "$tmp/kvlint.tar.gz.sha256" || return 1
  if ! (cd "$tmp" && echo "$(cut -d' ' -f1 kvlint.tar.gz.sha256)  kvlint.tar.gz" | sha256sum -c --quiet); then
    echo "::error::kvlint-$triple.tar.gz does not match its published SHA-256" >&2
    exit 1
  fi
  mkdir -p "$tmp/bin" && tar -xzf "$tmp/kvlint.tar.gz" -C "$tmp/bin" || return 1
  [ -x "$tmp/bin/kvlint" ] || return 1
  add_path "$tmp/bin"
  echo "kvlint $version: release binary for $triple, SHA-256 checked"
}

install() {
  if command -v kvlint >/dev/null; then
    echo "kvlint already installed: $(kvlint --version)"
    return
  fi
  if install_release; then return; fi
  echo "no release binary of kvlint $(version) for this runner: building it from the action's own ref"
  local root="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/kvlint"
  cargo install --locked --profile dist --path "$action_dir" --root "$root"
  add_path "$root/bin"
}

run() {
  cd "${GITHUB_WORKSPACE:-.}"
  local args=(check --format github)
  if [ -n "${INPUT_SARIF:-}" ]; then
    mkdir -p "$(dirname "$INPUT_SARIF")"
    args+=(--format sarif --output "$INPUT_SARIF")
  fi
  if [ -n "${INPUT_CONFIG:-}" ]; then args+=(--config "$INPUT_CONFIG"); fi
  if [ -n "${INPUT_GPU:-}" ]; then args+=(--gpu "$INPUT_GPU"); fi
  if [ -n "${INPUT_FAIL_ON:-}" ]; then args+=(--fail-on "$INPUT_FAIL_ON"); fi
  # Paths are separated by whitespace or newlines and not globbed here.
  local paths=()
  set -f
  # shellcheck disable=SC2206
  paths=(${INPUT_PATHS:-.})
  set +f
  args+=(-- "${paths[@]}")
  local summary_env=()
  if [ "${INPUT_SUMMARY:-true}" != "true" ]; then summary_env=(-u GITHUB_STEP_SUMMARY); fi

  local annotations code
  annotations=$(mktemp)
  set +e
  env ${summary_env[@]+"${summary_env[@]}"} kvlint "${args[@]}" | tee "$annotations"
  code=${PIPESTATUS[0]}
  set -e
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "findings=$(grep -cE '^::(error|warning) ' "$annotations" || true)" >>"$GITHUB_OUTPUT"
    echo "sarif-file=${INPUT_SARIF:-}" >>"$GITHUB_OUTPUT"
  fi
  rm -f "$annotations"
  return "$code"
}

case "${1:-}" in
  install) install ;;
  run) run ;;
  *) echo "usage: $0 install|run" >&2; exit 2 ;;
esac
