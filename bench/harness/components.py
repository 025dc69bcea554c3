"""Instructions per request by component, from the callgrind files that
`bench/instructions.sh --keep DIR` leaves (docs/benchmarks.md,
"Instructions per request", "By component").

    python3 -m harness.components DIR [SCENARIO ...]
    python3 -m harness.components --cmp DIR_BEFORE DIR_AFTER [SCENARIO ...]
    python3 -m harness.components --top 30 [--row COMPONENT] DIR [SCENARIO ...]
    python3 -m harness.components --unsplit DIR [SCENARIO ...]

Each function's self cost (`callgrind_annotate --inclusive=no`) goes to one
component, chosen by its symbol through RULES, first match wins; code that
is no component's own (the standard library's containers, what hyper's
server and client share, libc) is split among the components of its
callers, in proportion to their calls; what nothing claims is "other". A
component's figure per request is, like the total's, (its count at 1,200
requests - its count at 200) / 1,000, so the rows add up to the total of
`bench/instructions.sh`.

Self cost charges a library's function to the library, not to the step of
the gateway that called it: `serde_json` reading the upstream's answer
lands in "parse" with the client's body, a `memcpy` anywhere in "memory",
`core::fmt` wherever it formats in "fmt". The rows name code, not steps of
a request.
"""

import argparse
import os
import re
import subprocess
import sys

FEW, MANY = 200, 1200

SERVER = "server"
AUTH = "auth"
PARSE = "parse"
CONVERT = "convert"
UPSTREAM = "upstream client"
DECODE = "decode"
ENCODE = "encode"
LOGGING = "logging"
FMT = "fmt"
USAGE = "usage"
LIMITS = "limits"
GUARDRAILS = "guardrails"
TELEMETRY = "telemetry"
RUNTIME = "runtime"
MEMORY = "memory"
OTHER = "other"
# Not per-request work: quanta (the clock of the metrics exporter)
# calibrates itself at start-up for a fixed time, so its count differs
# between the two runs and leaks into the difference, by up to a few
# thousand a request either way.
CALIBRATION = "start-up clock calibration"
# Not a row: a function so generic (a hash map's probe, an `Arc`'s drop)
# that its cost belongs to whoever calls it...
CALLERS = "its callers"
# ... unless asked not to split such functions (`--unsplit`): then they are
# this row.
GENERIC = "generic and shared code"

# The table's rows, in this order.
COMPONENTS = [SERVER, AUTH, PARSE, CONVERT, UPSTREAM, DECODE, ENCODE, LOGGING, FMT,
              USAGE, LIMITS, GUARDRAILS, TELEMETRY, RUNTIME, MEMORY, CALIBRATION, GENERIC,
              OTHER]

# (pattern, component): the first pattern that matches the start of a
# function's subject (see `subject`) decides. Rust symbols are demangled
# paths (`hyper::proto::h1::role::Server`, `gateway::server::...`); C
# functions are bare names (`sqlite3_step`, `mi_free`, `__memcpy_avx...`).
# The gateway's own modules come before the libraries, and a narrower path
# before the wider one it is part of. CALLERS: code that is no component's
# own (generic containers, code hyper's server and client share) is charged
# to whoever calls it.
RULES = [
    # -- the gateway's own modules (crates/gateway/src)
    (r"gateway::server::client_auth", AUTH),
    (r"gateway::(server|serve|routes|state|error|cli|config|main)\b", SERVER),
    (r"gateway::(auth|crypto)\b", AUTH),
    (r"gateway::body\b", PARSE),
    (r"gateway::pipeline::respond\b", ENCODE),
    (r"gateway::providers::\w+::credentials\b", UPSTREAM),
    (r"gateway::providers::(primary::(stream|relay)|direct::(stream|passthrough))\b", DECODE),
    (r"gateway::(pipeline|turn|providers|ids)\b", CONVERT),
    (r"gateway::upstream::reader\b", DECODE),
    (r"gateway::upstream\b", UPSTREAM),
    (r"gateway::(usage|store)\b", USAGE),
    (r"gateway::limits\b", LIMITS),
    (r"gateway::guardrails\b", GUARDRAILS),
    (r"gateway::telemetry\b", TELEMETRY),
    (r"gateway::(logging|live)\b", LOGGING),
    # -- the pure crates (crates/wire, crates/translate)
    (r"wire::[\w:]+::_::<impl serde(_core)?::ser::Serialize\b", ENCODE),
    (r"wire::(openai|anthropic)::(request|content)\b", PARSE),
    (r"wire::(openai|anthropic)::(response|stream|error|models)\b", DECODE),
    (r"wire::(eventstream::encode|sse::write|json::escape)\b", ENCODE),
    (r"wire::(eventstream|sse|primary)\b", DECODE),
    (r"wire::(json::raw_object|validate|openai::validate|anthropic::(validate|de))\b", PARSE),
    (r"wire::json\b", ENCODE),
    (r"translate::\w+::(encoder|response)\b", ENCODE),
    # the hand-written readers of provider payloads stand in for serde_json
    (r"translate::(json_scan|openai::chunk|anthropic::event)\b", PARSE),
    (r"translate::(\w+::(parser|watch)|primary::stream|watch)\b", DECODE),
    (r"translate::tokens\b", USAGE),  # the token estimate, for usage only
    (r"translate::", CONVERT),
    # -- HTTP: hyper's server side, its client side, and what they share
    (r"hyper::(server|proto::h1::role::Server|proto::h1::dispatch::Server)\b", SERVER),
    (r"hyper_util::(server|service)\b", SERVER),
    (r"(axum|axum_core|matchit|tower|tower_http|tower_layer|tower_service)::", SERVER),
    (r"hyper::(client|proto::h1::role::Client|proto::h1::dispatch::Client)\b", UPSTREAM),
    (r"hyper_util::client\b", UPSTREAM),
    (r"(reqwest|hyper_rustls|rustls|tokio_rustls|webpki|ring|want|try_lock|url|idna"
     r"|form_urlencoded|aws_sigv4|aws_credential_types|aws_smithy_\w+)::", UPSTREAM),
    (r"(hyper|hyper_util|http|http_body|http_body_util|httparse|httpdate|h2)::", CALLERS),
    # -- JSON and serde, by direction
    (r"serde_json::(ser|value::ser)\b", ENCODE),
    (r"(serde_json|serde_path_to_error)::", PARSE),
    (r"serde(_core)?::(ser|__private::ser|private::ser)\b", ENCODE),
    (r"serde(_core)?::", PARSE),
    (r"crc32fast::", DECODE),
    # -- auth: the key's hash and the caches of keys and credentials
    (r"(sha2|subtle|digest|moka|crossbeam_\w+|tagptr)::", AUTH),
    # -- usage rows in SQLite
    (r"(sqlx|sqlx_core|sqlx_sqlite|libsqlite3_sys|flume|futures_intrusive)::", USAGE),
    (r"sqlite3", USAGE),
    # -- limits, guardrails, metrics
    (r"quanta::Calibration\b", CALIBRATION),
    (r"(redis|combine)::", LIMITS),
    (r"(rules|cel|cel_interpreter|cel_parser)::", GUARDRAILS),
    (r"(metrics|metrics_exporter_prometheus|metrics_util|quanta)::", TELEMETRY),
    # -- logging
    (r"(tracing|tracing_core|tracing_subscriber|tracing_log|sharded_slab|thread_local"
     r"|nu_ansi_term)::", LOGGING),
    # -- formatting, wherever it is called from
    (r"(core::fmt|alloc::fmt|core::num::flt2dec)\b", FMT),
    (r"alloc::string::String as core::fmt::Write", FMT),
    # -- memory: the allocator, copies, buffers
    (r"(mimalloc|libmimalloc_sys|bytes)::", MEMORY),
    (r"(alloc::(alloc|raw_vec)|std::alloc|__rust_(alloc|dealloc|realloc)|__rdl_)", MEMORY),
    (r"_?mi_", MEMORY),
    (r"(__)?(memcpy|memmove|memset|memcmp|bcmp)", MEMORY),
    (r"(malloc|free|realloc|calloc|cfree|_int_(malloc|free|realloc)|tcache_\w+|sysmalloc"
     r"|malloc_consolidate|unlink_chunk|alloc_perturb)\b", MEMORY),
    # -- the async runtime
    (r"(tokio|tokio_util|mio|futures|futures_util|futures_core|futures_channel|futures_task"
     r"|async_stream|pin_project_lite|arc_swap|socket2)::", RUNTIME),
    (r"std::(sys|io|net|time|panicking|rt|thread::(spawn|park|Thread))\b", RUNTIME),
    # -- generic code: the standard library's containers, strings, hashing,
    # iterators, locks, thread-locals and futures, small utility crates
    (r"(core|alloc|std|parking_lot|parking_lot_core|lock_api|hashbrown|foldhash|indexmap"
     r"|hashlink|smallvec|slab|memchr"
     r"|percent_encoding|itoa|ryu|zmij|rand|rand_core|rand_chacha|getrandom|uuid|hex|base64"
     r"|either|once_cell|event_listener|event_listener_strategy|async_lock"
     r"|futures_executor)::", CALLERS),
    # -- libc and libm (system calls' user side, locks, strings, maths) and
    # the compiler's helpers: C functions without a crate path
    (r"[\w.]+$", CALLERS),
]

# C code compiled into the gateway whose functions have no common prefix
# (SQLite's internal `balance_nonroot`, `yy_reduce`): known by their source file.
SOURCE_RULES = [
    (r".*/sqlite3\.c$", USAGE),
    (r".*/mimalloc/", MEMORY),
]

COMPILED = [(re.compile(pattern), component) for pattern, component in RULES]
COMPILED_SOURCES = [(re.compile(pattern), component) for pattern, component in SOURCE_RULES]


def subject(symbol):
    """The part of a symbol the rules look at: the implementing type of a
    trait method (`<serde_json::de::Deserializer<R> as serde::Deserializer>::x`
    -> `serde_json::de::...`), the dropped type of drop glue
    (`core::ptr::drop_in_place<hyper::...>` -> `hyper::...`), otherwise the
    symbol itself."""
    s = symbol
    while True:
        if s.startswith("core::ptr::drop_in_place<"):
            s = s[len("core::ptr::drop_in_place<"):]
        elif s.startswith("<"):
            s = s[1:]
        elif s.startswith("&mut "):
            s = s[len("&mut "):]
        elif s.startswith(("&", "*", "[", "(")):
            s = s[1:]
        elif s.startswith(("const ", "mut ", "dyn ")):
            s = s.split(" ", 1)[1]
        else:
            return s


def trait_of(symbol):
    """The trait of a trait method (`<T as core::fmt::Display>::fmt` ->
    `core::fmt::Display>::fmt`), or None."""
    if not symbol.startswith("<") or " as " not in symbol:
        return None
    return subject(symbol.split(" as ", 1)[1])


def classify(symbol, source=""):
    """The component of a function, by its symbol: the type it belongs to,
    or when no rule knows that type (`<&T as core::fmt::Display>::fmt`),
    the trait it implements; a C function without a known prefix by its
    source file."""
    # Built as one optimisation unit (fat LTO), quanta's calibration is
    # inlined into the lazy initialiser of its clock: a `once_cell` closure
    # whose code is quanta's.
    if symbol.startswith("once_cell::imp::OnceCell") and "/quanta-" in source:
        return CALIBRATION
    for pattern, component in COMPILED_SOURCES:
        if pattern.match(source):
            return component
    for s in (subject(symbol), trait_of(symbol)):
        if s is None:
            continue
        for pattern, component in COMPILED:
            if pattern.match(s):
                return component
    return OTHER


LINE = re.compile(r"^\s*([\d,]+)\s+(<|\*)?\s*(.*)$")
OBJECT = re.compile(r" \[[^\[\]]*\]$")
CALLS = re.compile(r" \(([\d,]+)x\)(?=( \[[^\[\]]*\])?$)")


class Profile:
    """One callgrind output file: each function's self cost (its own
    instructions, not those of what it calls), who calls it how often, and
    the program total."""

    def __init__(self, out_file, split_generic=True):
        self.split_generic = split_generic
        text = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100",
                               "--inclusive=no", "--show-percs=no", "--tree=caller", out_file],
                              capture_output=True, text=True, check=True).stdout
        self.costs, self.sources, self.callers, self.total = {}, {}, {}, None
        calling = {}
        for line in text.splitlines():
            m = LINE.match(line)
            if not m:
                continue
            cost, mark, where = int(m.group(1).replace(",", "")), m.group(2), m.group(3)
            if where == "PROGRAM TOTALS":
                self.total = cost
            elif mark == "<":
                # weighed by calls, not by their inclusive cost: the cost of
                # a call says more about what the caller gets done than
                # about this function's share of it
                times = CALLS.search(where)
                caller, _source = function_of(where)
                calls = int(times.group(1).replace(",", "")) if times else 1
                calling[caller] = calling.get(caller, 0) + calls
            else:
                # the function the `<` lines above were callers of
                function, source = function_of(where)
                self.costs[function] = self.costs.get(function, 0) + cost
                self.sources.setdefault(function, source)  # its costliest file
                into = self.callers.setdefault(function, {})
                for caller, c in calling.items():
                    into[caller] = into.get(caller, 0) + c
                calling = {}
        if self.total is None:
            raise SystemExit(f"no PROGRAM TOTALS in {out_file}")
        self.shares = {}

    def charged(self):
        """{function: {component: instructions}}: each function's self cost
        to its component, or, for a function RULES charge to its callers,
        split among its callers' components in proportion to their calls."""
        return {function: {c: cost * part for c, part in self.shares_of(function, set()).items()}
                for function, cost in self.costs.items()}

    def shares_of(self, function, visiting):
        """{component: fraction} of one function's self cost."""
        if function in self.shares:
            return self.shares[function]
        component = classify(function, self.sources.get(function, ""))
        if component != CALLERS:
            return {component: 1.0}
        if not self.split_generic:
            return {GENERIC: 1.0}
        visiting.add(function)
        weights = {}
        for caller, calls in self.callers.get(function, {}).items():
            if caller in visiting:  # recursion: the outer call decides
                continue
            for c, part in self.shares_of(caller, visiting).items():
                weights[c] = weights.get(c, 0) + calls * part
        visiting.discard(function)
        whole = sum(weights.values())
        shares = {c: w / whole for c, w in weights.items()} if whole else {OTHER: 1.0}
        self.shares[function] = shares
        return shares


def function_of(where):
    """`file:function (Nx) [object]` -> (function, file). A function
    without a symbol (`0x...`) keeps its object's name, the only hint left;
    a C function loses its symbol version (`pthread_mutex_lock@@GLIBC_2.2.5`)."""
    obj = OBJECT.search(where)
    name = CALLS.sub("", where[:obj.start()] if obj else where)
    source, function = name.split(":", 1) if ":" in name else ("", name)
    if function.startswith("0x") and obj:
        function = f"{function} {os.path.basename(obj.group(0).strip(' []'))}"
    elif "@" in function and "::" not in function:
        function = function.split("@", 1)[0]
    return function, source


class Split:
    """One scenario's instructions per request: `components` {component:
    instructions}, `parts` {function: {component: instructions}}, `total`,
    and `via_callers`, the functions charged to their callers."""

    def __init__(self, few_file, many_file, split_generic=True):
        few, many = Profile(few_file, split_generic), Profile(many_file, split_generic)
        runs = MANY - FEW
        few_parts, many_parts = few.charged(), many.charged()
        self.parts = {}
        for function in set(few_parts) | set(many_parts):
            before, after = few_parts.get(function, {}), many_parts.get(function, {})
            self.parts[function] = {c: (after.get(c, 0) - before.get(c, 0)) / runs
                                    for c in set(before) | set(after)}
        self.components = dict.fromkeys(COMPONENTS, 0.0)
        for part in self.parts.values():
            for c, cost in part.items():
                self.components[c] += cost
        self.total = (many.total - few.total) / runs
        self.via_callers = {f for f in self.parts
                            if classify(f, many.sources.get(f, few.sources.get(f, ""))) == CALLERS}
        if abs(sum(self.components.values()) - self.total) > 1:
            # every function is listed at --threshold=100: they add up to the total
            print(f"warning: {many_file}: the functions add up to "
                  f"{sum(self.components.values()):,.0f} per request, the total is "
                  f"{self.total:,.0f}", file=sys.stderr)


def files_of(directory, scenario):
    return tuple(os.path.join(directory, f"callgrind.{scenario}.{n}") for n in (FEW, MANY))


def scenarios_in(directory):
    """The scenarios with both callgrind files in `directory`, sorted."""
    found = []
    for name in sorted(os.listdir(directory)):
        m = re.fullmatch(r"callgrind\.(.+)\." + str(MANY), name)
        if m and os.path.exists(os.path.join(directory, f"callgrind.{m.group(1)}.{FEW}")):
            found.append(m.group(1))
    return found


def measure(directory, scenarios, split_generic=True):
    """{scenario: Split} for the files kept in `directory`."""
    return {s: Split(*files_of(directory, s), split_generic) for s in scenarios}


def count(v, sign=""):
    """An instruction count, whole (no "-0" for a rounding error below one)."""
    return f"{round(v) + 0:{sign},d}"


def share(part, total):
    if not total:
        return ""
    pct = round(part / total * 100, 1) + 0.0
    return f"{pct:.1f} %"


def used_rows(splits):
    """The components that count in at least one split (a row of zeros
    everywhere says nothing), and "other" always: it shows what the rules miss."""
    return [c for c in COMPONENTS
            if c == OTHER or any(round(s.components[c]) for s in splits)]


def table(measured):
    """Markdown: a row per component, per scenario its instructions per
    request and its share of the total."""
    names = list(measured)
    lines = ["| Component | " + " | ".join(f"`{n}` | share" for n in names) + " |",
             "|---|" + "--:|--:|" * len(names)]
    for c in used_rows(measured.values()):
        cells = [f"{count(measured[n].components[c])} | "
                 f"{share(measured[n].components[c], measured[n].total)}" for n in names]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    lines.append("| **total** | " + " | ".join(f"**{count(measured[n].total)}** | 100 %"
                                             for n in names) + " |")
    return "\n".join(lines)


def change(before, after):
    if not before:
        return ""
    return f"{(after - before) / before * 100:+.1f} %"


def cmp_table(before, after):
    """Markdown: per scenario, a component's figure before, after, and the
    difference."""
    names = [n for n in before if n in after]
    lines = ["| Component | " + " | ".join(f"`{n}` before | after | change" for n in names)
             + " |", "|---|" + "--:|--:|--:|" * len(names)]
    for c in used_rows([before[n] for n in names] + [after[n] for n in names]):
        cells = [f"{count(before[n].components[c])} | {count(after[n].components[c])} | "
                 f"{count(after[n].components[c] - before[n].components[c], '+')}"
                 for n in names]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    cells = [f"**{count(before[n].total)}** | **{count(after[n].total)}** | "
             f"**{change(before[n].total, after[n].total)}**" for n in names]
    lines.append("| **total** | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def biggest(measured, component, n):
    """The `n` functions that charge `component` most, per scenario:
    where to look when its row is large, or which rule "other" is missing.
    `*`: generic or shared code, charged through its callers (unless
    `--unsplit`)."""
    out = []
    for name, split in measured.items():
        out.append(f"\n{component} in {name} (instructions per request, share; "
                   f"* generic or shared code):")
        cost = {f: part.get(component, 0) for f, part in split.parts.items()}
        for f in sorted((f for f in cost if cost[f]), key=lambda f: -cost[f])[:n]:
            mark = "*" if f in split.via_callers else " "
            out.append(f"{count(cost[f]):>10} {share(cost[f], split.total):>8} {mark} {f}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", nargs="?", help="folder of callgrind.<scenario>.{200,1200}")
    ap.add_argument("scenarios", nargs="*", help="scenario names (default: all in the folder)")
    ap.add_argument("--cmp", nargs=2, metavar=("DIR_BEFORE", "DIR_AFTER"),
                    help="compare two folders (then DIR is not given)")
    ap.add_argument("--unsplit", action="store_true",
                    help=f"self cost only: generic and shared code in a row of its own "
                         f"('{GENERIC}') instead of split among its callers")
    ap.add_argument("--top", type=int, metavar="N", default=0,
                    help="also list the N functions that charge a row most")
    ap.add_argument("--row", metavar="COMPONENT", default=OTHER,
                    help=f"the row --top lists (default: {OTHER}, what the rules miss)")
    args = ap.parse_args()
    if args.cmp:
        if args.dir:
            args.scenarios.insert(0, args.dir)
        before_dir, after_dir = args.cmp
        names = args.scenarios or [s for s in scenarios_in(before_dir)
                                   if s in scenarios_in(after_dir)]
        before = measure(before_dir, names, not args.unsplit)
        after = measure(after_dir, names, not args.unsplit)
        print(cmp_table(before, after))
        measured = after
    else:
        if not args.dir:
            ap.error("a folder of callgrind files, or --cmp DIR_BEFORE DIR_AFTER")
        names = args.scenarios or scenarios_in(args.dir)
        if not names:
            raise SystemExit(f"no callgrind.<scenario>.{FEW}/{MANY} pairs in {args.dir}")
        measured = measure(args.dir, names, not args.unsplit)
        print(table(measured))
    if args.row not in COMPONENTS:
        ap.error(f"--row: one of {', '.join(COMPONENTS)}")
    if args.top:
        print(biggest(measured, args.row, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
