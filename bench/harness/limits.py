"""What enforcing a key's limits costs (`bench/limits.sh`; docs/benchmarks.md,
"Limits"): two full-mode gateways side by side on the same simulator, one
whose API key has no limits, one whose key has a budget and requests and
tokens per minute (never reached) counted in Redis, measured in turn with
wrk on the same scenario (three rounds each, alternating, so drift of this
shared machine hits both alike). Reports requests per second and CPU
milliseconds per request of each, and the ratio.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

from . import __main__ as bench
from . import fullmode, loadgen, procs, scenarios
from .instructions import LIMITED_KEY


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin-dir", required=True, help="folder with gateway and upstream-sim")
    ap.add_argument("--redis-url", default=os.environ.get("BENCH_REDIS_URL",
                                                          "redis://127.0.0.1:6379"))
    ap.add_argument("--scenario", default="primary-openai-json")
    ap.add_argument("--conns", type=int, default=16)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    known = {s.name: s for s in scenarios.primary_scenarios()}
    if args.scenario not in known:
        raise SystemExit(f"unknown scenario; known: {', '.join(known)}")
    kind, path, body, expect = known[args.scenario].gateway
    cores = procs.Cores()
    with tempfile.TemporaryDirectory(prefix="gateway-limits-") as rundir:
        sim, sim_base, oidc_base = bench.start_sim(args, cores, rundir)
        gateways = {}
        try:
            for name, redis, rules in (("unlimited", None, None),
                                       ("limited", args.redis_url, LIMITED_KEY)):
                sub = os.path.join(rundir, name)
                os.makedirs(sub)
                gw, base, key = fullmode.start(os.path.join(args.bin_dir, "gateway"), cores,
                                               sub, sim_base, oidc_base, redis_url=redis,
                                               key_rules=rules)
                headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
                gateways[name] = (gw, loadgen.Target(base + path, body, headers))
            # Warm both, and check the limited one answers with its headers.
            for name, (gw, target) in gateways.items():
                status, answer_headers, _ = loadgen.fetch(target)
                if status != 200:
                    raise SystemExit(f"{name}: status {status}")
                limited = "x-ratelimit-limit-requests" in {h.lower() for h in answer_headers}
                if limited != (name == "limited"):
                    raise SystemExit(f"{name}: rate-limit headers {'missing' if not limited else 'present'}")
                loadgen.run_wrk(target, args.conns, 2, cores, rundir)
            results = {name: [] for name in gateways}
            for _ in range(args.rounds):
                for name, (gw, target) in gateways.items():
                    results[name].append(loadgen.run_wrk(target, args.conns, args.seconds, cores,
                                                         rundir, watch=gw))
                    time.sleep(0.5)
        finally:
            for gw, _ in gateways.values():
                gw.stop()
            sim.stop()
    print(f"{args.scenario}, {args.conns} connections, {args.rounds} x {args.seconds} s each")
    print(f"{'key':12} {'req/s (median)':>16} {'CPU ms/request':>16} {'p99 ms':>8}")
    summary = {}
    for name, runs in results.items():
        rps = statistics.median(r["rps"] for r in runs)
        cpu = statistics.median(r["cpu_s_per_1k"] for r in runs)
        p99 = statistics.median(r["p99_ms"] for r in runs)
        summary[name] = (rps, cpu)
        bad = sum(sum(r["errors"].values()) for r in runs)
        if bad:
            raise SystemExit(f"{name}: {bad} answers were errors or not 200: {runs[0]['errors']}")
        print(f"{name:12} {rps:16.0f} {cpu:16.4f} {p99:8.2f}")
    (u_rps, u_cpu), (l_rps, l_cpu) = summary["unlimited"], summary["limited"]
    print(f"limited / unlimited: throughput {l_rps / u_rps:.3f}, CPU per request {l_cpu / u_cpu:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
