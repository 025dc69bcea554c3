#!/usr/bin/env python3
"""The import graph between each crate's top-level modules, checked.

For every crate under crates/, each production file (tests cut off: sibling
`*_tests.rs` / `tests.rs` files and everything from an inline `#[cfg(test)]`
on) belongs to the top-level module of its path (src/providers/direct/mod.rs
-> `providers`). A `crate::name` path in its code (comments ignored) is an
arrow from that module to `name`. The check fails when:

- two top-level modules of one crate reach each other (a cycle), or
- in a crate with a declared layer order (LAYERS below, lowest first; the
  same order as docs/architecture.md), more than MAX_UPWARD arrows point
  from a lower module up to a higher one.

    scripts/module-graph.py            check every crate (exit 1 on a problem)
    scripts/module-graph.py --print    also print each crate's arrows
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Lowest first: a module may import the ones before it. Modules on one line
# are peers (an arrow between them is neither up nor down).
LAYERS = {
    "gateway": [
        ["error", "config", "crypto", "ids", "logging", "body", "telemetry", "cache", "code_pages"],
        ["store", "upstream"],
        ["auth", "usage", "sso", "limits", "guardrails"],
        ["turn"],
        ["providers"],
        ["state"],
        ["pipeline", "live", "routes", "ui_api", "console"],
        ["server"],
        ["cli"],
    ],
}
MAX_UPWARD = {"gateway": 3}

CRATE_PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")


def production_text(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    cut = text.find("#[cfg(test)]")
    if cut != -1:
        text = text[:cut]
    lines = []
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("//"):
            continue
        lines.append(line)
    return "\n".join(lines)


def top_module(src: Path, path: Path) -> str | None:
    rel = path.relative_to(src)
    if len(rel.parts) == 1:
        stem = rel.stem
        return None if stem in ("lib", "main") else stem
    return rel.parts[0]


def arrows(src: Path) -> tuple[set[str], set[tuple[str, str]]]:
    modules: set[str] = set()
    edges: set[tuple[str, str]] = set()
    files = [
        p
        for p in src.rglob("*.rs")
        if not p.name.endswith("_tests.rs") and p.name != "tests.rs"
    ]
    for path in files:
        module = top_module(src, path)
        if module is not None:
            modules.add(module)
    for path in files:
        module = top_module(src, path)
        if module is None:
            continue
        for target in CRATE_PATH.findall(production_text(path)):
            if target != module and target in modules:
                edges.add((module, target))
    return modules, edges


def cycles(modules: set[str], edges: set[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    graph = {m: sorted(b for a, b in edges if a == m) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for v in sorted(modules):
        if v not in index:
            visit(v)
    return found


def main() -> int:
    show = "--print" in sys.argv[1:]
    problems = []
    for crate in sorted((ROOT / "crates").iterdir()):
        src = crate / "src"
        if not src.is_dir():
            continue
        name = crate.name
        modules, edges = arrows(src)
        for component in cycles(modules, edges):
            problems.append(f"{name}: import cycle between {', '.join(component)}")
        layers = LAYERS.get(name)
        upward: list[tuple[str, str]] = []
        if layers is not None:
            rank = {m: i for i, layer in enumerate(layers) for m in layer}
            unranked = sorted(modules - rank.keys())
            if unranked:
                problems.append(
                    f"{name}: modules missing from the layer order in scripts/module-graph.py: "
                    + ", ".join(unranked)
                )
            upward = sorted((a, b) for a, b in edges if rank.get(a, 0) < rank.get(b, 0))
            limit = MAX_UPWARD.get(name, 0)
            if len(upward) > limit:
                listed = ", ".join(f"{a} -> {b}" for a, b in upward)
                problems.append(f"{name}: {len(upward)} upward imports (at most {limit}): {listed}")
        if show:
            print(f"{name}: {len(modules)} top-level modules, {len(edges)} arrows, {len(upward)} upward")
            for a, b in sorted(edges):
                mark = "  (upward)" if (a, b) in upward else ""
                print(f"  {a} -> {b}{mark}")
    for p in problems:
        print(f"module graph: {p}", file=sys.stderr)
    if not problems:
        print("module graph: no cycles between top-level modules; upward imports within limits")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
