"""Instructions the gateway executes per request, counted by callgrind
(`bench/instructions.sh`; docs/benchmarks.md, "Instructions per request").

The gateway runs under callgrind twice per scenario, serving 200 and 1,200
requests on 16 kept-alive connections; the difference / 1,000 cancels
start-up and warm-up. The simulator, the gateway's environment and the
scenarios are the benchmark harness's own (`__main__`, `scenarios`).
With `--full` the gateway runs in full deployment instead, set up as the
benchmark's full mode does (`fullmode`: a signed-in admin's API key, their
own `primary` credentials and `custom` account, usage written to SQLite),
so full mode's cost per request is a figure this shared machine cannot blur.
`--full --limited REDIS_URL` gives that key a budget and rate limits it
never reaches, counted in that Redis: what enforcing limits costs.
`--full --guarded` turns guardrails on with one rule that matches no
request: what evaluating rules costs when none applies.
`--components` then splits each scenario's figure by component
(`components`: server, auth, parse, convert, upstream client, ...).
"""

import argparse
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from urllib.parse import urlsplit

from . import __main__ as bench
from . import components, fullmode, procs, scenarios

CONNECTIONS = 16
FEW, MANY = 200, 1200
# A key whose limits are checked on every request and never reached: a
# daily budget, requests and tokens per minute.
LIMITED_KEY = {"budget_usd": 1e6, "budget_period": "daily",
               "rpm_limit": 1_000_000_000, "tpm_limit": 1_000_000_000}


class Callgrind:
    """Stands in for `procs.Cores`: the relay runs under callgrind, on one
    core as `bench/run.sh` runs it (so it picks the same runtime: one core,
    Tokio's current-thread scheduler), the simulator as it is."""

    load, relay = "sim", "relay"

    def __init__(self, out_file, options=()):
        self.out_file = out_file
        self.options = list(options)

    def wrap(self, cmd, core):
        if core != self.relay:
            return list(cmd)
        pin = [taskset, "-c", "0"] if (taskset := shutil.which("taskset")) else []
        return [*pin, "valgrind", "--tool=callgrind", f"--callgrind-out-file={self.out_file}",
                *self.options, *cmd]


def send(base, spec, n, connections=CONNECTIONS):
    """`n` requests of `spec` on `connections` kept-alive connections; every
    answer must be 200."""
    kind, path, body, _expect = spec
    headers = bench.headers(kind)
    url = urlsplit(base)
    left, lock, bad = [n], threading.Lock(), []

    def worker():
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            conn.request("POST", path, body, headers)
            answer = conn.getresponse()
            answer.read()
            if answer.status != 200:
                bad.append(answer.status)

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if bad:
        raise SystemExit(f"{len(bad)} answers were not 200: {bad[:5]}")


def total(out_file):
    """The program total of a callgrind output file, less the start-up
    calibration of `quanta` (the metrics exporter's clock): it loops for a
    fixed time, not a fixed amount of work, so its count differs from run to
    run (by up to a few million instructions, a few thousand a request in
    the difference) and says nothing about requests."""
    # Every function (`--threshold=100`): by default the list stops once 99 %
    # of the total is shown, and the calibration's smaller entries with it.
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no",
                           "--threshold=100", out_file],
                          capture_output=True, text=True, check=True).stdout
    program, calibration, lazy_clock, quanta_inlined = None, 0, 0, False
    for line in text.splitlines():
        fields = line.split()
        if not fields or not fields[0][0].isdigit():
            continue
        cost = int(fields[0].replace(",", ""))
        if "PROGRAM TOTALS" in line:
            program = cost
        elif re.search(r":quanta::Calibration::calibrate( \[|$)", line):
            # Listed once per source file its inlined lines come from, each
            # entry with the function's whole inclusive cost: take one.
            calibration = max(calibration, cost)
        elif re.search(r":once_cell::imp::OnceCell<T>::initialize::\{\{closure\}\}( \[|$)", line):
            # Built as one optimisation unit (fat LTO), the calibration is
            # inlined into the lazy initialiser of quanta's clock: a
            # `once_cell` closure listed per source file, its own file's
            # entry with the whole inclusive cost (the largest), quanta's
            # files among the others. Other lazy initialisers share the
            # name; they run once per process too, so leaving them out with
            # it changes no difference between two counts.
            lazy_clock = max(lazy_clock, cost)
            quanta_inlined = quanta_inlined or "/quanta-" in line
    if program is None:
        raise SystemExit(f"no total in {out_file}")
    if quanta_inlined:
        calibration = max(calibration, lazy_clock)
    return program - calibration


def run(args, rundir, sim_base, oidc_base, scenario, n, callgrind_options=(),
        after_start_only=False, connections=CONNECTIONS):
    """Serves `n` requests of `scenario` on `connections` connections with
    the gateway under callgrind; returns the output file's path. With
    `after_start_only`, callgrind counts nothing until the gateway answers
    its health check."""
    spec = scenario.gateway
    out_file = os.path.join(rundir, f"callgrind.{n}")
    options = [*callgrind_options, *(["--instr-atstart=no"] if after_start_only else [])]
    callgrind = Callgrind(out_file, options)
    if args.full:
        # A fresh store each time: both counts do the same set-up.
        shutil.rmtree(os.path.join(rundir, "gateway-full-data"), ignore_errors=True)
        gw, base, key = fullmode.start(os.path.join(args.bin_dir, "gateway"),
                                       callgrind, rundir, sim_base, oidc_base,
                                       (sim_base + "/custom/v1", bench.custom_key()),
                                       redis_url=args.limited,
                                       key_rules=LIMITED_KEY if args.limited else None,
                                       guarded=args.guarded)
        bench.FULL_MODE["key"] = key
        kind, path, body, expect = spec
        spec = (kind.replace("gateway_", "full_"), path, body, expect)
    else:
        gw, base = bench.start_gateway(args, callgrind, rundir, sim_base,
                                       oidc_base, "/custom/v1", scenario.gateway_env)
    try:
        if after_start_only:
            subprocess.run(["callgrind_control", "--instr=on", str(gw.pid)],
                           capture_output=True, check=True)
        send(base, spec, n, connections)
    finally:
        gw.stop(grace=60)
    return out_file


def count(args, rundir, sim_base, oidc_base, scenario, n):
    """The instructions of serving `n` requests of `scenario` ([`total`])."""
    return total(run(args, rundir, sim_base, oidc_base, scenario, n))


def scenario_table():
    """({name: scenario} of every scenario counted here, the names that
    run in proxy mode only): full mode sets up a user's `primary` and
    `custom` accounts only."""
    known = {s.name: s for s in scenarios.primary_scenarios()
             + scenarios.custom_scenarios("/custom/v1") + scenarios.vendor_scenarios()}
    return known, {s.name for s in scenarios.vendor_scenarios()}


def keep(rundir, to, name):
    os.makedirs(to, exist_ok=True)
    for n in (FEW, MANY):
        shutil.copyfile(os.path.join(rundir, f"callgrind.{n}"),
                        os.path.join(to, f"callgrind.{name}.{n}"))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--bin-dir", required=True, help="folder with gateway and upstream-sim")
    ap.add_argument("--keep", metavar="DIR",
                    help="keep the callgrind output files in DIR (callgrind.<scenario>.<n>), "
                         "to read with callgrind_annotate")
    ap.add_argument("--full", action="store_true",
                    help="the gateway in full deployment (per-user key, accounts, usage)")
    ap.add_argument("--limited", metavar="REDIS_URL",
                    help="with --full: the key has a budget and rate limits (never reached), "
                         "counted in the Redis at REDIS_URL")
    ap.add_argument("--guarded", action="store_true",
                    help="with --full: guardrails on, with a rule that matches no request "
                         "(the cost of evaluating it)")
    ap.add_argument("--components", action="store_true",
                    help="then print each scenario's instructions per request by component "
                         "(harness.components; the callgrind files go to --keep DIR if given)")
    ap.add_argument("scenarios", nargs="*", help="scenario names (default: all)")
    args = ap.parse_args()
    known, proxy_only = scenario_table()
    names = args.scenarios or [n for n in known if not (args.full and n in proxy_only)]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown scenarios {unknown}; known: {', '.join(known)}")
    if args.full and proxy_only & set(names):
        raise SystemExit(f"{sorted(proxy_only & set(names))}: proxy mode only")
    with tempfile.TemporaryDirectory(prefix="gateway-instructions-") as rundir:
        kept = args.keep or (os.path.join(rundir, "kept") if args.components else None)
        sim, sim_base, oidc_base = bench.start_sim(args, procs.Cores(), rundir)
        try:
            print(f"{'scenario':32} instructions/request (start-up clock calibration left out)",
                  flush=True)
            for name in names:
                few = count(args, rundir, sim_base, oidc_base, known[name], FEW)
                many = count(args, rundir, sim_base, oidc_base, known[name], MANY)
                print(f"{name:32} {(many - few) // (MANY - FEW)}", flush=True)
                if kept:
                    keep(rundir, kept, name)
        finally:
            sim.stop()
        if args.components:
            print()
            print(components.table(components.measure(kept, names)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
