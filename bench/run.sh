#!/usr/bin/env bash
# The service benchmark (issue 7; docs/benchmarks.md): the gateway against the
# physical limit (the simulator measured directly) and against LiteLLM's proxy,
# in one run, printed as one table and written to bench/out/.
#
#   bench/run.sh            full run: 10 s per measurement, concurrency 1/16/64,
#                           proxy mode, the primary scenarios again in full
#                           mode (API keys, usage in SQLite), LiteLLM, 1,000
#                           open streams, 5,000 idle kept-alive connections
#                           (about 13 minutes)
#   bench/run.sh --quick    the same with 3 s per measurement
#   bench/run.sh --smoke    2 s per measurement, concurrency 1/16, one full-mode
#                           scenario, 50 open streams, 100 idle connections,
#                           no LiteLLM, debug binaries: proves the harness
#                           works (scripts/test runs it); its figures mean
#                           nothing
#   bench/run.sh --only open-streams      the 1,000 open streams alone
#   bench/run.sh --only idle-connections  the 5,000 idle connections alone
#
# Options: --seconds N (per measurement), --only TEXT (scenarios whose name
# contains TEXT), --no-litellm, --no-build (use the binaries already built).
# Environment: CARGO_TARGET_DIR (as scripts/test), BENCH_PROFILE (release;
# smoke: dev), BENCH_VENV (LiteLLM's virtual environment, default
# ~/.cache/gateway-bench/venv), BENCH_LITELLM_VERSION, BENCH_GATEWAY_LOG_LEVEL
# (the gateway's LOG_LEVEL, default info as shipped).
#
# It installs what it needs: wrk (Debian package), taskset (util-linux) and,
# in full and quick mode, LiteLLM's proxy from PyPI into a virtual environment.
# Exit status 1 only when the harness or a relay is broken, never because of a
# figure.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=full
build=1
use_litellm=1
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) mode=smoke ;;
    --quick) mode=quick ;;
    --full) mode=full ;;
    --seconds) extra+=(--seconds "$2"); shift ;;
    --only) extra+=(--only "$2"); shift ;;
    --no-litellm) use_litellm=0 ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "$mode" = smoke ] && use_litellm=0

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/gateway-target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
if [ "$mode" = smoke ]; then profile="${BENCH_PROFILE:-dev}"; else profile="${BENCH_PROFILE:-release}"; fi
venv="${BENCH_VENV:-$HOME/.cache/gateway-bench/venv}"
litellm_version="${BENCH_LITELLM_VERSION:-1.106.2}"

say() { echo "[bench] $*"; }

# ---- tools
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else return 1; fi; }
apt_updated=0
apt_install() {
  if ! command -v apt-get >/dev/null; then
    say "cannot install $* (no apt-get): install it by hand"; return 1
  fi
  if [ "$apt_updated" = 0 ]; then
    as_root apt-get update -qq >/dev/null && apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}
for need in python3 curl; do
  command -v "$need" >/dev/null || { say "$need is required"; exit 1; }
done
if ! command -v wrk >/dev/null; then
  say "installing wrk (Debian package)"
  apt_install wrk || { say "could not install wrk"; exit 1; }
fi
if ! command -v taskset >/dev/null; then
  say "installing taskset (util-linux)"
  apt_install util-linux || say "no taskset: processes will not be pinned to cores"
fi

litellm_exe=""
if [ "$use_litellm" = 1 ]; then
  if [ ! -x "$venv/bin/litellm" ] || ! "$venv/bin/python" -c \
      "import importlib.metadata as m, sys; sys.exit(m.version('litellm') != '$litellm_version')" 2>/dev/null; then
    say "installing LiteLLM's proxy $litellm_version from PyPI into $venv"
    if python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check \
        "litellm[proxy]==$litellm_version"; then :; else
      say "LiteLLM could not be installed: its column stays empty"
    fi
  fi
  [ -x "$venv/bin/litellm" ] && litellm_exe="$venv/bin/litellm"
fi

# ---- binaries
if [ "$profile" = dev ]; then bin_dir="$CARGO_TARGET_DIR/debug"; else bin_dir="$CARGO_TARGET_DIR/$profile"; fi
if [ "$build" = 1 ]; then
  if [ "$profile" = dev ]; then
    # The same build as scripts/test's test run (so nothing is rebuilt there);
    # it places both binaries in $CARGO_TARGET_DIR/debug.
    say "building (dev profile, as the test suite builds)"
    cargo build --workspace --tests --locked --quiet
  else
    say "building gateway and upstream-sim ($profile profile)"
    cargo build --profile "$profile" --locked --quiet --bin gateway --bin upstream-sim
  fi
fi
for b in gateway upstream-sim; do
  [ -x "$bin_dir/$b" ] || { say "missing $bin_dir/$b (run without --no-build)"; exit 1; }
done

# 1,000 open streams need about 3,000 descriptors across the processes, and
# 5,000 idle connections 10,000 (both ends are on this machine).
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

exec env PYTHONPATH="$PWD/bench" PYTHONDONTWRITEBYTECODE=1 python3 -m harness \
  --mode "$mode" --bin-dir "$bin_dir" --profile "$profile" --litellm "$litellm_exe" \
  ${extra[@]+"${extra[@]}"}
