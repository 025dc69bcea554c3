"""The benchmark harness behind bench/run.sh (which installs the tools and
builds the binaries first): starts the simulator, the gateway and LiteLLM,
checks every scenario answers correctly, measures each one directly and
through the relays, and writes one table.

    python3 -m harness --mode full|quick|smoke --bin-dir DIR [--litellm EXE]

Exit status: 0 when every measurement ran, 1 when the harness or a relay is
broken (a start-up failure, a wrong answer, non-2xx answers under load, no
request completed). Performance figures never fail a run."""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time

from . import fullmode, litellm, loadgen, procs, report, scenarios

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH_DIR)

PROXY_KEY = "bench-proxy-key"
SIM_TOKEN = "bench-upstream-token"
SEED = {"client_id": "bench-client", "client_secret": "bench-client-secret",
        "refresh_token": "bench-refresh-token"}

MODES = {
    # seconds per run, concurrencies, warm-up seconds, TTFB samples, open streams,
    # idle kept-alive connections held and for how long (past the default
    # 30 s header_read_timeout in full runs), and which scenarios also run
    # through a full-mode gateway (None: all it serves)
    "full": dict(seconds=10, conc=[1, 16, 64], warmup=2, ttfb=200, streams=1000, idle=5000,
                 idle_hold=35, full_mode=None),
    "quick": dict(seconds=3, conc=[1, 16, 64], warmup=1, ttfb=50, streams=1000, idle=5000,
                  idle_hold=35, full_mode=None),
    "smoke": dict(seconds=2, conc=[1, 16], warmup=0, ttfb=10, streams=50, idle=100,
                  idle_hold=1, full_mode=["primary-openai-json", "custom-openai-json"]),
}

# The API key of the full-mode gateway, once it has issued one.
FULL_MODE = {"key": None}


class Broken(Exception):
    """The harness or a relay does not work: the run fails."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def log(msg):
    print(f"[bench] {msg}", flush=True)


# ---------------------------------------------------------------- machine


def machine():
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem_kb = 0
    try:
        with open("/proc/meminfo") as f:
            mem_kb = int(f.readline().split()[1])
    except (OSError, ValueError, IndexError):
        pass
    commit = "unknown"
    try:
        commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        if dirty:
            commit += " (with uncommitted changes)"
    except (OSError, subprocess.SubprocessError):
        pass
    return {"cpu_model": cpu, "nproc": os.cpu_count(), "mem_gib": mem_kb / 1024 / 1024,
            "commit": commit or "unknown",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_before": loadavg()}


def loadavg():
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


# ---------------------------------------------------------------- processes


def start_sim(args, cores, rundir):
    port, oidc_port = procs.free_port(), procs.free_port()
    cmd = cores.wrap([os.path.join(args.bin_dir, "upstream-sim"),
                      "--port", str(port), "--oidc-port", str(oidc_port),
                      "--accept-any-token", "--record-limit", "0",
                      "--default-scenario", scenarios.TEXT,
                      "--seed-client-id", SEED["client_id"],
                      "--seed-client-secret", SEED["client_secret"],
                      "--seed-refresh-token", SEED["refresh_token"]], cores.load)
    env = {"PATH": os.environ.get("PATH", ""), "RUST_LOG": "warn"}
    sim = procs.Proc("upstream-sim", cmd, os.path.join(rundir, "upstream-sim.log"), env=env,
                     cwd=rundir)
    base = f"http://127.0.0.1:{port}"
    procs.wait_http(f"{base}/ListAvailableModels?origin=AI_EDITOR", sim, timeout=30,
                    headers={"Authorization": f"Bearer {SIM_TOKEN}"})
    return sim, base, f"http://127.0.0.1:{oidc_port}"


def probe_custom(sim_base):
    """The simulator's OpenAI-compatible `custom` endpoint, if it has one:
    (root path, key) or (None, reason)."""
    prefix = "/custom/v1"
    target = loadgen.Target(sim_base + prefix + "/chat/completions",
                            scenarios.openai_body(scenarios.CUSTOM_MODEL, scenarios.TEXT, False),
                            headers("custom"))
    try:
        status, _, body = loadgen.fetch(target, timeout=10)
    except OSError as e:
        return None, f"simulator's custom endpoint unreachable ({e})"
    if status == 200:
        return prefix, None
    return None, (f"the simulator has no OpenAI-compatible custom endpoint yet "
                  f"(POST {prefix}/chat/completions answered {status}: {body[:80]!r})")


def custom_key():
    return os.environ.get("BENCH_CUSTOM_KEY", "sk-custom-sim")


def start_gateway(args, cores, rundir, sim_base, oidc_base, custom_prefix, extra_env=None):
    data = os.path.join(rundir, "gateway-data")
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "tokens.json"), "w") as f:
        json.dump(SEED, f)
    os.chmod(os.path.join(data, "tokens.json"), 0o600)
    port = procs.free_port()
    # A clean environment (and a working directory without .env), so nothing
    # of the caller's shell changes what is measured.
    env = {
        "PATH": os.environ.get("PATH", ""),
        "GATEWAY_MODE": "proxy",
        "PROXY_API_KEY": PROXY_KEY,
        "DATA_DIR": data,
        "UPSTREAM_API_ENDPOINT": sim_base,
        "UPSTREAM_OIDC_ENDPOINT": oidc_base,
        "SERVER_HOST": "127.0.0.1",
        "SERVER_PORT": str(port),
        "LOG_LEVEL": os.environ.get("BENCH_GATEWAY_LOG_LEVEL", "info"),
        "LOG_FORMAT": "text",
    }
    if custom_prefix:
        env["CUSTOM_BASE_URL"] = sim_base + custom_prefix
        env["CUSTOM_API_KEY"] = custom_key()
    # Paths below the simulator's root (a scenario's `gateway_env`).
    env.update({k: sim_base + v[len("{sim}"):] if v.startswith("{sim}") else v
                for k, v in (extra_env or {}).items()})
    cmd = cores.wrap([os.path.join(args.bin_dir, "gateway")], cores.relay)
    gw = procs.Proc("gateway", cmd, os.path.join(rundir, "gateway.log"), env=env, cwd=rundir)
    base = f"http://127.0.0.1:{port}"
    procs.wait_http(f"{base}/health", gw, timeout=60)
    return gw, base


# ---------------------------------------------------------------- requests


def headers(kind):
    json_ct = {"Content-Type": "application/json"}
    if kind == "primary":
        return {**json_ct, "Authorization": f"Bearer {SIM_TOKEN}",
                "Accept": "application/vnd.amazon.eventstream"}
    if kind == "custom":
        return {**json_ct, "Authorization": f"Bearer {custom_key()}"}
    if kind == "gateway_openai":
        return {**json_ct, "Authorization": f"Bearer {PROXY_KEY}"}
    if kind == "gateway_anthropic":
        return {**json_ct, "x-api-key": PROXY_KEY, "anthropic-version": "2023-06-01"}
    if kind == "full_openai":
        return {**json_ct, "Authorization": f"Bearer {FULL_MODE['key']}"}
    if kind == "full_anthropic":
        return {**json_ct, "x-api-key": FULL_MODE["key"], "anthropic-version": "2023-06-01"}
    if kind == "litellm":
        return {**json_ct, "Authorization": f"Bearer {litellm.MASTER_KEY}",
                "anthropic-version": "2023-06-01"}
    raise ValueError(kind)


def target(base, spec):
    kind, path, body, _expect = spec
    return loadgen.Target(base + path, body, headers(kind))


def check(name, who, base, spec):
    """One request must answer 200 with every expected piece: else the
    harness measures the wrong thing."""
    t = target(base, spec)
    try:
        status, _, body = loadgen.fetch(t)
    except OSError as e:
        raise Broken(f"{name} ({who}): request failed: {e}") from e
    missing = [e.decode() for e in spec[3] if e not in body]
    if status != 200 or missing:
        raise Broken(f"{name} ({who}): status {status}, missing {missing}; body starts "
                     f"{body[:300]!r}", status)


# ---------------------------------------------------------------- measuring


class Run:
    def __init__(self, args, mode):
        self.args, self.mode = args, mode
        self.cores = procs.Cores()
        self.failures = []
        self.notes = []

    def wrk(self, label, who, t, conns, watch=None):
        res = loadgen.run_wrk(t, conns, self.mode["seconds"], self.cores, self.rundir, watch)
        errs = res["errors"]
        desc = (f"{label} [{who}] c={conns}: {res['rps']:.0f} req/s, p50 {res['p50_ms']:.3f} ms, "
                f"p99 {res['p99_ms']:.3f} ms")
        if "cpu_s_per_1k" in res:
            desc += f", CPU {res['cpu_s_per_1k'] * 1000:.1f} us/req"
        log(desc)
        if res["requests"] == 0:
            self.failures.append(f"{label} [{who}] c={conns}: no request completed")
        elif errs["status"]:
            self.failures.append(f"{label} [{who}] c={conns}: {errs['status']} non-2xx answers")
        other = {k: v for k, v in errs.items() if k != "status" and v}
        if other:
            self.notes.append(f"{label} [{who}] c={conns}: socket errors {other}")
        return res

    def warmup(self, t):
        if self.mode["warmup"]:
            loadgen.run_wrk(t, 16, self.mode["warmup"], self.cores, self.rundir)

    def measure(self, sc, who, base, spec, watch, rows_by_c, cache=None):
        """Every concurrency of one scenario against one place."""
        t = target(base, spec)
        if cache is None or any((sc.direct_key, c) not in cache for c in self.mode["conc"]):
            self.warmup(t)
        for c in self.mode["conc"]:
            if cache is not None and (sc.direct_key, c) in cache:
                rows_by_c[c][who] = cache[(sc.direct_key, c)]
                continue
            res = self.wrk(sc.label, who, t, c, watch)
            rows_by_c[c][who] = res
            if cache is not None:
                cache[(sc.direct_key, c)] = res
        if sc.stream:
            first = rows_by_c[self.mode["conc"][0]]
            n = self.mode["ttfb"] if who != "litellm" else max(10, self.mode["ttfb"] // 4)
            first.setdefault("ttfb", {})[who] = loadgen.ttfb(t, n)


def per_kb(kb):
    return "-" if kb is None else f"{kb:.1f} KB"


def ms(v):
    return "-" if v is None else f"{v:.1f} ms"


def main():
    ap = argparse.ArgumentParser(prog="harness")
    ap.add_argument("--mode", choices=sorted(MODES), default="full")
    ap.add_argument("--bin-dir", required=True, help="folder with gateway and upstream-sim")
    ap.add_argument("--profile", default="release")
    ap.add_argument("--litellm", default="", help="litellm executable (empty: no LiteLLM)")
    ap.add_argument("--seconds", type=int, help="seconds per run (overrides the mode)")
    ap.add_argument("--only", default="", help="run the scenarios whose name contains this")
    ap.add_argument("--out", default=os.path.join(BENCH_DIR, "out"))
    args = ap.parse_args()
    mode = dict(MODES[args.mode])
    if args.seconds:
        mode["seconds"] = args.seconds
    run = Run(args, mode)
    cores = run.cores
    if cores.pinned:
        # The harness itself (checks, TTFB probe, open streams) is a load generator too.
        os.sched_setaffinity(0, {int(cores.load)})
    if not shutil.which("wrk"):
        log("wrk is missing (bench/run.sh installs it)")
        return 1

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    os.makedirs(args.out, exist_ok=True)
    run.rundir = rundir = os.path.join(args.out, f"run-{stamp}-{args.mode}")
    os.makedirs(rundir, exist_ok=True)
    meta = machine()
    meta.update(mode=args.mode, profile=args.profile, seconds=mode["seconds"],
                pinning=cores.describe())
    results = {"meta": meta, "rows": [], "skipped": [], "pending": [], "notes": run.notes}
    started = []
    try:
        status = execute(run, args, mode, results, started)
    finally:
        for p in reversed(started):
            p.stop()
    meta["load_after"] = loadavg()
    results["failures"] = run.failures
    text = report.render(results)
    for f in run.failures:
        text += f"FAILED: {f}\n"
    with open(os.path.join(rundir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    for path in (os.path.join(rundir, "table.md"), os.path.join(args.out, "latest.md")):
        with open(path, "w") as f:
            f.write(text)
    print()
    print(text)
    log(f"written: {os.path.relpath(rundir, REPO)}/table.md, results.json "
        f"(and bench/out/latest.md); logs in the same folder")
    if status or run.failures:
        log("FAILED: the harness or a relay is broken (see above)")
        return 1
    return 0


def execute(run, args, mode, results, started):
    cores, rundir = run.cores, run.rundir
    log(f"mode {args.mode}: {mode['seconds']} s per run, concurrency {mode['conc']}; "
        f"{cores.describe()}")
    try:
        sim, sim_base, oidc_base = start_sim(args, cores, rundir)
        started.append(sim)
        custom_prefix, reason = probe_custom(sim_base)
        if custom_prefix is None:
            results["skipped"].append(f"custom scenarios and LiteLLM: {reason}")
        gw, gw_base = start_gateway(args, cores, rundir, sim_base, oidc_base, custom_prefix)
        started.append(gw)
    except (RuntimeError, OSError) as e:
        run.failures.append(f"start-up: {e}")
        return 1

    time.sleep(1.0)
    results["rss"] = {"idle_kb": gw.rss_kb()}
    log(f"gateway idle RSS {results['rss']['idle_kb'] / 1024:.1f} MB")

    scs = scenarios.primary_scenarios()
    if custom_prefix:
        scs += scenarios.custom_scenarios(custom_prefix)
    scs = [s for s in scs if args.only in s.name]
    no_gateway = set()
    runnable = []
    for sc in scs:
        try:
            check(sc.name, "direct", sim_base, sc.direct)
        except Broken as e:
            run.failures.append(str(e))
            continue
        try:
            check(sc.name, "gateway", gw_base, sc.gateway)
        except Broken as e:
            if sc.provider == "custom" and e.status in (400, 404):
                # The simulator has `custom` but this gateway does not know the
                # provider (yet): a missing piece, not a broken one.
                no_gateway.add(sc.name)
                results["skipped"].append(f"{sc.name} through the gateway: {e}")
            else:
                run.failures.append(str(e))
                continue
        runnable.append(sc)

    direct_cache = {}
    rows = {}
    for sc in runnable:
        by_c = {c: {} for c in mode["conc"]}
        run.measure(sc, "direct", sim_base, sc.direct, None, by_c, direct_cache)
        if sc.name not in no_gateway:
            run.measure(sc, "gateway", gw_base, sc.gateway, gw, by_c)
        rows[sc.name] = (sc, by_c)
    results["rss"]["peak_kb"] = gw.hwm_kb()

    n_streams = mode["streams"]
    # While streams or idle connections are held, one ordinary request must
    # still be served (its time is reported).
    probe = loadgen.Target(gw_base + "/v1/chat/completions",
                           scenarios.openai_body(scenarios.PRIMARY_MODEL_OPENAI, scenarios.TEXT,
                                                 False), headers("gateway_openai"))
    if not args.only or args.only in "open-streams":
        kind, path, body = scenarios.open_streams_body()
        t = loadgen.Target(gw_base + path, body, headers(kind))
        log(f"opening {n_streams} slow streams through the gateway")
        st = loadgen.open_streams(t, n_streams, gw, probe=probe)
        results["streams"] = st
        results["rss"]["peak_streams_kb"] = gw.hwm_kb()
        log(f"{st['opened']} of {n_streams} streams open in {st['open_secs']:.1f} s; gateway RSS "
            f"{st['rss_before_kb'] / 1024:.1f} -> {st['rss_streams_kb'] / 1024:.1f} MB "
            f"({per_kb(st['kb_per_stream'])} per stream); a request meanwhile: "
            f"{st['probe_status']} in {ms(st['probe_ms'])}")
        if st["opened"] < n_streams:
            run.failures.append(f"open streams: only {st['opened']} of {n_streams} started "
                                f"({st['failure_sample']})")
        if st["probe_status"] != 200:
            run.failures.append(f"open streams: a request meanwhile got {st['probe_status']}")
        # Let the cancelled streams wind down before anything else is measured.
        time.sleep(2.0)
    n_idle = mode["idle"]
    if not args.only or args.only in "idle-connections":
        log(f"holding {n_idle} idle kept-alive connections to the gateway")
        ic = loadgen.idle_connections("127.0.0.1", int(gw_base.rsplit(":", 1)[1]), n_idle, gw,
                                      probe, hold=mode["idle_hold"])
        results["idle_connections"] = ic
        log(f"{ic['opened']} of {n_idle} idle connections held (opened in "
            f"{ic['open_secs']:.1f} s; {ic['still_open']} still open after "
            f"{ic['still_open_after_s']:g} s); gateway RSS {ic['rss_before_kb'] / 1024:.1f} -> "
            f"{ic['rss_held_kb'] / 1024:.1f} MB ({per_kb(ic['kb_per_connection'])} per "
            f"connection), descriptors {ic['fds_before']} -> {ic['fds_held']}; a request "
            f"meanwhile: {ic['probe_status']} in {ms(ic['probe_ms'])}")
        if ic["opened"] < n_idle:
            run.failures.append(f"idle connections: only {ic['opened']} of {n_idle} held "
                                f"({ic['failure_sample']})")
        if ic["probe_status"] != 200:
            run.failures.append(f"idle connections: a request meanwhile got "
                                f"{ic['probe_status']}")
        time.sleep(1.0)
    gw.stop()
    started.remove(gw)

    full_rows = {}
    wanted = mode["full_mode"]
    full_scs = [sc for sc in runnable if sc.provider in ("primary", "custom")
                and sc.name not in no_gateway and (wanted is None or sc.name in wanted)]
    if full_scs:
        custom = (sim_base + custom_prefix, custom_key()) if custom_prefix else None
        measure_full_mode(run, args, results, started, full_scs, rows, full_rows, sim_base,
                          oidc_base, custom)

    litellm_scs = [sc for sc in runnable if sc.litellm]
    if not args.litellm:
        if args.mode != "smoke":
            results["skipped"].append("LiteLLM: not installed (bench/run.sh --no-litellm?)")
    elif not litellm_scs:
        if custom_prefix:
            results["skipped"].append("LiteLLM: no scenario it supports was selected")
    else:
        measure_litellm(run, args, results, started, litellm_scs, rows, sim_base,
                        custom_prefix)

    for sc, by_c in rows.values():
        for gw_mode, table in (("proxy", by_c), ("full", full_rows.get(sc.name))):
            if table is None:
                continue
            for c in mode["conc"]:
                row = {"scenario": sc.name, "provider": sc.provider, "stream": sc.stream,
                       "c": c, "mode": gw_mode,
                       "label": sc.label + (", full mode" if gw_mode == "full" else "")}
                row.update(table[c])
                results["rows"].append(row)
    return 0


def measure_full_mode(run, args, results, started, scs, rows, full_rows, sim_base,
                      oidc_base, custom):
    """The primary and custom scenarios again through a full-mode gateway
    (API-key auth, the user's own accounts, usage recorded in SQLite), alone
    on the relay core like the proxy one."""
    log("starting a full-mode gateway (SQLite, API key, upstream device flow"
        + (", a custom account" if custom else "") + ")")
    try:
        gw, base, key = fullmode.start(os.path.join(args.bin_dir, "gateway"), run.cores,
                                       run.rundir, sim_base, oidc_base, custom)
    except fullmode.SetupError as e:
        if e.missing:
            results["skipped"].append(f"full mode: this gateway lacks a piece it needs ({e})")
        else:
            run.failures.append(f"full mode set-up: {e}")
        return
    except (RuntimeError, OSError) as e:
        run.failures.append(f"full mode start-up: {e}")
        return
    started.append(gw)
    FULL_MODE["key"] = key
    time.sleep(1.0)
    results["rss_full"] = {"idle_kb": gw.rss_kb()}
    for sc in scs:
        kind, path, body, expect = sc.gateway
        spec = (kind.replace("gateway_", "full_"), path, body, expect)
        try:
            check(sc.name, "full mode", base, spec)
        except Broken as e:
            run.failures.append(str(e))
            continue
        by_c = {c: {"direct": rows[sc.name][1][c].get("direct")} for c in run.mode["conc"]}
        if sc.stream:
            by_c[run.mode["conc"][0]]["ttfb"] = {
                "direct": rows[sc.name][1][run.mode["conc"][0]].get("ttfb", {}).get("direct")}
        run.measure(sc, "gateway", base, spec, gw, by_c)
        full_rows[sc.name] = by_c
    results["rss_full"]["peak_kb"] = gw.hwm_kb()
    gw.stop()
    started.remove(gw)
    # Usage recording must really have been on: count what reached SQLite.
    sent = sum(by_c[c]["gateway"]["requests"] for by_c in full_rows.values() for c in by_c
               if "gateway" in by_c[c])
    recorded = fullmode.recorded_usage(os.path.join(run.rundir, "gateway-full-data"))
    results["usage_full"] = {"requests": sent, "recorded": recorded}
    log(f"full mode: usage of {recorded} requests in SQLite for {sent} measured requests "
        f"(plus warm-ups and probes)")
    if not recorded:
        run.failures.append("full mode: no usage was recorded in SQLite")


def measure_litellm(run, args, results, started, scs, rows, sim_base, custom_prefix):
    cores = run.cores
    port = procs.free_port()
    results["meta"]["litellm_version"] = litellm.version(args.litellm)
    log(f"starting LiteLLM {results['meta']['litellm_version']} (this takes a while)")
    try:
        proc = litellm.start(args.litellm, run.rundir, sim_base + custom_prefix, custom_key(),
                             scenarios.CUSTOM_MODEL, port, cores)
    except RuntimeError as e:
        run.failures.append(f"LiteLLM start-up: {e}")
        return
    started.append(proc)
    base = f"http://127.0.0.1:{port}"
    time.sleep(1.0)
    lr = {"idle_kb": proc.rss_kb()}
    for sc in scs:
        try:
            check(sc.name, "litellm", base, sc.litellm)
        except Broken as e:
            results["skipped"].append(f"{sc.name} through LiteLLM: {e}")
            continue
        run.measure(sc, "litellm", base, sc.litellm, proc, rows[sc.name][1])
    lr["peak_kb"] = proc.hwm_kb()
    results["litellm_rss"] = lr
    proc.stop()
    started.remove(proc)


if __name__ == "__main__":
    sys.exit(main())
