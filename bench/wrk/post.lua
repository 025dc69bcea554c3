-- wrk script of the benchmark harness: every request is the same POST (or,
-- with BENCH_REQUEST_FILES, a rotation of whole requests), and the run ends
-- with one JSON line that the harness reads.
--
-- Environment (set by bench/harness/loadgen.py):
--   BENCH_BODY_FILE      file holding the request body, sent as it is
--   BENCH_HEADERS        request headers, one "Name: value" per line
--   BENCH_REQUEST_FILES  instead of the two above: files each holding one
--                        whole HTTP/1.1 request (head and body), one path a
--                        line, sent in turn on each connection
--
-- No response() hook on purpose: defining one makes wrk hand every body to
-- Lua, which would slow the load generator and blur the figures. Non-2xx
-- answers are still counted (summary.errors.status).

local function read_file(path)
  local f = assert(io.open(path, "rb"), "cannot open BENCH_BODY_FILE " .. tostring(path))
  local data = f:read("*a")
  f:close()
  return data
end

local rotation = os.getenv("BENCH_REQUEST_FILES")
if rotation then
  local raw = {}
  for path in string.gmatch(rotation, "[^\n]+") do
    raw[#raw + 1] = read_file(path)
  end
  local next_one = 0
  -- A precomputed string per request: the rotation costs one table read.
  function request()
    next_one = next_one % #raw + 1
    return raw[next_one]
  end
else
  wrk.method = "POST"
  wrk.body = read_file(os.getenv("BENCH_BODY_FILE"))
  for line in string.gmatch(os.getenv("BENCH_HEADERS") or "", "[^\n]+") do
    local name, value = line:match("^([^:]+):%s*(.-)%s*$")
    if name then
      wrk.headers[name] = value
    end
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},' ..
    '"latency_us":{"min":%d,"mean":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.min, latency.mean, latency.max,
    latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9)))
end
