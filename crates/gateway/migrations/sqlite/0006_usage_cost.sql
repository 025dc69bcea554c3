-- usage_events gains its cost (issue 21: USD at the model registry's
-- prices when the row was written; NULL when the model has no price), and
-- loses AUTOINCREMENT (SQLite flavour). AUTOINCREMENT made
-- every insert read and write the sqlite_sequence table besides the row
-- and its two indexes; the plain INTEGER PRIMARY KEY (the rowid) gives the
-- same increasing ids as long as the newest row is not deleted, and nothing
-- deletes it (nothing refers to a usage row by id either). The table is
-- rebuilt once, keeping every row and id.
CREATE TABLE usage_events_new (
    id                 INTEGER PRIMARY KEY,
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
    created_at         INTEGER NOT NULL,                   -- request start, Unix seconds
    cost_usd           REAL                                -- USD; NULL: no price known
);
INSERT INTO usage_events_new SELECT id, user_id, key_id, provider, model, stream, status,
    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, latency_ms, created_at, NULL
    FROM usage_events;
DROP TABLE usage_events;
ALTER TABLE usage_events_new RENAME TO usage_events;
CREATE INDEX usage_events_created ON usage_events (created_at);
CREATE INDEX usage_events_user_created ON usage_events (user_id, created_at);
