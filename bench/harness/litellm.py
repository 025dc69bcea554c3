"""LiteLLM's proxy as the peer: its config (relaying to the simulator's
OpenAI-compatible endpoint), its start on the relay core, and its version."""

import os
import subprocess

from . import procs

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATE = os.path.join(os.path.dirname(HERE), "litellm", "config.yaml.in")
MASTER_KEY = "sk-bench-litellm"


def write_config(path, api_base, api_key, model):
    with open(TEMPLATE, encoding="utf-8") as f:
        text = f.read()
    for key, value in (("MODEL", model), ("API_BASE", api_base), ("API_KEY", api_key),
                       ("MASTER_KEY", MASTER_KEY)):
        text = text.replace("@" + key + "@", value)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def version(exe):
    python = os.path.join(os.path.dirname(exe), "python")
    try:
        out = subprocess.run([python, "-c", "import importlib.metadata as m;"
                              "print(m.version('litellm'))"],
                             capture_output=True, text=True, timeout=60)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def start(exe, workdir, api_base, api_key, model, port, cores):
    config = os.path.join(workdir, "litellm.yaml")
    write_config(config, api_base, api_key, model)
    env = {
        "PATH": os.path.dirname(exe) + os.pathsep + os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", workdir),
        # No network here: use the cost map shipped in the package, send no telemetry.
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_TELEMETRY": "False",
        "LITELLM_LOG": "ERROR",
        "NO_DOCS": "True",
    }
    cmd = cores.wrap([exe, "--config", config, "--host", "127.0.0.1", "--port", str(port),
                      "--num_workers", "1"], cores.relay)
    proc = procs.Proc("litellm", cmd, os.path.join(workdir, "litellm.log"), env=env, cwd=workdir)
    procs.wait_http(f"http://127.0.0.1:{port}/health/liveliness", proc, timeout=240)
    return proc
