-- Issue 18: the replicas serving this database, each heartbeating every
-- 15 s, so /_ui/api/system lists the ones seen recently. A row is the
-- process, not the host: a restarted gateway is a new row; rows not seen
-- for a day are removed by the heartbeat of any replica.
CREATE TABLE replicas (
    id          TEXT PRIMARY KEY,
    hostname    TEXT NOT NULL,
    version     TEXT NOT NULL,
    started_at  BIGINT NOT NULL,
    last_seen   BIGINT NOT NULL
);
CREATE INDEX replicas_by_last_seen ON replicas (last_seen);
