"""A full-mode gateway for the benchmark: SQLite store, a seeded admin with
TOTP, signed in through the web UI API, one API key, and the admin's own
upstream credentials for `primary` obtained by the device flow against the
simulator (which approves it by itself) and, when the simulator has the
OpenAI-compatible endpoint, the admin's own `custom` account connected by API
key through the web UI API (so custom requests go through per-user provider
selection). Requests then go through per-user API-key auth, and every chat
call is recorded as usage."""

import base64
import hashlib
import hmac
import http.client
import json
import os
import sqlite3
import struct
import time

from . import procs

ADMIN_EMAIL = "bench-admin@example.com"
ADMIN_PASSWORD = "bench-admin-password-2026"
# 20 random-looking bytes in base32, the form INITIAL_ADMIN_TOTP_SECRET takes.
ADMIN_TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"


class SetupError(Exception):
    """The full-mode gateway could not be made ready; `missing` when the cause
    is a piece the gateway does not have (an endpoint answering 404)."""

    def __init__(self, message, missing=False):
        super().__init__(message)
        self.missing = missing


def totp(secret_b32, at=None, step=30, digits=6):
    """RFC 6238 code (HMAC-SHA1) of a base32 secret."""
    key = base64.b32decode(secret_b32.upper() + "=" * (-len(secret_b32) % 8))
    counter = int((time.time() if at is None else at) // step)
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    offset = mac[-1] & 0x0F
    code = (struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF) % 10 ** digits
    return f"{code:0{digits}d}"


class UiClient:
    """The web UI API with its two cookies and the CSRF header."""

    def __init__(self, port):
        self.port = port
        self.cookies = {}

    def call(self, method, path, body=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            headers = {"Content-Type": "application/json"}
            if self.cookies:
                headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
            if method != "GET" and "csrf_token" in self.cookies:
                headers["X-CSRF-Token"] = self.cookies["csrf_token"]
            conn.request(method, path, body=None if body is None else json.dumps(body),
                         headers=headers)
            resp = conn.getresponse()
            data = resp.read()
            for name, value in resp.getheaders():
                if name.lower() == "set-cookie":
                    pair = value.split(";", 1)[0]
                    if "=" in pair:
                        k, v = pair.split("=", 1)
                        self.cookies[k.strip()] = v.strip()
            try:
                parsed = json.loads(data) if data else {}
            except ValueError:
                parsed = {"raw": data[:200].decode("utf-8", "replace")}
            return resp.status, parsed
        finally:
            conn.close()

    def must(self, method, path, body=None, what=""):
        status, answer = self.call(method, path, body)
        if status != 200:
            raise SetupError(f"{what or path}: {method} {path} answered {status}: {answer}",
                             missing=status in (404, 405))
        return answer


def start(bin_path, cores, rundir, sim_base, oidc_base, custom=None, redis_url=None,
          key_rules=None, guarded=False, extra_env=None):
    """Start a full-mode gateway and make it ready: (Proc, base URL, API key).
    `custom`: (base URL, key) of an OpenAI-compatible server to connect;
    `redis_url`: the gateway's REDIS_URL (limits counted there); `key_rules`:
    more fields of the API key (a budget, rate limits); `guarded`:
    guardrails on, with a profile and a rule that matches no request;
    `extra_env`: more of the gateway's environment (a `DATABASE_URL`)."""
    gw, base, key, _ui = start_signed_in(bin_path, cores, rundir, sim_base, oidc_base, custom,
                                         redis_url, key_rules, guarded, extra_env)
    return gw, base, key


def start_signed_in(bin_path, cores, rundir, sim_base, oidc_base, custom=None, redis_url=None,
                    key_rules=None, guarded=False, extra_env=None):
    """As `start`, and the admin's signed-in UiClient as a fourth value (a
    second sign-in within the same TOTP step would be refused)."""
    data = os.path.join(rundir, "gateway-full-data")
    os.makedirs(data, exist_ok=True)
    port = procs.free_port()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "GATEWAY_MODE": "full",
        "DATA_DIR": data,
        "INITIAL_ADMIN_EMAIL": ADMIN_EMAIL,
        "INITIAL_ADMIN_PASSWORD": ADMIN_PASSWORD,
        "INITIAL_ADMIN_TOTP_SECRET": ADMIN_TOTP_SECRET,
        "COOKIE_SECURE": "false",
        "UPSTREAM_API_ENDPOINT": sim_base,
        "UPSTREAM_OIDC_ENDPOINT": oidc_base,
        "SERVER_HOST": "127.0.0.1",
        "SERVER_PORT": str(port),
        "LOG_LEVEL": os.environ.get("BENCH_GATEWAY_LOG_LEVEL", "info"),
        "LOG_FORMAT": "text",
        # The simulator's custom endpoint is on this machine.
        "CUSTOM_ALLOW_PRIVATE_NETWORKS": "true",
    }
    if redis_url:
        env["REDIS_URL"] = redis_url
    if guarded:
        env["GUARDRAILS_ENABLED"] = "true"
        env["GUARDRAIL_ENDPOINT"] = sim_base + "/guardrail-service"
    env.update(extra_env or {})
    cmd = cores.wrap([bin_path], cores.relay)
    gw = procs.Proc("gateway (full mode)", cmd, os.path.join(rundir, "gateway-full.log"),
                    env=env, cwd=rundir)
    base = f"http://127.0.0.1:{port}"
    try:
        procs.wait_http(f"{base}/health", gw, timeout=300)
        ui = UiClient(port)
        key = prepare(ui, key_rules)
        if custom:
            connect_custom(ui, *custom)
        if guarded:
            add_unmatched_guardrail(ui)
    except (SetupError, RuntimeError, OSError):
        gw.stop()
        raise
    return gw, base, key, ui


def prepare(ui, key_rules=None):
    """Sign in as the seeded admin, create an API key (with `key_rules`),
    connect `primary`."""
    answer = ui.must("POST", "/_ui/api/auth/login",
                     {"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD}, "sign-in")
    if answer.get("needs_2fa"):
        # A code is accepted once per time step: a fresh step is not needed
        # here, this is the first use.
        answer = ui.must("POST", "/_ui/api/auth/login/2fa",
                         {"login_token": answer.get("login_token"),
                          "code": totp(ADMIN_TOTP_SECRET)}, "2FA sign-in")
    if "gw_session" not in ui.cookies:
        raise SetupError(f"sign-in set no session cookie: {answer}")
    key = ui.must("POST", "/_ui/api/keys", {"label": "benchmark", **(key_rules or {})},
                  "API key").get("key")
    if not key:
        raise SetupError("the API key answer holds no key")
    flow = ui.must("POST", "/_ui/api/upstream/setup", {}, "upstream device flow")
    interval = max(1, int(flow.get("interval", 1)))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(interval + 0.1)
        status = ui.must("POST", "/_ui/api/upstream/poll",
                         {"device_code": flow.get("device_code")}, "upstream poll").get("status")
        if status == "success":
            return key
        if status == "slow_down":
            interval += 5
        elif status != "pending":
            raise SetupError(f"upstream device flow ended with {status}")
    raise SetupError("upstream device flow not approved within 60 s")


def connect_custom(ui, base_url, api_key):
    """The signed-in user's own `custom` account (checked by the gateway with
    one model listing before it is stored)."""
    status, answer = ui.call("POST", "/_ui/api/providers/custom/accounts",
                             {"base_url": base_url, "api_key": api_key, "label": "bench"})
    if status != 201:
        raise SetupError(f"connecting custom: answered {status}: {answer}",
                         missing=status in (404, 405))


def add_unmatched_guardrail(ui):
    """A guardrail profile and a rule that checks both stages of requests
    for a model nobody asks for: every request evaluates the rule, none
    calls the guardrail service."""
    def created(path, body):
        status, answer = ui.call("POST", path, body)
        if status != 201:
            raise SetupError(f"POST {path} answered {status}: {answer}")
        return answer
    profile = created("/_ui/api/guardrails/profiles",
                      {"name": "bench", "guardrail_id": "bench", "guardrail_version": "DRAFT",
                       "region": "us-east-1", "access_key_id": "AKIDSIMGUARDRAIL",
                       "secret_access_key": "sim-guardrail-secret-key"})
    created("/_ui/api/guardrails/rules",
            {"name": "unmatched", "cel_expression": 'request.model == "no-such-model"',
             "apply_to": "Both", "sampling_rate": 100, "profile_ids": [profile.get("id")]})


def recorded_usage(data_dir):
    """Requests recorded as usage in the full-mode gateway's SQLite file (None if
    unreadable). A row may stand for several requests (its `requests`); on a
    schema without that column, each row is one."""
    path = os.path.join(data_dir, "gateway.db")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            for query in ("SELECT COALESCE(SUM(requests), 0) FROM usage_events",
                          "SELECT count(*) FROM usage_events",
                          "SELECT count(*) FROM usage_records"):
                try:
                    n = db.execute(query).fetchone()[0]
                except sqlite3.Error:
                    continue
                if n:
                    return n
            return 0
        finally:
            db.close()
    except sqlite3.Error:
        return None
