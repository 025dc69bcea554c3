#!/usr/bin/env python3
"""Seed corpora and dictionaries for the fuzz targets, generated from the
conformance fixtures (crates/translate/tests/conformance/fixtures).

Usage: seeds.py OUT_DIR  -> OUT_DIR/<target>/<seed> and OUT_DIR/<target>.dict

Each chunking target's seed is one chunking byte followed by the input (see
fuzz/src/lib.rs); every fixture is written with a few chunking bytes.
"""

import json
import pathlib
import struct
import sys
import zlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "crates/translate/tests/conformance/fixtures"
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

    for target, n in sorted(corpora.items()):
        print(f"{target}: {n} seeds")


if __name__ == "__main__":
    main(sys.argv[1])
