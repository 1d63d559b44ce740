#!/usr/bin/env bash
# Install what the interop tests need beyond the Python venv:
#   * the npm clients pinned in interop/js/package-lock.json (kafkajs, @platformatic/kafka),
#     via `npm ci`, only when interop/js/node_modules is missing or older than the lock;
#   * kcat from Debian (librdkafka 2.0.2 on Debian 12), when running as root and kcat is missing;
#   * chromium from Debian, when running as root and it is missing: interop/test_timeline_page.py
#     drives it headless through the `playwright` package (test extra) with executable_path, so
#     playwright's own browser download is never used.
# Idempotent and quiet on success; on failure it prints the captured output and exits non-zero.
# The Python clients come from pyproject.toml's `test` extra (pip install -e '.[test]').
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
js="$repo/interop/js"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

die() {
    echo "install_test_deps: $*" >&2
    if [[ -s "$log" ]]; then
        echo "---- output ----" >&2
        cat "$log" >&2
    fi
    exit 1
}

# Run a command with its output captured; show the output only if it fails.
quietly() {
    "$@" >"$log" 2>&1 || die "failed: $*"
    : >"$log"
}

# --- npm clients --------------------------------------------------------------------------
command -v node >/dev/null || die "node is not installed (the interop tests need Node.js >= 20)"
command -v npm >/dev/null || die "npm is not installed"
[[ -f "$js/package-lock.json" ]] || die "missing $js/package-lock.json"
# npm ci deletes and recreates node_modules, so touch it afterwards: its mtime then marks the
# lock it was installed from.
if [[ ! -d "$js/node_modules" || "$js/package-lock.json" -nt "$js/node_modules" ]]; then
    (cd "$js" && quietly npm ci --no-audit --no-fund --loglevel=error)
    touch "$js/node_modules"
fi

# --- Debian packages: kcat, chromium ------------------------------------------------------
apt_updated=""
apt_install() {  # apt_install COMMAND PACKAGE: install PACKAGE unless COMMAND is on PATH
    command -v "$1" >/dev/null && return 0
    if [[ "$(id -u)" -ne 0 ]]; then
        die "$1 is not installed and this is not root: run 'apt-get install -y $2' as root"
    fi
    export DEBIAN_FRONTEND=noninteractive
    if [[ -z "$apt_updated" ]]; then
        quietly apt-get update
        apt_updated=1
    fi
    quietly apt-get install -y --no-install-recommends "$2"
    command -v "$1" >/dev/null || die "apt-get installed $2 but $1 is not on PATH"
}
apt_install kcat kcat
apt_install chromium chromium
