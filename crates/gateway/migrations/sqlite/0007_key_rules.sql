-- Issue 21: what a key may do. expires_at: the key is refused (401) from
-- then on; allowed_models: a JSON array of model names as sent on /v1,
-- the only ones the key may call (NULL: any). Sqlite flavour.
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE api_keys ADD COLUMN allowed_models TEXT;
