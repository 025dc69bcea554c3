#!/usr/bin/env bash
# Instructions the gateway executes per request, counted by callgrind: a
# figure that does not move with the machine's load (docs/benchmarks.md,
# "Instructions per request"). Wall-clock figures on a shared 2-core machine
# swing by 2x; this one repeats to within a fraction of a percent.
#
#   bench/instructions.sh [SCENARIO ...]    default: every gateway scenario
#                                           of bench/run.sh (primary-openai-json,
#                                           primary-anthropic-stream, custom-openai-json, ...)
#                                           and vendor-openai-tools-stream (counted here
#                                           only, in proxy mode: an OpenAI client
#                                           streaming from messages_vendor)
#   bench/instructions.sh --full [SCENARIO ...]   the same in full deployment (a
#                                           signed-in user's key, their own accounts,
#                                           usage written to SQLite)
#   bench/instructions.sh --full --limited redis://127.0.0.1:6379 [SCENARIO ...]
#                                           full deployment with a key whose budget
#                                           and rate limits are checked (never reached)
#                                           in that Redis
#   bench/instructions.sh --components [--keep DIR] [...]   then each scenario's
#                                           figure by component (server, auth, parse,
#                                           convert, upstream client, ...); DIR keeps the
#                                           callgrind files for `python3 -m
#                                           harness.components DIR` (run in bench/)
#
# Each scenario runs the release gateway under callgrind twice, serving 200
# and 1,200 requests on 16 kept-alive connections (proxy mode, LOG_LEVEL=info
# as shipped, the simulator and scenarios of bench/run.sh's harness), and
# prints the difference / 1,000: start-up and warm-up cancel out. Needs
# valgrind (installed from Debian's packages if missing) and the release
# binaries (built if missing; CARGO_TARGET_DIR as scripts/test). About a
# minute per scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/gateway-target}"
bin="$CARGO_TARGET_DIR/release"

command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
[ -x "$bin/gateway" ] && [ -x "$bin/upstream-sim" ] || cargo build --release --bin gateway --bin upstream-sim

cd bench
exec python3 -m harness.instructions --bin-dir "$bin" "$@"
