"""Full-mode RSS by requests served (issue 20; docs/benchmarks.md, "Full-mode
RSS from 100k to 1M requests"): the soak's gateway (bench/soak.sh, full mode,
the admin's own `primary` and `custom`) driven at full speed by wrk instead of
at a steady rate, its memory read each time another `--step` requests have
been served, and a verdict: is RSS at the last step within `--bound` of RSS
at the first?

    python3 -m harness.requests_rss --bin-dir DIR [--requests 1000000]
        [--step 100000] [--conns 8] [--store sqlite|postgres] [--log-level warn]

bench/soak.sh --requests N runs it (after building the binaries and raising
the descriptor limit).

The traffic: the soak's kinds that answer 200 with a body that is the same
every time (both client formats, streamed and whole, `primary` and `custom`,
tool calls, an in-stream error event), each checked once, then sent in turn
by wrk on `--conns` kept-alive connections. Under load only the status is
checked (wrk counts non-2xx answers; any fails the run).

Requests served are read from the gateway's own `gateway_requests_total`
(every `/v1` request) every 0.1 s; at each step: VmRSS and its parts
(RssAnon, RssFile, RssShmem), VmHWM, threads, descriptors, the usage queue,
the SQLite files' sizes. Exit status 1 when the harness broke or RSS grew
past the bound."""

import argparse
import datetime
import os
import sys
import time
import urllib.request

from . import loadgen, procs
from .__main__ import machine
from .soak import (BENCH_DIR, count_dir, create_database, drop_database, fmt, headers, kinds,
                   metric, start_full, usage_recorded, write_results)


def log(msg):
    print(f"[rss] {msg}", flush=True)


def rotation():
    """The soak's kinds that answer 200 with the same body every time."""
    return [k for k in kinds() if k.status == 200 and not k.unique]


def metrics(base):
    try:
        with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
            return r.read().decode()
    except OSError:
        return ""


def served(text):
    """The sum of every `gateway_requests_total` series."""
    total = 0.0
    for line in text.splitlines():
        if line.startswith("gateway_requests_total{") or line.startswith(
                "gateway_requests_total "):
            try:
                total += float(line.rsplit(" ", 1)[1])
            except ValueError:
                pass
    return int(total)


def file_kb(path):
    try:
        return os.path.getsize(path) // 1024
    except OSError:
        return None


def sample(gw, base, data_dir, t0, requests=None):
    """One reading of the gateway's memory and resources."""
    pid = gw.pid
    text = metrics(base)
    db = os.path.join(data_dir, "gateway.db")
    return {"t": round(time.monotonic() - t0, 1),
            "requests": served(text) if requests is None else requests,
            **{k: procs.status_kb(pid, name) for k, name in
               (("rss_kb", "VmRSS"), ("anon_kb", "RssAnon"), ("file_kb", "RssFile"),
                ("shmem_kb", "RssShmem"), ("hwm_kb", "VmHWM"), ("threads", "Threads"))},
            "fds": count_dir(f"/proc/{pid}/fd"),
            "usage_queue": metric(text, "gateway_usage_queue_depth"),
            "db_kb": file_kb(db), "wal_kb": file_kb(db + "-wal")}


def check(port, key, kind):
    """One request of `kind`, answered as a right answer is."""
    t = target(port, key, kind)
    status, _, body = loadgen.fetch(t, timeout=30)
    missing = [m.decode() for m in kind.expect if m not in body]
    if status != 200 or missing:
        raise RuntimeError(f"{kind.name}: status {status}, missing {missing}: {body[:200]!r}")


def target(port, key, kind):
    return loadgen.Target(f"http://127.0.0.1:{port}{kind.path}", kind.body,
                          headers(kind.auth, key))


def mb(kb):
    return "-" if kb is None else f"{kb / 1024:.1f}"


def render(meta, samples, verdict, summary, rows):
    lines = [f"# Full-mode RSS by requests served, {meta['database']}, wrk c={meta['conns']}, "
             f"LOG_LEVEL={meta['log_level']}",
             "",
             f"{meta['date']}, commit {meta['commit']}, {meta['cpu_model']} "
             f"({meta['nproc']} cores), {meta['pinning']}, load before "
             f"{meta['load_before']}, after {meta['load_after']}", "",
             f"{summary['requests']:,} requests sent by wrk in {meta['seconds']:.0f} s "
             f"({summary['rps']:.0f} req/s, p99 {summary['p99_ms']:.1f} ms), "
             f"{summary['errors']['status']} non-2xx; {len(meta['kinds'])} kinds in turn: "
             f"{', '.join(meta['kinds'])}; requests recorded as usage: {rows:,}", "",
             "| requests | s | RSS MB | anon MB | file MB | shmem MB | HWM MB | threads | fds "
             "| usage queue | db MB | WAL MB |",
             "|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for s in samples:
        lines.append(f"| {s['requests']:,} | {s['t']:.0f} | {mb(s['rss_kb'])} | "
                     f"{mb(s['anon_kb'])} | {mb(s['file_kb'])} | {mb(s['shmem_kb'])} | "
                     f"{mb(s['hwm_kb'])} | {s['threads']} | {s['fds']} | "
                     f"{fmt(s['usage_queue'])} | "
                     f"{mb(s['db_kb'])} | {mb(s['wal_kb'])} |")
    lines += ["", verdict["text"]]
    return "\n".join(lines) + "\n"


def judge(steps, bound):
    """RSS at the last step against the first (the first row is the idle
    gateway before load; the first step is after `--step` requests)."""
    first, last = steps[0], steps[-1]
    growth = (last["rss_kb"] - first["rss_kb"]) / first["rss_kb"]
    anon = last["anon_kb"] - first["anon_kb"]
    file_ = last["file_kb"] - first["file_kb"] + last["shmem_kb"] - first["shmem_kb"]
    ok = growth <= bound
    text = (f"RSS {first['rss_kb'] / 1024:.1f} MB at {first['requests']:,} requests -> "
            f"{last['rss_kb'] / 1024:.1f} MB at {last['requests']:,} ({growth * 100:+.1f} %; "
            f"anonymous {anon / 1024:+.1f} MB, file and shared {file_ / 1024:+.1f} MB): "
            + ("flat within " if ok else "NOT flat within ") + f"{bound * 100:.0f} %.")
    return {"growth": growth, "ok": ok, "text": text}


def main():
    ap = argparse.ArgumentParser(prog="harness.requests_rss")
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--requests", type=int, default=1_000_000)
    ap.add_argument("--step", type=int, default=100_000)
    ap.add_argument("--conns", type=int, default=8, help="wrk's kept-alive connections")
    ap.add_argument("--bound", type=float, default=0.10,
                    help="largest RSS growth from the first step to the last (0.10: 10 %%)")
    ap.add_argument("--store", choices=["postgres", "sqlite"], default="postgres")
    ap.add_argument("--log-level", default="warn",
                    help="the gateway's LOG_LEVEL (info: an access line per request, as shipped)")
    ap.add_argument("--out", default=os.path.join(BENCH_DIR, "out"))
    args = ap.parse_args()
    if args.step <= 0 or args.requests < args.step:
        log("--requests must be at least one --step")
        return 2

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    rundir = os.path.join(args.out, f"rss-{stamp}-{args.store}")
    os.makedirs(rundir, exist_ok=True)
    meta = machine()
    cores = procs.Cores()
    meta.update(database=args.store, conns=args.conns, requests=args.requests, step=args.step,
                log_level=args.log_level, pinning=cores.describe())
    db = create_database() if args.store == "postgres" else None
    if args.store == "postgres" and db is None:
        return 1
    started = []
    try:
        return run(args, cores, rundir, db, meta, started)
    finally:
        for p in reversed(started):
            p.stop()
        if db:
            drop_database(db)


def run(args, cores, rundir, db, meta, started):
    ready = start_full(args, cores, rundir, db, started, args.log_level)
    if ready is None:
        return 1
    gw, base, key, _ui = ready
    port = int(base.rsplit(":", 1)[1])
    data_dir = os.path.join(rundir, "gateway-full-data")
    chosen = rotation()
    meta["kinds"] = [k.name for k in chosen]
    for k in chosen:
        check(port, key, k)
    t0 = time.monotonic()
    samples = [sample(gw, base, data_dir, t0)]
    log(f"idle: RSS {samples[0]['rss_kb'] / 1024:.1f} MB; {args.requests:,} requests of "
        f"{len(chosen)} kinds in turn on {args.conns} connections, a reading every "
        f"{args.step:,}")
    wrk = loadgen.Rotation([target(port, key, k) for k in chosen], args.conns, cores, rundir)
    broken = None
    next_step = args.step
    try:
        while next_step <= args.requests:
            time.sleep(0.1)
            if not gw.alive():
                broken = f"the gateway exited:\n{gw.log_tail()}"
                break
            if not wrk.alive():
                broken = "wrk exited early"
                break
            n = served(metrics(base))
            if n >= next_step:
                s = sample(gw, base, data_dir, t0, requests=n)
                samples.append(s)
                log(f"{n:>9,} requests, {s['t']:5.0f} s: RSS {s['rss_kb'] / 1024:.1f} MB "
                    f"(anon {s['anon_kb'] / 1024:.1f}, file {s['file_kb'] / 1024:.1f}, "
                    f"shmem {s['shmem_kb'] / 1024:.1f})")
                while next_step <= n:
                    next_step += args.step
    finally:
        summary = wrk.finish()
    meta["seconds"] = time.monotonic() - t0
    meta["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    time.sleep(2.0)  # the usage writer flushes every second
    after = sample(gw, base, data_dir, t0)
    samples.append(after)
    rows = usage_recorded(db, rundir)
    failures = [broken] if broken else []
    if summary["errors"]["status"]:
        failures.append(f"{summary['errors']['status']} non-2xx answers under load")
    steps = samples[1:-1]
    if len(steps) < 2:
        failures.append("fewer than two steps were read")
        verdict = {"text": "no verdict", "ok": False, "growth": None}
    else:
        verdict = judge(steps, args.bound)
        if not verdict["ok"]:
            failures.append(verdict["text"])
    text = render(meta, samples, verdict, summary, rows)
    text += ("The first row is the idle gateway before load, the last 2 s after wrk "
             "stopped.\n")
    return write_results(rundir, text, failures,
                         {"meta": meta, "samples": samples, "verdict": verdict, "wrk": summary,
                          "usage_recorded": rows})


if __name__ == "__main__":
    sys.exit(main())
