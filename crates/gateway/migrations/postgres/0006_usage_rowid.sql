-- Kept in step with the SQLite migrations: SQLite's usage_events dropped
-- AUTOINCREMENT here; PostgreSQL's BIGSERIAL id has nothing to change.
SELECT 1;
