-- Issue 21: the administrator's fallback chains. One row per chain: the
-- model a client names on /v1 (as sent, `provider/model` allowed), then
-- the models tried in turn when it fails before the first byte (a JSON
-- array of names as on /v1); `position` keeps the administrator's order.
CREATE TABLE model_fallbacks (
    model      TEXT PRIMARY KEY,
    fallbacks  TEXT NOT NULL,
    position   INTEGER NOT NULL
);
