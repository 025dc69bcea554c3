-- usage_events gains its cost (issue 21: USD at the model registry's
-- prices when the row was written; NULL when the model has no price).
-- PostgreSQL flavour; SQLite's migration also drops AUTOINCREMENT, which
-- PostgreSQL's BIGSERIAL id never had.
ALTER TABLE usage_events ADD COLUMN cost_usd DOUBLE PRECISION;
