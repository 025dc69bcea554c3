-- Issue 20: a usage row may stand for several requests. The usage writer
-- merges the records of one batch that agree on everything but their
-- counts (user, key, provider, model, stream, status and the second they
-- started), so a busy key writes one row a second instead of one a
-- request. `requests` is how many requests the row stands for; the token
-- counts, `latency_ms` and `cost_usd` are sums over them. Every row
-- written before stands for one request, which the default says. SQLite
-- flavour.
ALTER TABLE usage_events ADD COLUMN requests INTEGER NOT NULL DEFAULT 1;
