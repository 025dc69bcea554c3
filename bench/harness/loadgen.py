"""Load and probes: wrk runs (with the watched process's CPU time and RSS read
around and during the run; or a rotation of requests until stopped), a sequential time-to-first-byte probe on one
kept-alive connection, a single checked request, and many open streams at once."""

import asyncio
import http.client
import json
import os
import signal
import socket
import statistics
import subprocess
import threading
import time
from urllib.parse import urlsplit

from . import procs

HERE = os.path.dirname(os.path.abspath(__file__))
WRK_SCRIPT = os.path.join(os.path.dirname(HERE), "wrk", "post.lua")


class Target:
    """One place to send one scenario's request: a URL, its body and headers."""

    def __init__(self, url, body, headers):
        self.url = url
        self.body = body if isinstance(body, bytes) else body.encode()
        self.headers = dict(headers)
        parts = urlsplit(url)
        self.host, self.port, self.path = parts.hostname, parts.port, parts.path


class Sampler(threading.Thread):
    """Reads the RSS of a process tree every `every` seconds, keeps the highest."""

    def __init__(self, proc, every=0.2):
        super().__init__(daemon=True)
        self.proc, self.every = proc, every
        self.max_kb = 0
        self._halt = threading.Event()

    def run(self):
        while not self._halt.is_set():
            self.max_kb = max(self.max_kb, self.proc.rss_kb())
            self._halt.wait(self.every)

    def finish(self):
        self._halt.set()
        self.join()
        self.max_kb = max(self.max_kb, self.proc.rss_kb())
        return self.max_kb


def run_wrk(target, conns, seconds, cores, workdir, watch=None):
    """One wrk run (one thread, `conns` kept-alive connections) against
    `target`. With `watch` (the relay's Proc), also its CPU seconds per 1,000
    requests and its highest RSS during the run."""
    body_file = os.path.join(workdir, "wrk-body.bin")
    with open(body_file, "wb") as f:
        f.write(target.body)
    env = dict(os.environ,
               BENCH_BODY_FILE=body_file,
               BENCH_HEADERS="\n".join(f"{k}: {v}" for k, v in target.headers.items()))
    cmd = cores.wrap(["wrk", "-t1", f"-c{conns}", f"-d{seconds}s", "--timeout", "10s",
                      "-s", WRK_SCRIPT, target.url], cores.load)
    sampler = None
    if watch is not None:
        cpu_before = watch.cpu_ticks()
        sampler = Sampler(watch)
        sampler.start()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=seconds + 60)
    result = {}
    if watch is not None:
        rss_kb = sampler.finish()
        result["cpu_ticks"] = watch.cpu_ticks() - cpu_before
        result["rss_load_kb"] = rss_kb
    result.update(wrk_summary(out.returncode, out.stdout, out.stderr))
    if watch is not None and result["requests"] > 0:
        # CPU seconds per 1,000 requests = milliseconds of CPU per request.
        result["cpu_s_per_1k"] = result["cpu_ticks"] / procs.CLK_TCK / result["requests"] * 1000
    return result


def wrk_summary(returncode, stdout, stderr):
    """The figures of the JSON line post.lua's done() hook prints."""
    line = next((l for l in stdout.splitlines() if l.startswith("BENCH_JSON ")), None)
    if returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed (exit {returncode}): {stderr.strip()[-500:]}")
    raw = json.loads(line[len("BENCH_JSON "):])
    secs = raw["duration_us"] / 1e6
    lat = raw["latency_us"]
    return {
        "requests": raw["requests"],
        "rps": raw["requests"] / secs if secs > 0 else 0.0,
        "p50_ms": lat["p50"] / 1000,
        "p90_ms": lat["p90"] / 1000,
        "p99_ms": lat["p99"] / 1000,
        "max_ms": lat["max"] / 1000,
        "errors": raw["errors"],
    }


def raw_request(target):
    """`target` as the bytes of one HTTP/1.1 request (kept alive)."""
    head = [f"POST {target.path} HTTP/1.1", f"Host: {target.host}:{target.port}",
            f"Content-Length: {len(target.body)}"]
    head += [f"{k}: {v}" for k, v in target.headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + target.body


class Rotation:
    """wrk sending `targets` in turn (one thread, `conns` kept-alive
    connections) until `finish`: for runs ended by what the server has
    served rather than by a time."""

    def __init__(self, targets, conns, cores, workdir):
        files = []
        for i, t in enumerate(targets):
            path = os.path.join(workdir, f"wrk-request-{i}.http")
            with open(path, "wb") as f:
                f.write(raw_request(t))
            files.append(path)
        env = dict(os.environ, BENCH_REQUEST_FILES="\n".join(files))
        # wrk needs a duration: a day, ended earlier by SIGINT (it then prints
        # its summary as after a timed run).
        cmd = cores.wrap(["wrk", "-t1", f"-c{conns}", "-d86400s", "--timeout", "10s",
                          "-s", WRK_SCRIPT, targets[0].url], cores.load)
        self.popen = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True)

    def alive(self):
        return self.popen.poll() is None

    def finish(self, timeout=30):
        """Stop wrk: its summary, as `run_wrk`'s."""
        if self.alive():
            self.popen.send_signal(signal.SIGINT)
        try:
            stdout, stderr = self.popen.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            stdout, stderr = self.popen.communicate()
        return wrk_summary(self.popen.returncode, stdout, stderr)


def _connection(target, timeout=30):
    conn = http.client.HTTPConnection(target.host, target.port, timeout=timeout)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def fetch(target, timeout=30):
    """One request on a fresh connection: (status, headers, body bytes)."""
    conn = _connection(target, timeout)
    try:
        conn.request("POST", target.path, body=target.body, headers=target.headers)
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()
    finally:
        conn.close()


def ttfb(target, n):
    """Time to the first byte of the response body, over `n` sequential
    requests on one kept-alive connection: p50 and p90 in milliseconds."""
    conn = _connection(target)
    samples = []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            conn.request("POST", target.path, body=target.body, headers=target.headers)
            resp = conn.getresponse()
            first = resp.read1(1)
            t1 = time.perf_counter()
            rest = resp.read()
            if resp.status != 200 or not (first or rest):
                raise RuntimeError(f"time-to-first-byte probe got status {resp.status}")
            samples.append((t1 - t0) * 1000)
    finally:
        conn.close()
    samples.sort()
    return {"ttfb_p50_ms": statistics.median(samples),
            "ttfb_p90_ms": samples[min(len(samples) - 1, int(len(samples) * 0.9))],
            "ttfb_n": n}


def open_streams(target, n, watch, connect_parallel=100, settle=1.0, open_timeout=60.0,
                 probe=None):
    """Open `n` streaming requests at once and hold them: how many started
    (status 200 and a first body byte), and the watched process's RSS while
    all are open (highest of several readings). `probe` (a Target): one
    request sent while they are held, its status and time in the result."""
    return asyncio.run(_open_streams(target, n, watch, connect_parallel, settle, open_timeout,
                                     probe))


def timed_fetch(target):
    """One request on a fresh connection: {probe_status, probe_ms}."""
    t0 = time.perf_counter()
    try:
        status, _, _ = fetch(target)
    except OSError as e:
        return {"probe_status": type(e).__name__, "probe_ms": None}
    return {"probe_status": status, "probe_ms": (time.perf_counter() - t0) * 1000}


async def _open_streams(target, n, watch, connect_parallel, settle, open_timeout, probe):
    request = raw_request(target)
    gate = asyncio.Semaphore(connect_parallel)
    started = asyncio.Event()
    opened = 0
    failures = []
    writers = []
    drains = []

    async def drain(reader):
        try:
            while await reader.read(65536):
                pass
        except (OSError, asyncio.CancelledError):
            pass

    def settled():
        if opened + len(failures) >= n:
            started.set()

    async def one():
        nonlocal opened
        try:
            async with gate:
                reader, writer = await asyncio.open_connection(target.host, target.port)
                writers.append(writer)
                sock = writer.get_extra_info("socket")
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                writer.write(request)
                await writer.drain()
                head = await reader.readuntil(b"\r\n\r\n")
                if not head.startswith(b"HTTP/1.1 200"):
                    failures.append(head.split(b"\r\n", 1)[0].decode("latin-1"))
                    return
                if not await reader.read(1):
                    failures.append("closed before the first body byte")
                    return
            opened += 1
            drains.append(asyncio.create_task(drain(reader)))
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError) as e:
            failures.append(type(e).__name__)
        finally:
            settled()

    rss_before = watch.rss_kb()
    t0 = time.monotonic()
    tasks = [asyncio.create_task(one()) for _ in range(n)]
    try:
        await asyncio.wait_for(started.wait(), open_timeout)
    except asyncio.TimeoutError:
        pass
    open_secs = time.monotonic() - t0
    rss = 0
    readings = max(1, int(settle / 0.1))
    for _ in range(readings):
        rss = max(rss, watch.rss_kb())
        await asyncio.sleep(0.1)
    probed = await asyncio.to_thread(timed_fetch, probe) if probe is not None else {}
    for t in tasks:
        t.cancel()
    for d in drains:
        d.cancel()
    for w in writers:
        w.close()
    await asyncio.gather(*tasks, *drains, return_exceptions=True)
    return {"streams": n, "opened": opened, "failed": len(failures),
            "failure_sample": failures[:3], "open_secs": open_secs,
            "rss_before_kb": rss_before, "rss_streams_kb": rss,
            "kb_per_stream": (rss - rss_before) / opened if opened else None, **probed}


def idle_connections(host, port, n, watch, probe, hold=5.0, connect_parallel=200):
    """Open `n` connections, send one small request on each (`GET /health`),
    read its answer and keep the connection open and idle: the watched
    process's RSS before and with all of them held, how many were still
    open after `hold` seconds, its open descriptors, and `probe` (a Target)
    sent meanwhile on a fresh connection."""
    return asyncio.run(_idle_connections(host, port, n, watch, probe, hold, connect_parallel))


async def _idle_connections(host, port, n, watch, probe, hold, connect_parallel):
    request = f"GET /health HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
    gate = asyncio.Semaphore(connect_parallel)
    held, failures = [], []

    async def one():
        try:
            async with gate:
                reader, writer = await asyncio.open_connection(host, port)
                writer.write(request)
                await writer.drain()
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                await reader.readexactly(length)
                if not head.startswith(b"HTTP/1.1 200"):
                    failures.append(head.split(b"\r\n", 1)[0].decode("latin-1"))
                    writer.close()
                    return
                held.append((reader, writer))
        except (OSError, ValueError, asyncio.IncompleteReadError,
                asyncio.LimitOverrunError) as e:
            failures.append(type(e).__name__)

    await asyncio.sleep(0.5)
    rss_before = watch.rss_kb()
    fds_before = len(os.listdir(f"/proc/{watch.pid}/fd"))
    t0 = time.monotonic()
    await asyncio.gather(*(one() for _ in range(n)))
    open_secs = time.monotonic() - t0
    await asyncio.sleep(1.0)
    rss_held = max(watch.rss_kb() for _ in range(3))
    fds_held = len(os.listdir(f"/proc/{watch.pid}/fd"))
    probed = await asyncio.to_thread(timed_fetch, probe)
    await asyncio.sleep(hold)
    # A connection the server closed reads end-of-file at once.
    still = 0
    for reader, _ in held:
        try:
            data = await asyncio.wait_for(reader.read(1), 0.001)
            if data:
                still += 1
        except asyncio.TimeoutError:
            still += 1
        except OSError:
            pass
    for _, writer in held:
        writer.close()
    opened = len(held)
    per_conn = (rss_held - rss_before) / opened if opened else None
    return {"idle": n, "opened": opened, "failed": len(failures),
            "failure_sample": failures[:3], "open_secs": open_secs,
            "still_open_after_s": hold, "still_open": still,
            "rss_before_kb": rss_before, "rss_held_kb": rss_held,
            "kb_per_connection": per_conn, "fds_before": fds_before, "fds_held": fds_held,
            **probed}
