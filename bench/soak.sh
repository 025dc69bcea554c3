#!/usr/bin/env bash
# The soak (issue 19; docs/reliability.md, "Soak"): the release gateway in
# full mode on PostgreSQL, with the simulator behind it, under mixed traffic
# at a steady rate; its RSS, descriptors, threads and database connections
# sampled; a verdict on growth. Written to bench/out/soak-*/.
#
#   bench/soak.sh                  3 minutes at 100 req/s (the test command's run)
#   bench/soak.sh --minutes 30 --rate 200
#   bench/soak.sh --requests 1000000 --store sqlite
#                                  full speed (wrk) instead of a rate: RSS read
#                                  every 100,000 requests served (issue 20;
#                                  harness/requests_rss.py), bench/out/rss-*/
#
# Options: --minutes N, --rate R (requests per second), --every S (seconds
# between samples), --requests N (with --step N, --conns C, --bound F,
# --log-level L), --store postgres|sqlite (default postgres), --no-build (use
# the binaries already built), --bin-dir DIR (the binaries in DIR; no build).
# Environment: CARGO_TARGET_DIR (as scripts/test), SOAK_PROFILE (release).
# Needs PostgreSQL on 127.0.0.1:5432 with trust auth for user postgres (a
# scratch database is created and dropped); exit status 2 without it.
# Exit status 1 when the harness breaks or growth passes the documented bounds.
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
store=postgres
module=harness.soak
bin_dir=
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes|--rate|--every|--step|--conns|--bound|--log-level) extra+=("$1" "$2"); shift ;;
    --requests) module=harness.requests_rss; extra+=("$1" "$2"); shift ;;
    --store) store="$2"; shift ;;
    --no-build) build=0 ;;
    --bin-dir) bin_dir="$2"; build=0; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/soak.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/gateway-target}"
profile="${SOAK_PROFILE:-release}"
if [ -z "$bin_dir" ]; then
  bin_dir="$CARGO_TARGET_DIR/$profile"
  [ "$profile" = dev ] && bin_dir="$CARGO_TARGET_DIR/debug"
fi

command -v python3 >/dev/null || { echo "[soak] python3 is required" >&2; exit 2; }
if [ "$store" = postgres ]; then
  if ! command -v psql >/dev/null || ! command -v pg_isready >/dev/null; then
    echo "[soak] psql and pg_isready are required (PostgreSQL client)" >&2
    exit 2
  fi
  if ! pg_isready -h 127.0.0.1 -p 5432 -q; then
    echo "[soak] PostgreSQL does not answer on 127.0.0.1:5432" >&2
    exit 2
  fi
fi
if [ "$build" = 1 ]; then
  echo "[soak] building gateway and upstream-sim ($profile profile)"
  cargo build --profile "$profile" --locked --quiet --bin gateway --bin upstream-sim
fi
for b in gateway upstream-sim; do
  [ -x "$bin_dir/$b" ] || { echo "[soak] missing $bin_dir/$b" >&2; exit 1; }
done
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

if [ "$module" = harness.requests_rss ] && ! command -v wrk >/dev/null; then
  echo "[soak] wrk is required for --requests (bench/run.sh installs it)" >&2
  exit 2
fi
exec env PYTHONPATH="$PWD/bench" PYTHONDONTWRITEBYTECODE=1 python3 -m "$module" \
  --bin-dir "$bin_dir" --store "$store" ${extra[@]+"${extra[@]}"}
