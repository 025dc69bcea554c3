"""The report: one markdown table of every row, the memory and open-streams
figures, and each target of issue 7 with met / missed and by how much."""


def num(v):
    """A figure with as many digits as it deserves."""
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.3g}"


def fmt_ms(x):
    if x is None:
        return ""
    return f"{x:.3f}" if abs(x) < 10 else f"{x:.1f}"


def fmt_signed_ms(x):
    if x is None:
        return ""
    return ("+" if x >= 0 else "") + fmt_ms(x)


def fmt_rps(x):
    if x is None:
        return ""
    return f"{x:,.0f}".replace(",", " ") if x >= 100 else f"{x:.1f}"


def fmt_pct(x):
    return "" if x is None else f"{x * 100:.0f} %"


def fmt_mb(kb):
    return "" if not kb else f"{kb / 1024:.1f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def get(row, who, key):
    m = row.get(who)
    return None if m is None else m.get(key)


def overhead(row, key):
    g, d = get(row, "gateway", key), get(row, "direct", key)
    return None if g is None or d is None else g - d


COLUMNS = ["Scenario", "c", "Direct req/s", "Gateway req/s", "GW/direct", "LiteLLM req/s",
           "GW/LiteLLM", "Direct p50 ms", "GW p50 ms", "+p50 ms", "Direct p99 ms", "GW p99 ms",
           "+p99 ms", "LiteLLM p50 ms", "TTFB p50 ms direct / GW / LiteLLM",
           "GW CPU s/1k req", "GW RSS MB"]


def table(rows, streams):
    lines = ["| " + " | ".join(COLUMNS) + " |",
             "|" + "|".join("---" if i == 0 else "--:" for i in range(len(COLUMNS))) + "|"]
    for row in rows:
        ttfb = row.get("ttfb") or {}
        ttfb_cell = ""
        if ttfb:
            ttfb_cell = " / ".join(fmt_ms(ttfb.get(w, {}).get("ttfb_p50_ms"))
                                   if ttfb.get(w) else "-"
                                   for w in ("direct", "gateway", "litellm"))
        cells = [
            row["label"], str(row["c"]),
            fmt_rps(get(row, "direct", "rps")), fmt_rps(get(row, "gateway", "rps")),
            fmt_pct(ratio(get(row, "gateway", "rps"), get(row, "direct", "rps"))),
            fmt_rps(get(row, "litellm", "rps")),
            ("" if ratio(get(row, "gateway", "rps"), get(row, "litellm", "rps")) is None
             else f"{ratio(get(row, 'gateway', 'rps'), get(row, 'litellm', 'rps')):.0f}x"),
            fmt_ms(get(row, "direct", "p50_ms")), fmt_ms(get(row, "gateway", "p50_ms")),
            fmt_signed_ms(overhead(row, "p50_ms")),
            fmt_ms(get(row, "direct", "p99_ms")), fmt_ms(get(row, "gateway", "p99_ms")),
            fmt_signed_ms(overhead(row, "p99_ms")),
            fmt_ms(get(row, "litellm", "p50_ms")),
            ttfb_cell,
            ("" if get(row, "gateway", "cpu_s_per_1k") is None
             else f"{get(row, 'gateway', 'cpu_s_per_1k'):.3f}"),
            fmt_mb(get(row, "gateway", "rss_load_kb")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    if streams:
        cells = [f"primary, chat completions, {streams['streams']} open slow streams", "", "",
                 f"{streams['opened']} open", "", "", "", "", "", "", "", "", "", "", "", "",
                 fmt_mb(streams["rss_streams_kb"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _worst(rows, pick, value, higher_is_worse=True):
    """(worst value, its row) among the rows `pick` keeps where `value` is known."""
    found = [(value(r), r) for r in rows if pick(r) and value(r) is not None]
    if not found:
        return None, None
    return (max if higher_is_worse else min)(found, key=lambda x: x[0])


def targets(rows, streams):
    """Rows of (target, measured, verdict) for issue 7's list."""
    out = []
    full_rows = [r for r in rows if r.get("mode") == "full"]
    rows = [r for r in rows if r.get("mode", "proxy") == "proxy"]

    def judge(name, value, row, limit, unit, higher_is_worse=True, scale=1.0):
        if value is None:
            out.append((name, "not measured", "n/a"))
            return
        v = value * scale
        where = f" ({row['label']}, c={row['c']})" if row else ""
        ok = v <= limit if higher_is_worse else v >= limit
        if ok:
            verdict = "met"
        else:
            verdict = (f"missed by {num(v - limit)} {unit}" if higher_is_worse
                       else f"missed by {num(limit - v)} {unit}")
        out.append((name, f"worst {num(v)} {unit}{where}", verdict))

    json_rows = [r for r in rows if not r["stream"]]
    stream_rows = [r for r in rows if r["stream"]]
    v, r = _worst(json_rows, lambda r: r["c"] == 1, lambda r: overhead(r, "p50_ms"))
    judge("Added latency, c=1, non-streaming, p50 <= 0.07 ms", v, r, 0.07, "ms")
    v, r = _worst(json_rows, lambda r: r["c"] == 1, lambda r: overhead(r, "p99_ms"))
    judge("Added latency, c=1, non-streaming, p99 <= 0.5 ms", v, r, 0.5, "ms")
    thr = lambda r: ratio(get(r, "gateway", "rps"), get(r, "direct", "rps"))
    v, r = _worst(json_rows, lambda r: r["c"] == 64, thr, higher_is_worse=False)
    judge("Throughput at c=64, non-streaming, >= 40 % of direct", v, r, 40, "%",
          higher_is_worse=False, scale=100)
    v, r = _worst(stream_rows, lambda r: r["c"] == 64, thr, higher_is_worse=False)
    judge("Throughput at c=64, 20-chunk streams, >= 50 % of direct", v, r, 50, "%",
          higher_is_worse=False, scale=100)
    cpu = lambda r: get(r, "gateway", "cpu_s_per_1k")
    v, r = _worst(json_rows, lambda r: True, cpu)
    judge("Gateway CPU <= 50 us per non-streaming request", v, r, 50, "us", scale=1000)
    v, r = _worst(stream_rows, lambda r: True, cpu)
    judge("Gateway CPU <= 100 us per 20-chunk stream", v, r, 100, "us", scale=1000)
    v, r = _worst(rows, lambda r: r["c"] == 1, lambda r: overhead(r, "p50_ms"))
    if v is None:
        out.append(("No stall on kept-alive connections (c=1 +p50 well under 40 ms)",
                    "not measured", "n/a"))
    else:
        out.append(("No stall on kept-alive connections (c=1 +p50 well under 40 ms)",
                    f"worst +p50 {v:.3f} ms ({r['label']})",
                    # A Nagle / delayed-ACK stall costs 40 ms on Linux.
                    "met" if v < 30 else "missed: a stall-sized delay"))
    v, r = _worst(rows, lambda r: True, lambda r: get(r, "gateway", "rss_load_kb"))
    judge("RSS under load <= 20 MB (proxy mode)", None if v is None else v / 1024, r, 20, "MB")
    if streams and streams["opened"]:
        judge(f"RSS with {streams['streams']} open streams <= 150 MB"
              + ("" if streams["opened"] == streams["streams"]
                 else f" (only {streams['opened']} opened)"),
              streams["rss_streams_kb"] / 1024, None, 150, "MB")
    else:
        out.append(("RSS with 1,000 open streams <= 150 MB", "not measured", "n/a"))
    proxy_rps = {(r["scenario"], r["c"]): get(r, "gateway", "rps") for r in rows}
    cost = lambda r: (None if not proxy_rps.get((r["scenario"], r["c"])) or
                      get(r, "gateway", "rps") is None
                      else 1 - get(r, "gateway", "rps") / proxy_rps[(r["scenario"], r["c"])])
    v, r = _worst(full_rows, lambda r: True, cost)
    judge("Full mode (API-key auth + SQLite usage) costs <= 10 % of proxy throughput",
          v, r, 10, "%", scale=100)
    both = lambda r: ratio(get(r, "gateway", "rps"), get(r, "litellm", "rps"))
    v, r = _worst(rows, lambda r: True, both, higher_is_worse=False)
    if v is None:
        out.append((">= 100x LiteLLM's requests/s where both run", "not measured", "n/a"))
    else:
        out.append((">= 100x LiteLLM's requests/s where both run",
                    f"worst {v:.0f}x ({r['label']}, c={r['c']})",
                    "met" if v >= 100 else f"missed by {100 - v:.0f}x"))
    return out


def render(results):
    meta = results["meta"]
    rows = results["rows"]
    streams = results.get("streams")
    rss = results.get("rss", {})
    parts = [
        f"Benchmark ({meta['mode']} mode), {meta['date']}, commit {meta['commit']}, "
        f"{meta['profile']} binaries, {meta['seconds']} s per run, wrk -t1 kept-alive",
        f"Machine: {meta['cpu_model']}, {meta['nproc']} cores, {meta['mem_gib']:.1f} GiB; "
        f"load average {meta['load_before']} before, {meta['load_after']} after; "
        f"{meta['pinning']}",
        "",
        table(rows, streams),
        "",
        f"Gateway RSS: idle {fmt_mb(rss.get('idle_kb'))} MB, peak during the load runs "
        f"{fmt_mb(rss.get('peak_kb'))} MB"
        + (f", peak with the open streams {fmt_mb(rss.get('peak_streams_kb'))} MB"
           if rss.get("peak_streams_kb") else "") + ".",
    ]
    if streams:
        parts.append(
            f"Open streams: {streams['opened']} of {streams['streams']} started in "
            f"{streams['open_secs']:.1f} s ({streams['failed']} failed"
            + (f": {', '.join(streams['failure_sample'])}" if streams["failure_sample"] else "")
            + f"); gateway RSS while open {fmt_mb(streams['rss_streams_kb'])} MB"
            + (f" ({streams['kb_per_stream']:.1f} KB per stream over the "
               f"{fmt_mb(streams['rss_before_kb'])} MB before)"
               if streams.get("kb_per_stream") is not None else "")
            + (f"; a request meanwhile: {streams['probe_status']} in "
               f"{streams['probe_ms']:.1f} ms" if streams.get("probe_ms") is not None else "")
            + ".")
    idle = results.get("idle_connections")
    if idle:
        parts.append(
            f"Idle kept-alive connections: {idle['opened']} of {idle['idle']} held "
            f"({idle['failed']} failed; {idle['still_open']} still open after "
            f"{idle['still_open_after_s']:g} s); gateway RSS {fmt_mb(idle['rss_before_kb'])} -> "
            f"{fmt_mb(idle['rss_held_kb'])} MB"
            + (f" ({idle['kb_per_connection']:.1f} KB per connection)"
               if idle.get("kb_per_connection") is not None else "")
            + f", descriptors {idle['fds_before']} -> {idle['fds_held']}"
            + (f"; a request meanwhile: {idle['probe_status']} in {idle['probe_ms']:.1f} ms"
               if idle.get("probe_ms") is not None else "") + ".")
    if results.get("rss_full"):
        rf = results["rss_full"]
        parts.append(f"Full-mode gateway RSS: idle {fmt_mb(rf.get('idle_kb'))} MB, peak "
                     f"{fmt_mb(rf.get('peak_kb'))} MB.")
    if results.get("usage_full"):
        u = results["usage_full"]
        parts.append(f"Full mode recorded the usage of {u['recorded']} requests in SQLite "
                     f"for {u['requests']} measured requests (plus warm-ups and probes).")
    if results.get("litellm_rss"):
        lr = results["litellm_rss"]
        parts.append(f"LiteLLM {results['meta'].get('litellm_version', '')} RSS: idle "
                     f"{fmt_mb(lr.get('idle_kb'))} MB, peak {fmt_mb(lr.get('peak_kb'))} MB.")
    lcpu = [get(r, "litellm", "cpu_s_per_1k") for r in rows
            if get(r, "litellm", "cpu_s_per_1k") is not None]
    if lcpu:
        parts.append(f"LiteLLM CPU per request: {num(min(lcpu) * 1000)} to "
                     f"{num(max(lcpu) * 1000)} us (gateway: the GW CPU column, s per 1,000 "
                     f"requests = ms per request).")
    for note in results.get("notes", []):
        parts.append(f"Note: {note}")
    for s in results.get("skipped", []):
        parts.append(f"Skipped: {s}")
    for p in results.get("pending", []):
        parts.append(f"Pending: {p}")
    parts += ["", "| Target (issue 7) | Measured | Verdict |", "|---|---|---|"]
    parts += [f"| {a} | {b} | {c} |" for a, b, c in targets(rows, streams)]
    return "\n".join(parts) + "\n"
