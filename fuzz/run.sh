#!/usr/bin/env bash
# Coverage-guided fuzzing of the pure parsers (docs/testing.md, "Fuzzing").
#
#   fuzz/run.sh short [TARGET...]        every target ${FUZZ_SHORT_SECONDS:-5} s (the test command)
#   fuzz/run.sh long [SECONDS] [TARGET...]  every target SECONDS (default 600) s, one after the other
#   fuzz/run.sh list
#
# Runs on the machine's one stable toolchain: cargo-fuzz with
# `--sanitizer none` (the sanitizers need nightly; the code is
# `unsafe`-free, so they would add little). Installs cargo-fuzz when it is
# missing. The build, the growing corpora and any crash artifacts live in
# ${FUZZ_CACHE:-$HOME/.cache/gateway-fuzz}, outside the checkout; seeds are
# regenerated from the conformance fixtures on every run (fuzz/seeds.py).
# Prints one line per target: executions, seconds, corpus size. Exits
# non-zero on the first crash, naming the artifact to replay with
# `fuzz/run.sh replay TARGET ARTIFACT`.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
cache="${FUZZ_CACHE:-$HOME/.cache/gateway-fuzz}"
targets_all=(eventstream sse openai_request anthropic_request primary_events thinking native_watch provider_payloads cel_rules config_values ui_cookies)

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz" >&2
    cargo install --locked cargo-fuzz >&2
fi

mode="${1:-short}"
shift || true
case "$mode" in
    short) seconds="${FUZZ_SHORT_SECONDS:-5}" ;;
    long)
        seconds=600
        if [[ "${1:-}" =~ ^[0-9]+$ ]]; then seconds="$1"; shift; fi
        ;;
    list) printf '%s\n' "${targets_all[@]}"; exit 0 ;;
    replay)
        target="$1"; artifact="$2"
        cd "$root"
        exec cargo fuzz run --sanitizer none --target-dir "$cache/target" "$target" "$artifact"
        ;;
    *) echo "usage: fuzz/run.sh short|long [SECONDS]|list|replay [TARGET...]" >&2; exit 2 ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${targets_all[@]}")

mkdir -p "$cache/seeds" "$cache/corpus" "$cache/artifacts" "$cache/logs"
python3 "$here/seeds.py" "$cache/seeds" >/dev/null

cd "$root"
cargo fuzz build --sanitizer none --target-dir "$cache/target" >&2
bin="$cache/target/$(rustc -vV | sed -n 's/^host: //p')/release"

status=0
for target in "${targets[@]}"; do
    corpus="$cache/corpus/$target"
    seeds="$cache/seeds/$target"
    mkdir -p "$corpus" "$seeds" "$cache/artifacts/$target"
    dict=()
    [ -f "$cache/seeds/$target.dict" ] && dict=("-dict=$cache/seeds/$target.dict")
    log="$cache/logs/$target-$(date +%Y%m%dT%H%M%S).log"
    # The binary itself, as `cargo fuzz run` would start it after building.
    if "$bin/$target" "$corpus" "$seeds" \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$cache/artifacts/$target/" "${dict[@]}" >"$log" 2>&1; then
        runs="$(grep -Eo 'Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1 | awk '{print $2" execs in "$5" s"}')"
        size="$(find "$corpus" -type f | wc -l)"
        echo "fuzz $target: ${runs:-?}, corpus $size inputs"
    else
        status=1
        echo "fuzz $target: FAILED (log $log)"
        grep -E 'panicked|Test unit written|SUMMARY|ERROR' "$log" | head -5 || true
    fi
done
exit "$status"
