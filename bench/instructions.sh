#!/usr/bin/env bash
# Instructions the gateway executes per request, counted by callgrind: a
# figure that does not move with the machine's load (docs/benchmarks.md,
# "Instructions per request"). Wall-clock figures on a shared 2-core machine
# swing by 2x; this one repeats to within a fraction of a percent.
#
#   bench/instructions.sh [SCENARIO ...]    default: all four below
#
# Scenarios: primary-json, primary-stream (chat completions through primary,
# non-streaming / 20-chunk stream), messages-stream (Anthropic client through
# primary), custom-json (chat completions passed through to custom).
#
# Each scenario runs the release gateway under callgrind twice, serving 200
# and 1,200 requests (16 concurrent keep-alive connections, proxy mode,
# LOG_LEVEL=info as shipped) against upstream-sim, and prints the difference
# / 1,000: start-up and warm-up cancel out. Needs valgrind (installed from
# Debian's packages if missing) and the release binaries (built if missing;
# CARGO_TARGET_DIR as scripts/test). About a minute per scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/gateway-target}"
bin="$CARGO_TARGET_DIR/release"
scenarios=("$@")
[ ${#scenarios[@]} -eq 0 ] && scenarios=(primary-json primary-stream messages-stream custom-json)

command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }
[ -x "$bin/gateway" ] && [ -x "$bin/upstream-sim" ] || cargo build --release --bin gateway --bin upstream-sim

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
sim_port=$(port); oidc_port=$(port)
"$bin/upstream-sim" --port "$sim_port" --oidc-port "$oidc_port" --accept-any-token --record-limit 0 \
  --default-scenario "text len=400 chunk=20" --seed-client-id bench-client \
  --seed-client-secret bench-client-secret --seed-refresh-token bench-refresh-token \
  >"$work/sim.log" 2>&1 &

# One gateway run under callgrind serving $2 requests of scenario $1; prints the total.
count() {
  local scenario=$1 n=$2 gw_port data
  gw_port=$(port); data="$work/data-$n"
  mkdir -p "$data"
  echo '{"client_id":"bench-client","client_secret":"bench-client-secret","refresh_token":"bench-refresh-token"}' >"$data/tokens.json"
  chmod 600 "$data/tokens.json"
  env -i PATH="$PATH" GATEWAY_MODE=proxy PROXY_API_KEY=bench-proxy-key DATA_DIR="$data" \
    UPSTREAM_API_ENDPOINT="http://127.0.0.1:$sim_port" UPSTREAM_OIDC_ENDPOINT="http://127.0.0.1:$oidc_port" \
    CUSTOM_BASE_URL="http://127.0.0.1:$sim_port/custom/v1" CUSTOM_API_KEY=sk-custom-sim \
    SERVER_HOST=127.0.0.1 SERVER_PORT="$gw_port" LOG_LEVEL=info LOG_FORMAT=text \
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.$n" "$bin/gateway" >"$work/gw.log" 2>&1 &
  local pid=$!
  local ok=1
  python3 - "$scenario" "$n" "$gw_port" <<'EOF' || ok=0
import http.client, json, sys, threading, time
scenario, n, port = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for _ in range(600):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2); c.request("GET", "/health")
        if c.getresponse().status == 200: break
    except OSError: time.sleep(0.1)
user = {"role": "user", "content": "Hello\nsim: text len=400 chunk=20"}
path, body = "/v1/chat/completions", {"model": "claude-sonnet-4.5", "messages": [user]}
if scenario == "primary-stream": body["stream"] = True
elif scenario == "messages-stream":
    path, body = "/v1/messages", {"model": "claude-sonnet-4-5", "max_tokens": 1024, "stream": True, "messages": [user]}
elif scenario == "custom-json": body["model"] = "custom/bench-model"
elif scenario != "primary-json": sys.exit(f"unknown scenario {scenario}")
data = json.dumps(body).encode()
headers = {"Content-Type": "application/json", "Authorization": "Bearer bench-proxy-key",
           "x-api-key": "bench-proxy-key", "anthropic-version": "2023-06-01"}
left, lock, bad = [n], threading.Lock(), []
def worker():
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    while True:
        with lock:
            if left[0] == 0: return
            left[0] -= 1
        conn.request("POST", path, data, headers); r = conn.getresponse(); r.read()
        if r.status != 200: bad.append(r.status)
threads = [threading.Thread(target=worker) for _ in range(16)]
[t.start() for t in threads]; [t.join() for t in threads]
if bad: sys.exit(f"{len(bad)} answers were not 200: {bad[:5]}")
EOF
  kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  [ "$ok" = 1 ] || { echo "bench/instructions.sh: scenario $scenario failed" >&2; exit 1; }
  callgrind_annotate "$work/cg.$n" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done {gsub(",", "", $1); print $1; done = 1}'
}

printf '%-16s %s\n' scenario "instructions/request"
for s in "${scenarios[@]}"; do
  a=$(count "$s" 200); b=$(count "$s" 1200)
  printf '%-16s %d\n' "$s" $(( (b - a) / 1000 ))
done
