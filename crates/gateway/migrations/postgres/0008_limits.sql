-- Issue 21: budgets and rate limits, per API key (set by its owner) and per
-- user (set by an admin). budget_usd: USD a period may cost (NULL: no
-- budget); budget_period: 'daily', 'weekly', 'monthly' (UTC), or NULL for
-- a budget that never resets; rpm_limit / tpm_limit: requests and tokens
-- per minute (NULL: unlimited). What was spent is not stored here: it is
-- the sum of usage_events.cost_usd over the period. PostgreSQL flavour.
ALTER TABLE api_keys ADD COLUMN budget_usd DOUBLE PRECISION;
ALTER TABLE api_keys ADD COLUMN budget_period TEXT;
ALTER TABLE api_keys ADD COLUMN rpm_limit BIGINT;
ALTER TABLE api_keys ADD COLUMN tpm_limit BIGINT;
ALTER TABLE users ADD COLUMN budget_usd DOUBLE PRECISION;
ALTER TABLE users ADD COLUMN budget_period TEXT;
ALTER TABLE users ADD COLUMN rpm_limit BIGINT;
ALTER TABLE users ADD COLUMN tpm_limit BIGINT;
