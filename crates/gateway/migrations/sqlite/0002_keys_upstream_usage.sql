-- Full deployment, part 2 (issue 6): per-request usage, pending upstream
-- device authorizations. SQLite flavour (one replica: no notifications).

-- 2.9 Usage: one row per /v1 chat request, written in batches. No foreign
-- keys: usage is an account of what was served, kept when a key or a user
-- is deleted (and a batch never fails because one was deleted meanwhile).
CREATE TABLE usage_events (
    id                 INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id            TEXT NOT NULL,
    key_id             TEXT,
    provider           TEXT NOT NULL,                      -- '' when refused before routing
    model              TEXT NOT NULL,                      -- '' when refused before routing
    stream             INTEGER NOT NULL,
    status             INTEGER NOT NULL,                   -- HTTP status, or the stream's error status; 499 = client went away
    input_tokens       INTEGER NOT NULL,
    output_tokens      INTEGER NOT NULL,
    cache_read_tokens  INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    latency_ms         INTEGER NOT NULL,                   -- request start to the end of the answer
    created_at         INTEGER NOT NULL                    -- request start, Unix seconds
);
CREATE INDEX usage_events_created ON usage_events (created_at);
CREATE INDEX usage_events_user_created ON usage_events (user_id, created_at);

-- 5.8 A device authorization started from the web UI, until it is polled to
-- its end. Keyed by the SHA-256 of the device code (the browser holds the
-- code; any replica can finish the flow).
CREATE TABLE upstream_device_authorizations (
    device_code_hash  TEXT PRIMARY KEY,                    -- hex SHA-256
    user_id           TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id         TEXT NOT NULL,
    client_secret     TEXT NOT NULL,                       -- encrypted
    client_expires_at INTEGER,
    sso_start_url     TEXT NOT NULL,
    sso_region        TEXT NOT NULL,
    upstream_region   TEXT NOT NULL,
    created_at        INTEGER NOT NULL,
    expires_at        INTEGER NOT NULL
);
CREATE INDEX upstream_device_authorizations_user ON upstream_device_authorizations (user_id);
CREATE INDEX upstream_device_authorizations_expires ON upstream_device_authorizations (expires_at);
