-- Full deployment, part 2 (issue 6): per-request usage, pending upstream
-- device authorizations, and the notification of a deleted API key to every
-- replica. PostgreSQL flavour.

-- 2.9 Usage: one row per /v1 chat request, written in batches. No foreign
-- keys: usage is an account of what was served, kept when a key or a user
-- is deleted (and a batch never fails because one was deleted meanwhile).
CREATE TABLE usage_events (
    id                 BIGSERIAL PRIMARY KEY,
    user_id            UUID NOT NULL,
    key_id             UUID,
    provider           TEXT NOT NULL,                      -- '' when refused before routing
    model              TEXT NOT NULL,                      -- '' when refused before routing
    stream             BOOLEAN NOT NULL,
    status             INTEGER NOT NULL,                   -- HTTP status, or the stream's error status; 499 = client went away
    input_tokens       BIGINT NOT NULL,
    output_tokens      BIGINT NOT NULL,
    cache_read_tokens  BIGINT NOT NULL,
    cache_write_tokens BIGINT NOT NULL,
    latency_ms         BIGINT NOT NULL,                    -- request start to the end of the answer
    created_at         BIGINT NOT NULL                     -- request start, Unix seconds
);
CREATE INDEX usage_events_created ON usage_events (created_at);
CREATE INDEX usage_events_user_created ON usage_events (user_id, created_at);

-- 5.8 A device authorization started from the web UI, until it is polled to
-- its end. Keyed by the SHA-256 of the device code (the browser holds the
-- code; any replica can finish the flow).
CREATE TABLE upstream_device_authorizations (
    device_code_hash  TEXT PRIMARY KEY,                    -- hex SHA-256
    user_id           UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client_id         TEXT NOT NULL,
    client_secret     TEXT NOT NULL,                       -- encrypted
    client_expires_at BIGINT,
    sso_start_url     TEXT NOT NULL,
    sso_region        TEXT NOT NULL,
    upstream_region   TEXT NOT NULL,
    created_at        BIGINT NOT NULL,
    expires_at        BIGINT NOT NULL
);
CREATE INDEX upstream_device_authorizations_user ON upstream_device_authorizations (user_id);
CREATE INDEX upstream_device_authorizations_expires ON upstream_device_authorizations (expires_at);

-- 2.3 Every deleted API key, however it goes (revoked, or with its user),
-- is announced on channel gateway_invalidate as 'key:<hex hash>' when the
-- deleting transaction commits; every replica LISTENs and drops its cached
-- entry.
CREATE FUNCTION gateway_api_key_deleted() RETURNS trigger AS $$
BEGIN
    PERFORM pg_notify('gateway_invalidate', 'key:' || OLD.key_hash);
    RETURN OLD;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys
    FOR EACH ROW EXECUTE FUNCTION gateway_api_key_deleted();
