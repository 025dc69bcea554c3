"""Processes of a benchmark run: free ports, starts pinned to a core, readiness
waits, clean stops, and the /proc readings (CPU time, RSS) of a process tree."""

import collections
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cores:
    """Which core runs what. With two cores or more: the load generator and
    the simulator on core 0, the relay under test (gateway, LiteLLM) alone on
    core 1. With fewer, or without taskset, nothing is pinned (and the report
    says so)."""

    def __init__(self):
        usable = sorted(os.sched_getaffinity(0))
        self.taskset = shutil.which("taskset")
        if len(usable) >= 2 and self.taskset:
            self.load, self.relay = str(usable[0]), str(usable[1])
        else:
            self.load = self.relay = None

    @property
    def pinned(self):
        return self.load is not None

    def wrap(self, cmd, core):
        if core is None:
            return list(cmd)
        return [self.taskset, "-c", core, *cmd]

    def describe(self):
        if not self.pinned:
            return "not pinned (fewer than 2 usable cores or no taskset)"
        return (f"load generator and simulator on core {self.load}, "
                f"relay under test alone on core {self.relay}")


class Proc:
    """A child process in its own session (so a relay that forks workers is
    stopped whole), with its output in a log file."""

    def __init__(self, name, cmd, log_path, env=None, cwd=None):
        self.name = name
        self.log_path = log_path
        self._log = open(log_path, "wb")
        self.popen = subprocess.Popen(
            cmd, env=env, cwd=cwd, stdout=self._log, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True)

    @property
    def pid(self):
        return self.popen.pid

    def alive(self):
        return self.popen.poll() is None

    def log_tail(self, n=20):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        return "\n".join(lines[-n:])

    def stop(self, grace=10.0, keep_lines=400):
        """SIGTERM to the process group this harness created, SIGKILL after
        `grace`; then the log keeps its first and last `keep_lines` / 2 lines
        (a relay at info level writes one line per request)."""
        if self.alive():
            try:
                os.killpg(self.popen.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.popen.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                self.popen.wait(timeout=5)
        if not self._log.closed:
            self._log.close()
            trim(self.log_path, keep_lines)

    # ---- /proc readings (the process and every descendant) ----

    def pids(self):
        return [self.pid, *descendants(self.pid)]

    def cpu_ticks(self):
        return sum(cpu_ticks(p) for p in self.pids())

    def rss_kb(self):
        return sum(status_kb(p, "VmRSS") for p in self.pids())

    def hwm_kb(self):
        return sum(status_kb(p, "VmHWM") for p in self.pids())


def trim(path, keep_lines):
    """Cut the middle out of a long log file (streaming: logs of a full run
    reach hundreds of megabytes)."""
    half = keep_lines // 2
    head, tail, total = [], collections.deque(maxlen=half), 0
    try:
        with open(path, "rb") as f:
            for line in f:
                total += 1
                if len(head) < half:
                    head.append(line)
                else:
                    tail.append(line)
        if total <= keep_lines:
            return
        with open(path, "wb") as f:
            f.writelines(head)
            f.write(f"[... {total - len(head) - len(tail)} lines cut by the benchmark "
                    f"harness ...]\n".encode())
            f.writelines(tail)
    except OSError:
        pass


def descendants(pid):
    """Pids of every live descendant of `pid`."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # Fields after the command name, which is in parentheses and may hold spaces.
        fields = stat[stat.rfind(b")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def cpu_ticks(pid):
    """utime + stime of `pid`, in clock ticks (0 once the process is gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return 0
    fields = stat[stat.rfind(b")") + 2:].split()
    # fields[0] is field 3 (state): utime is field 14, stime field 15.
    return int(fields[11]) + int(fields[12])


def status_kb(pid, key):
    """A `kB` line of /proc/<pid>/status (VmRSS, VmHWM), 0 when absent."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def wait_http(url, proc, timeout, headers=None):
    """Wait until `url` answers any HTTP status; fail early if `proc` died."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        if not proc.alive():
            raise RuntimeError(f"{proc.name} exited during start-up:\n{proc.log_tail()}")
        try:
            req = urllib.request.Request(url, headers=headers or {})
            with urllib.request.urlopen(req, timeout=2) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except (urllib.error.URLError, OSError) as e:
            last = e
        time.sleep(0.1)
    raise RuntimeError(f"{proc.name} did not answer {url} within {timeout:.0f} s ({last}):\n"
                       f"{proc.log_tail()}")
