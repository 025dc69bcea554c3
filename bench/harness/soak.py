"""The soak (issue 19; docs/reliability.md, "Soak"): the gateway in full mode
on PostgreSQL under mixed traffic at a steady rate for a fixed time, its
resources sampled, and a verdict on growth.

    python3 -m harness.soak --bin-dir DIR --minutes N [--rate R] [--every S]

bench/soak.sh builds the binaries and raises the descriptor limit first.

The traffic, in a fixed rotation (every kind at the same share): both client
formats, streamed and whole, through `primary` and the user's own `custom`
account (pass-through and cross-format), tool calls, an upstream 429 that
the retry hides, an upstream 400 and an in-stream error the client must see,
a malformed body, an unknown key. Beside it, every few seconds: an API key
created, used, revoked and refused; a hot configuration field changed.

Each sample reads the gateway's RSS (VmRSS), open descriptors, threads, its
database connections (pg_stat_activity) and, from /metrics, open streams and
the usage queue's depth and the runtime's live tasks.

Exit status: 0 when the run held; 1 when the harness broke (start-up, a
kind of request answered wrongly more than rarely) or growth passed the
bounds of `judge` (documented there and in docs/reliability.md)."""

import argparse
import datetime
import http.client
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request

from . import fullmode, procs, scenarios
from .__main__ import REPO, machine, probe_custom, custom_key, start_sim

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PG = {"host": "127.0.0.1", "port": "5432", "user": "postgres"}

# Growth bounds (see `judge`).
RSS_GROWTH_MAX = 0.25
FD_GROWTH_MAX = 50
THREAD_GROWTH_MAX = 64
TASK_GROWTH_MAX = 100
# The gateway's PostgreSQL pool holds at most 10 connections (store/mod.rs).
DB_CONNECTIONS_MAX = 10
# A kind of request may answer wrongly this often before the run fails.
WRONG_SHARE_MAX = 0.01


def log(msg):
    print(f"[soak] {msg}", flush=True)


# ---------------------------------------------------------------- database


def psql(sql, db="postgres"):
    out = subprocess.run(["psql", "-h", PG["host"], "-p", PG["port"], "-U", PG["user"], "-d", db,
                          "-qAtc", sql], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError(f"psql {sql!r}: {out.stderr.strip()}")
    return out.stdout.strip()


# ---------------------------------------------------------------- traffic


class Kind:
    """One kind of request: what to send and what a right answer is."""

    def __init__(self, name, path, body, auth, status, expect=(), unique=False):
        self.name, self.path, self.auth, self.status = name, path, auth, status
        self.body, self.expect, self.unique = body, expect, unique


def kinds():
    """The rotation. `auth` names the headers: `openai` / `anthropic` with the
    soak's key, `bad` with a key that does not exist. Bodies marked `unique`
    carry `{n}`, replaced by a counter so that a `times=1` fault fires once
    per request."""
    po, pa = scenarios.PRIMARY_MODEL_OPENAI, scenarios.PRIMARY_MODEL_ANTHROPIC
    cm = f"custom/{scenarios.CUSTOM_MODEL}"
    ob, ab = scenarios.openai_body, scenarios.anthropic_body
    text, tools = scenarios.TEXT, scenarios.TOOLS
    sse_o, sse_a = scenarios.SSE_OPENAI, scenarios.SSE_ANTHROPIC
    json_o, json_a = scenarios.JSON_OPENAI, scenarios.JSON_ANTHROPIC
    chat, msgs = "/v1/chat/completions", "/v1/messages"
    return [
        Kind("primary openai json", chat, ob(po, text, False), "openai", 200, json_o),
        Kind("primary openai stream", chat, ob(po, text, True), "openai", 200, sse_o),
        Kind("primary messages json", msgs, ab(pa, text, False), "anthropic", 200, json_a),
        Kind("primary messages stream", msgs, ab(pa, text, True), "anthropic", 200, sse_a),
        Kind("primary openai tools stream", chat, ob(po, tools, True, tools=True), "openai",
             200, sse_o + [b'"tool_calls"']),
        Kind("primary messages tools json", msgs, ab(pa, tools, False, tools=True),
             "anthropic", 200, [b'"tool_use"']),
        Kind("custom openai json", chat, ob(cm, text, False), "openai", 200, json_o),
        Kind("custom openai stream", chat, ob(cm, text, True), "openai", 200, sse_o),
        Kind("custom messages tools stream", msgs, ab(cm, tools, True, tools=True),
             "anthropic", 200, sse_a + [b'"tool_use"']),
        # Answered 429 once, then text: the gateway's retry hides it.
        Kind("primary 429 once (retried)", chat,
             ob(po, "status code=429 times=1 key=soak{n}\nsim: " + text, False),
             "openai", 200, json_o, unique=True),
        # An upstream refusal the client must see as an error.
        Kind("custom upstream 400", chat, ob(cm, "status code=400", False), "openai",
             (400,), [b'"error"']),
        # An error event after 3 events of a stream already started.
        Kind("custom stream error event", msgs, ab(cm, text + " error_after=3", True),
             "anthropic", 200, [b"event: error"]),
        Kind("malformed body", chat, b'{"model": ', "openai", (400,), [b'"error"']),
        Kind("unknown key", msgs, ab(pa, text, False), "bad", (401,), [b'"error"']),
    ]


def headers(auth, key):
    h = {"Content-Type": "application/json"}
    if auth == "bad":
        return {**h, "x-api-key": "sk-soak-no-such-key", "anthropic-version": "2023-06-01"}
    if auth == "anthropic":
        return {**h, "x-api-key": key, "anthropic-version": "2023-06-01"}
    return {**h, "Authorization": f"Bearer {key}"}


class Tally:
    """Answers by kind: right, wrong (with a sample), and connection errors."""

    def __init__(self):
        self.lock = threading.Lock()
        self.right = {}
        self.wrong = {}
        self.samples = {}
        self.total = 0
        self.late = 0

    def add(self, kind, ok, detail=None):
        with self.lock:
            self.total += 1
            bucket = self.right if ok else self.wrong
            bucket[kind] = bucket.get(kind, 0) + 1
            if not ok and detail and len(self.samples.setdefault(kind, [])) < 3:
                self.samples[kind].append(detail)


class Traffic:
    """Workers that send the rotation at `rate` requests per second, each on
    its own kept-alive connection, paced by one shared schedule."""

    def __init__(self, port, key, rate, workers, tally):
        self.port, self.key, self.rate, self.tally = port, key, rate, tally
        self.kinds = kinds()
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.n = 0
        self.t0 = None
        self.threads = [threading.Thread(target=self.work, daemon=True) for _ in range(workers)]

    def start(self):
        self.t0 = time.monotonic()
        for t in self.threads:
            t.start()

    def finish(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=60)

    def ticket(self):
        with self.lock:
            n = self.n
            self.n += 1
        return n, self.t0 + n / self.rate

    def work(self):
        conn = None
        while not self.stop.is_set():
            n, due = self.ticket()
            wait = due - time.monotonic()
            if wait > 0:
                if self.stop.wait(wait):
                    break
            elif wait < -1.0:
                with self.tally.lock:
                    self.tally.late += 1
            kind = self.kinds[n % len(self.kinds)]
            body = kind.body.replace(b"{n}", str(n).encode()) if kind.unique else kind.body
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
                    conn.connect()
                    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                conn.request("POST", kind.path, body=body, headers=headers(kind.auth, self.key))
                resp = conn.getresponse()
                data = resp.read()
                if resp.will_close:
                    conn.close()
                    conn = None
            except (OSError, http.client.HTTPException) as e:
                self.tally.add(kind.name, False, f"{type(e).__name__}: {e}")
                if conn is not None:
                    conn.close()
                conn = None
                continue
            want = kind.status if isinstance(kind.status, tuple) else (kind.status,)
            missing = [m.decode() for m in kind.expect if m not in data]
            ok = resp.status in want and not missing
            self.tally.add(kind.name, ok,
                           None if ok else f"{resp.status}, missing {missing}: {data[:160]!r}")
        if conn is not None:
            conn.close()


class Chores(threading.Thread):
    """Beside the traffic: every `every` seconds, one API key created, used,
    revoked and then refused, and one hot configuration field changed
    (`fake_reasoning_max_tokens`, back and forth)."""

    def __init__(self, ui, port, every, tally):
        super().__init__(daemon=True)
        self.ui, self.port, self.every, self.tally = ui, port, every, tally
        self.halt = threading.Event()
        self.keys = 0
        self.config_changes = 0

    def run(self):
        flip = itertools.cycle([3999, 4000])
        while not self.halt.wait(self.every):
            try:
                self.key_round()
                self.config_round(next(flip))
            except (OSError, http.client.HTTPException, RuntimeError) as e:
                self.tally.add("chores", False, f"{type(e).__name__}: {e}")

    def use(self, key):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            conn.request("POST", "/v1/chat/completions",
                         body=scenarios.openai_body(scenarios.PRIMARY_MODEL_OPENAI,
                                                    scenarios.TEXT, False),
                         headers=headers("openai", key))
            resp = conn.getresponse()
            resp.read()
            return resp.status
        finally:
            conn.close()

    def key_round(self):
        status, made = self.ui.call("POST", "/_ui/api/keys", {"label": f"soak {self.keys}"})
        if status != 200 or "key" not in made:
            self.tally.add("key created", False, f"{status}: {made}")
            return
        self.tally.add("key created", True)
        self.tally.add("new key works", self.use(made["key"]) == 200)
        status, _ = self.ui.call("DELETE", f"/_ui/api/keys/{made['id']}")
        self.tally.add("key revoked", status == 200, f"DELETE answered {status}")
        refused = self.use(made["key"])
        self.tally.add("revoked key refused", refused == 401, f"answered {refused}")
        self.keys += 1

    def config_round(self, value):
        status, answer = self.ui.call("PUT", "/_ui/api/config",
                                      {"fake_reasoning_max_tokens": value})
        ok = status == 200 and answer.get("ok") is True
        self.tally.add("config change", ok, f"{status}: {answer}")
        if ok:
            self.config_changes += 1


# ---------------------------------------------------------------- samples


def count_dir(path):
    try:
        return len(os.listdir(path))
    except OSError:
        return -1


def metric(text, name):
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            try:
                return float(line.rsplit(" ", 1)[1])
            except ValueError:
                return None
    return None


def sample(gw, base, db, t0, tally):
    pid = gw.pid
    try:
        with urllib.request.urlopen(base + "/metrics", timeout=10) as r:
            text = r.read().decode()
    except OSError:
        text = ""
    conns = None
    if db:
        try:
            conns = int(psql(f"SELECT count(*) FROM pg_stat_activity WHERE datname = '{db}'"))
        except (RuntimeError, ValueError, subprocess.SubprocessError):
            conns = -1
    with tally.lock:
        total = tally.total
    return {"t": round(time.monotonic() - t0, 1), "requests": total,
            "rss_kb": procs.status_kb(pid, "VmRSS"), "hwm_kb": procs.status_kb(pid, "VmHWM"),
            "fds": count_dir(f"/proc/{pid}/fd"), "threads": procs.status_kb(pid, "Threads"),
            "db_conns": conns,
            "open_streams": metric(text, "gateway_open_streams"),
            "usage_queue": metric(text, "gateway_usage_queue_depth"),
            "tasks": metric(text, "gateway_runtime_tasks")}


def thirds(samples, warmup):
    """The first and last third of the samples taken after `warmup` seconds."""
    steady = [s for s in samples if s["t"] >= warmup]
    k = max(1, len(steady) // 3)
    return steady[:k], steady[-k:]


def judge(samples, warmup):
    """Growth from the first third to the last third after warm-up (medians,
    so one busy moment on a shared machine does not decide). Bounds, generous
    on purpose (a fixed-time run on a shared machine must not flake, and a
    real leak at this traffic shows as steady growth well past them):
    RSS +25 %; descriptors +50; threads +64 (tokio's blocking pool comes and
    goes); runtime tasks +100 (they follow the requests in flight); database
    connections never above the pool's 10."""
    first, last = thirds(samples, warmup)
    med = lambda rows, k: statistics.median(r[k] for r in rows)
    out = {"samples_first": len(first), "samples_last": len(last), "failures": []}
    keys = ("rss_kb", "fds", "threads") + (("db_conns",) if first[0]["db_conns"] is not None
                                            else ())
    for k in keys:
        out[k] = {"first": med(first, k), "last": med(last, k),
                  "max": max(r[k] for r in samples if r["t"] >= warmup)}
    rss = out["rss_kb"]
    rss["growth"] = (rss["last"] - rss["first"]) / rss["first"] if rss["first"] else 0.0
    if rss["growth"] > RSS_GROWTH_MAX:
        out["failures"].append(f"RSS grew {rss['growth'] * 100:.1f} % "
                               f"(bound {RSS_GROWTH_MAX * 100:.0f} %)")
    if out["fds"]["last"] - out["fds"]["first"] > FD_GROWTH_MAX:
        out["failures"].append(f"descriptors grew {out['fds']['first']} -> {out['fds']['last']}")
    if out["threads"]["last"] - out["threads"]["first"] > THREAD_GROWTH_MAX:
        out["failures"].append(
            f"threads grew {out['threads']['first']} -> {out['threads']['last']}")
    tasks = [r for r in first + last if r["tasks"] is not None]
    if len(tasks) == len(first) + len(last):
        out["tasks"] = {"first": med(first, "tasks"), "last": med(last, "tasks")}
        if out["tasks"]["last"] - out["tasks"]["first"] > TASK_GROWTH_MAX:
            out["failures"].append(
                f"runtime tasks grew {out['tasks']['first']:g} -> {out['tasks']['last']:g}")
    if "db_conns" in out and out["db_conns"]["max"] > DB_CONNECTIONS_MAX:
        out["failures"].append(f"{out['db_conns']['max']} database connections "
                               f"(the pool holds {DB_CONNECTIONS_MAX})")
    return out


# ---------------------------------------------------------------- report


def render(meta, samples, verdict, tally, chores, usage_recorded, rows=24):
    lines = [f"# Soak, {meta['minutes']:g} min at {meta['rate']:g} req/s, full mode on "
             f"{meta['database']}", "",
             f"{meta['date']}, commit {meta['commit']}, {meta['cpu_model']} "
             f"({meta['nproc']} cores), load before {meta['load_before']}, "
             f"after {meta['load_after']}", "",
             f"Requests: {tally.total:,} ({sum(tally.right.values()):,} answered as expected, "
             f"{sum(tally.wrong.values()):,} not); {tally.late:,} sent more than 1 s late; "
             f"API keys created, used, revoked and refused: {chores.keys}; "
             f"configuration changes: {chores.config_changes}; requests recorded as usage in "
             f"PostgreSQL: {usage_recorded:,}", "",
             "| min | requests | RSS MB | descriptors | threads | tasks | DB connections | "
             "open streams | usage queue |", "|--:|--:|--:|--:|--:|--:|--:|--:|--:|"]
    step = max(1, len(samples) // rows)
    shown = samples[::step]
    if shown[-1] is not samples[-1]:
        shown.append(samples[-1])
    for s in shown:
        lines.append(f"| {s['t'] / 60:.1f} | {s['requests']:,} | {s['rss_kb'] / 1024:.1f} | "
                     f"{s['fds']} | {s['threads']} | {fmt(s['tasks'])} | {fmt(s['db_conns'])} | "
                     f"{fmt(s['open_streams'])} | {fmt(s['usage_queue'])} |")
    r = verdict["rss_kb"]
    lines += ["", f"After {meta['warmup']} s of warm-up, medians of the first third "
              f"({verdict['samples_first']} samples) -> the last third "
              f"({verdict['samples_last']}): RSS {r['first'] / 1024:.1f} -> "
              f"{r['last'] / 1024:.1f} MB ({r['growth'] * 100:+.1f} %, highest "
              f"{r['max'] / 1024:.1f} MB); descriptors {verdict['fds']['first']:g} -> "
              f"{verdict['fds']['last']:g}; threads {verdict['threads']['first']:g} -> "
              f"{verdict['threads']['last']:g}; "
              + (f"runtime tasks {verdict['tasks']['first']:g} -> {verdict['tasks']['last']:g}; "
                 if "tasks" in verdict else "")
              + (f"database connections {verdict['db_conns']['first']:g} -> "
                 f"{verdict['db_conns']['last']:g} (highest {verdict['db_conns']['max']:g})."
                 if "db_conns" in verdict else "SQLite (no database connections)."), "",
              "| kind | right | wrong |", "|---|--:|--:|"]
    for name in sorted(set(tally.right) | set(tally.wrong)):
        lines.append(f"| {name} | {tally.right.get(name, 0):,} | {tally.wrong.get(name, 0):,} |")
    for name, s in tally.samples.items():
        lines.append(f"\nwrong {name}: {s}")
    return "\n".join(lines) + "\n"


def fmt(v):
    return "-" if v is None else f"{v:g}"


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(prog="harness.soak")
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--minutes", type=float, default=3)
    ap.add_argument("--rate", type=float, default=100, help="requests per second")
    ap.add_argument("--every", type=float, help="seconds between samples (default: 1/60 "
                    "of the run, at least 2)")
    ap.add_argument("--workers", type=int, default=24)
    ap.add_argument("--chores-every", type=float, default=5.0)
    ap.add_argument("--store", choices=["postgres", "sqlite"], default="postgres",
                    help="sqlite: the SQLite file in the run folder (no database connections "
                    "to count)")
    ap.add_argument("--out", default=os.path.join(BENCH_DIR, "out"))
    args = ap.parse_args()
    seconds = args.minutes * 60
    every = args.every or max(2.0, seconds / 60)
    warmup = max(20.0, seconds * 0.1)

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    rundir = os.path.join(args.out, f"soak-{stamp}")
    os.makedirs(rundir, exist_ok=True)
    meta = machine()
    meta.update(minutes=args.minutes, rate=args.rate, every=every, warmup=warmup,
                workers=args.workers, database=args.store)
    db = None
    if args.store == "postgres":
        db = create_database()
        if db is None:
            return 1
    started = []
    cores = procs.Cores()
    try:
        return run(args, cores, rundir, db, meta, seconds, every, warmup, started)
    finally:
        for p in reversed(started):
            p.stop()
        if db:
            drop_database(db)


def create_database():
    """A scratch PostgreSQL database: its name, or None (logged) when it
    cannot be made."""
    db = f"gw_soak_{int(time.time())}_{os.getpid()}"
    try:
        psql(f"CREATE DATABASE {db}")
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        log(f"cannot create a scratch database on {PG['host']}:{PG['port']}: {e}")
        return None
    return db


def drop_database(db):
    try:
        psql(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        log(f"could not drop the scratch database {db}: {e}")


def start_full(args, cores, rundir, db, started, log_level="warn"):
    """The simulator and the full-mode gateway behind it, on PostgreSQL
    database `db` or (None) SQLite, at `log_level`, with the admin's
    `primary` and `custom` connected: (gateway Proc, base URL, API key,
    signed-in UiClient), or None (logged) when the simulator has no custom
    endpoint. Both processes are appended to `started`."""
    sim, sim_base, oidc_base = start_sim(args, cores, rundir)
    started.append(sim)
    custom_prefix, reason = probe_custom(sim_base)
    if custom_prefix is None:
        log(f"the simulator has no custom endpoint: {reason}")
        return None
    env = {"LOG_LEVEL": log_level}
    if db:
        env["DATABASE_URL"] = f"postgres://{PG['user']}@{PG['host']}:{PG['port']}/{db}"
        log(f"starting the gateway in full mode on PostgreSQL ({db})")
    else:
        log("starting the gateway in full mode on SQLite")
    gw, base, key, ui = fullmode.start_signed_in(
        os.path.join(args.bin_dir, "gateway"), cores, rundir, sim_base, oidc_base,
        custom=(sim_base + custom_prefix, custom_key()), extra_env=env)
    started.append(gw)
    if cores.pinned:
        os.sched_setaffinity(0, {int(cores.load)})
    return gw, base, key, ui


def usage_recorded(db, rundir):
    """Requests the gateway recorded as usage (-1 when they cannot be counted)."""
    if db:
        try:
            return int(psql("SELECT COALESCE(SUM(requests), 0) FROM usage_events", db=db))
        except (RuntimeError, ValueError) as e:
            log(f"could not count the recorded usage: {e}")
            return -1
    rows = fullmode.recorded_usage(os.path.join(rundir, "gateway-full-data"))
    return -1 if rows is None else rows


def run(args, cores, rundir, db, meta, seconds, every, warmup, started):
    ready = start_full(args, cores, rundir, db, started)
    if ready is None:
        return 1
    gw, base, key, ui = ready
    port = int(base.rsplit(":", 1)[1])

    tally = Tally()
    traffic = Traffic(port, key, args.rate, args.workers, tally)
    chores = Chores(ui, port, args.chores_every, tally)
    samples = []
    t0 = time.monotonic()
    log(f"{args.minutes:g} min at {args.rate:g} req/s ({len(traffic.kinds)} kinds in rotation, "
        f"{args.workers} connections), a sample every {every:g} s, warm-up {warmup:g} s")
    traffic.start()
    chores.start()
    broken = None
    try:
        while True:
            s = sample(gw, base, db, t0, tally)
            samples.append(s)
            if not gw.alive():
                broken = f"the gateway exited:\n{gw.log_tail()}"
                break
            left = seconds - (time.monotonic() - t0)
            if len(samples) % max(1, int(60 / every)) == 0 or left <= 0:
                log(f"{s['t'] / 60:5.1f} min: {s['requests']:,} requests, RSS "
                    f"{s['rss_kb'] / 1024:.1f} MB, {s['fds']} fds, {s['threads']} threads, "
                    f"{s['db_conns']} db connections, {sum(tally.wrong.values())} answered "
                    f"wrongly")
            if left <= 0:
                break
            time.sleep(min(every, left))
    finally:
        traffic.finish()
        chores.halt.set()
        chores.join(timeout=60)
    meta["load_after"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    time.sleep(2.0)  # the usage writer flushes every second
    rows = usage_recorded(db, rundir)
    verdict = judge(samples, warmup)
    text = render(meta, samples, verdict, tally, chores, rows)
    failures = list(verdict["failures"])
    if broken:
        failures.append(broken)
    for name in sorted(set(tally.right) | set(tally.wrong)):
        wrong, right = tally.wrong.get(name, 0), tally.right.get(name, 0)
        if wrong > WRONG_SHARE_MAX * (wrong + right) and wrong > 1:
            failures.append(f"{name}: {wrong} of {wrong + right} answered wrongly "
                            f"({tally.samples.get(name, [])[:1]})")
    if sum(tally.right.values()) == 0:
        failures.append("no request was answered as expected")
    return write_results(rundir, text, failures,
                         {"meta": meta, "samples": samples, "verdict": verdict,
                          "right": tally.right, "wrong": tally.wrong, "usage_recorded": rows})


def write_results(rundir, text, failures, record):
    """Write a run's table (`text` with its failures) and `record` to
    `rundir`, print the table; the exit status: 1 when anything failed."""
    for f in failures:
        text += f"FAILED: {f}\n"
    with open(os.path.join(rundir, "samples.json"), "w") as f:
        json.dump(record, f, indent=1)
    with open(os.path.join(rundir, "table.md"), "w") as f:
        f.write(text)
    print()
    print(text)
    log(f"written: {os.path.relpath(rundir, REPO)}/table.md, samples.json")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
