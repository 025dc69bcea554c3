#!/usr/bin/env bash
# The list of functions the gateway runs once started, which the release
# link lays out together (crates/gateway/hot-code.txt; docs/decisions.md,
# "Hot code laid out together").
#
#   bench/hot-code.sh            regenerate crates/gateway/hot-code.txt
#   bench/hot-code.sh --check    how many of its functions the release
#                                gateway lays out in .text.hot (fails
#                                below 80 %)
#
# Regenerating runs the release gateway under callgrind over every scenario
# of bench/instructions.sh, in proxy mode and in full deployment, 1,200
# requests each on 64 connections, counting from the moment it answers its
# health check (about two minutes), and lists what ran, costliest first. Needs valgrind
# (installed from Debian's packages if missing) and the release binaries
# (built if missing, as scripts/e2e builds them; CARGO_TARGET_DIR as
# scripts/test). The list is read at link time: rebuild the release binary
# afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/gateway-target}"
bin="$CARGO_TARGET_DIR/release"
list="$PWD/crates/gateway/hot-code.txt"

[ -x "$bin/gateway" ] && [ -x "$bin/upstream-sim" ] || cargo build --release --locked --bin gateway --bin upstream-sim
cd bench
if [ "${1:-}" = "--check" ]; then
  exec python3 -m harness.hotcode --bin-dir "$bin" --check "$list"
fi
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
exec python3 -m harness.hotcode --bin-dir "$bin" --out "$list"
