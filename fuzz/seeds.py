#!/usr/bin/env python3
"""Seed corpora and dictionaries for the fuzz targets, generated from the
conformance fixtures (crates/translate/tests/conformance/fixtures), the
rule expressions of the `rules` crate's tests, the configuration table of
docs/configuration.md and the gateway's cookie names.

Usage: seeds.py OUT_DIR  -> OUT_DIR/<target>/<seed> and OUT_DIR/<target>.dict

Each chunking target's seed is one chunking byte followed by the input (see
fuzz/src/lib.rs); every fixture is written with a few chunking bytes.
"""

import json
import pathlib
import re
import struct
import sys
import zlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates/translate/tests/conformance/fixtures"
RULE_TESTS = ROOT / "crates/rules/src/expression_tests.rs"
CONFIG_DOC = ROOT / "docs/configuration.md"
CHUNKINGS = [0, 7, 64, 255]


def frames_lines(path):
    """(event type, payload) of each line of a `.frames` fixture."""
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, _, payload = line.partition(" ")
        yield name, payload.encode()


def header(name, value):
    name, value = name.encode(), value.encode()
    return bytes([len(name)]) + name + b"\x07" + struct.pack(">H", len(value)) + value


def event_frame(event_type, payload):
    """An AWS event-stream event frame, as wire::eventstream::encode_event writes it."""
    headers = (
        header(":event-type", event_type)
        + header(":content-type", "application/json")
        + header(":message-type", "event")
    )
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    prelude += struct.pack(">I", zlib.crc32(prelude))
    body = prelude + headers + payload
    return body + struct.pack(">I", zlib.crc32(body))


def json_keys(value, keys):
    if isinstance(value, dict):
        for k, v in value.items():
            keys.add(k)
            json_keys(v, keys)
    elif isinstance(value, list):
        for v in value:
            json_keys(v, keys)
    elif isinstance(value, str) and len(value) < 24:
        keys.add(value)


def write_dict(path, words):
    lines = []
    for w in sorted(words):
        escaped = json.dumps(w)[1:-1].replace("\\", "\\\\").replace('"', '\\"')
        lines.append(f'"\\"{escaped}\\""')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(out):
    out = pathlib.Path(out)
    corpora = {}

    def seed(target, name, data):
        d = out / target
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_bytes(data)
        corpora[target] = corpora.get(target, 0) + 1

    payload_words = set()
    for path in sorted(FIXTURES.glob("*/*.sse")):
        data = path.read_bytes()
        name = f"{path.parent.name}_{path.stem}"
        for c in CHUNKINGS:
            seed("sse", f"{name}_{c}", bytes([c]) + data)
            # The watch's first byte also says which format and whether the
            # client wants usage (fuzz_targets/native_watch.rs).
            fmt = 1 if path.parent.name == "openai" else 0
            seed("native_watch", f"{name}_{c}", bytes([c & ~3 | fmt]) + data)
            seed("native_watch", f"{name}_{c}_strip", bytes([c & ~3 | fmt | 2]) + data)
        # Each event's payload alone (fuzz_targets/provider_payloads.rs).
        payloads = [
            line[len(b"data:"):].strip()
            for line in data.splitlines()
            if line.startswith(b"data:")
        ]
        for i, payload in enumerate(payloads):
            seed("provider_payloads", f"{name}_{i}", payload)
            try:
                json_keys(json.loads(payload), payload_words)
            except ValueError:
                pass  # `[DONE]`

    write_dict(out / "provider_payloads.dict", payload_words)

    for path in sorted(FIXTURES.glob("primary/*.frames")):
        lines = list(frames_lines(path))
        stream = b"".join(event_frame(n, p) for n, p in lines)
        text = "".join(
            json.loads(p).get("content", "") for n, p in lines if n == "assistantResponseEvent"
        )
        for c in CHUNKINGS:
            seed("eventstream", f"{path.stem}_{c}", bytes([c]) + stream)
            seed("thinking", f"{path.stem}_{c}", bytes([c]) + text.encode())
        for flags in range(4):
            seed("primary_events", f"{path.stem}_{flags}", bytes([flags]) + path.read_bytes())

    dicts = {"openai_request": set(), "anthropic_request": set()}
    for target, fixture in [
        ("openai_request", "requests/openai_client.json"),
        ("anthropic_request", "requests/anthropic_client.json"),
    ]:
        req = json.loads((FIXTURES / fixture).read_text(encoding="utf-8"))
        json_keys(req, dicts[target])
        seed(target, "fixture", json.dumps(req, ensure_ascii=False).encode())
        # Shorter conversations and the streaming variant of the same request.
        for n in range(1, len(req.get("messages", []))):
            short = dict(req, messages=req["messages"][:n])
            seed(target, f"first_{n}", json.dumps(short).encode())
        seed(target, "stream", json.dumps(dict(req, stream=True)).encode())
    for target, words in dicts.items():
        write_dict(out / f"{target}.dict", words)

    rule_seeds(seed, out)
    config_seeds(seed)
    cookie_seeds(seed)

    for target, n in sorted(corpora.items()):
        print(f"{target}: {n} seeds")


def rust_strings(text):
    """The string literals of Rust source: "..." and r#"..."#."""
    for m in re.finditer(r'r#"(.*?)"#|"((?:[^"\\\n]|\\.)*)"', text):
        if m.group(1) is not None:
            yield m.group(1)
        else:
            yield m.group(2).encode().decode("unicode_escape", errors="ignore")


# Facts header of cel_rules (fuzz_targets/cel_rules.rs): flags, then numbers.
FACTS = [bytes(16), bytes([0x1F]) + bytes(15), bytes([0x85, 0, 0, 0, 3, 0, 0, 0, 0xB0, 4]) + bytes(6)]


def rule_seeds(seed, out):
    """cel_rules: every string literal of the rules' tests that mentions
    `request` (the expressions they compile), after a few fact headers; the
    CEL pieces of the tests as the dictionary."""
    text = RULE_TESTS.read_text(encoding="utf-8")
    expressions = sorted({s for s in rust_strings(text) if "request" in s})
    for i, expr in enumerate(expressions):
        for j, facts in enumerate(FACTS):
            seed("cel_rules", f"test_{i}_{j}", facts + expr.encode())
    pieces = text[text.find("const PIECES"):]
    pieces = pieces[: pieces.find("];")]
    words = set(rust_strings(pieces))
    words |= {"request." + v for v in (
        "model", "api_format", "message_count", "has_tools", "is_streaming", "content_length")}
    lines = ['"' + "".join(dict_char(c) for c in w) + '"' for w in sorted(words) if w]
    (out / "cel_rules.dict").write_text("\n".join(lines) + "\n", encoding="utf-8")


def dict_char(c):
    """One character of a libFuzzer dictionary entry, escaped unless plain."""
    if c.isascii() and (c.isalnum() or c in "._ -+*/%<>=!&|()[]{}:,?'"):
        return c
    return "".join(f"\\x{b:02x}" for b in c.encode())


def config_seeds(seed):
    """config_values: each default of docs/configuration.md's table under
    each value type, and the rendering choices with a few values."""
    defaults = set()
    for line in CONFIG_DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("|"):
            for cell in re.findall(r"`([^`|]{1,24})`", line):
                if "=" not in cell:
                    defaults.add(cell)
    extra = ["30", "30s", "5m", "1h30m", "500ms", "1d", "10MiB", "512KiB", "1GB", "true", "0",
             "off", "errors", "ALL", " 15s ", "65535", "4294967295", "18446744073709551615ms"]
    for i, text in enumerate(sorted(defaults | set(extra))):
        for choice in range(7):
            seed("config_values", f"v{i}_{choice}", bytes([choice]) + text.encode())
    for i, n in enumerate([0, 1, 999, 1000, 60_000, 3_600_000, 1 << 20, 1 << 30, 2**64 - 1]):
        for choice in (7, 8):
            seed("config_values", f"n{i}_{choice}", bytes([choice]) + n.to_bytes(8, "little"))


def cookie_seeds(seed):
    """ui_cookies: `name \\0 value \\0 header` as browsers send them."""
    headers = [
        "gw_session=0b6f3c1e-8f0a-4d3e-9c55-2f4f5b0b8a11; csrf_token=Zm9vYmFy",
        'a=1; gw_session="quoted"; flag; b = 2',
        "csrf_token=; gw_sso_flow=abc-DEF_123",
        "",
    ]
    for i, header in enumerate(headers):
        for name, value in [("gw_session", "sid"), ("csrf_token", "tok"), ("x", "")]:
            seed("ui_cookies", f"h{i}_{name}", f"{name}\0{value}\0{header}".encode())


if __name__ == "__main__":
    main(sys.argv[1])
