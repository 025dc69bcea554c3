#!/usr/bin/env bash
# What enforcing a key's limits costs (docs/benchmarks.md, "Limits"): two
# full-mode gateways on the same simulator, one with an unlimited API key,
# one whose key has a budget and requests/tokens per minute (never reached)
# counted in Redis, measured in turn with wrk (three rounds each,
# alternating). Prints requests per second and CPU per request of each.
#
#   bench/limits.sh [--redis-url URL] [--scenario NAME] [--conns N] [--seconds N]
#
# Redis: BENCH_REDIS_URL or --redis-url (default redis://127.0.0.1:6379,
# the machine's). Needs wrk (installed from Debian's packages if missing)
# and the release binaries (built if missing; CARGO_TARGET_DIR as
# scripts/test). About two minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/gateway-target}"
bin="$CARGO_TARGET_DIR/release"

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
[ -x "$bin/gateway" ] && [ -x "$bin/upstream-sim" ] || cargo build --release --bin gateway --bin upstream-sim

cd bench
exec python3 -m harness.limits --bin-dir "$bin" "$@"
