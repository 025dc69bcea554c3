-- Full deployment, part 3 (per-user providers, spec 2.5, 2.5a, 4.4.3):
-- provider accounts, each user's provider order, the admin's provider
-- switches, pending provider OAuth authorizations. SQLite flavour.

-- 2.5 One credential of one user for one provider (several per provider),
-- or, with pool = 1, one an admin shares with every user (user_id is then
-- the admin who added it). Secrets are encrypted, bound to their column and
-- the account's id. Migration 0001 created a first draft of this table
-- that nothing ever wrote (its unique label per provider forbade two
-- unlabelled accounts); it is replaced.
DROP TABLE user_provider_tokens;
CREATE TABLE user_provider_tokens (
    id            TEXT PRIMARY KEY,                       -- UUID
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider      TEXT NOT NULL,                          -- messages_vendor | completions_vendor | assistant_vendor | custom
    label         TEXT NOT NULL DEFAULT '',
    auth_kind     TEXT NOT NULL,                          -- api_key | oauth_pkce | oauth_code_host
    access_token  TEXT NOT NULL,                          -- encrypted: the API key or the access token
    refresh_token TEXT,                                   -- encrypted
    expires_at    INTEGER,                                -- Unix seconds
    base_url      TEXT,
    priority      INTEGER NOT NULL DEFAULT 100,           -- lower first
    metadata      TEXT NOT NULL DEFAULT '{}',             -- provider-specific JSON
    pool          INTEGER NOT NULL DEFAULT 0,
    enabled       INTEGER NOT NULL DEFAULT 1,
    last_error    TEXT,
    last_used_at  INTEGER,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);
CREATE INDEX user_provider_tokens_user ON user_provider_tokens (user_id, provider);
CREATE INDEX user_provider_tokens_pool ON user_provider_tokens (pool, provider);

-- 4.4.3 A user's provider order: provider ids, comma-separated, first
-- preferred; providers not listed come after, in registry order.
CREATE TABLE user_provider_order (
    user_id    TEXT PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    providers  TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);

-- 4.3 The admin's provider switches (a provider without a row is enabled).
CREATE TABLE provider_switches (
    provider   TEXT PRIMARY KEY,
    enabled    INTEGER NOT NULL,
    updated_by TEXT,
    updated_at INTEGER NOT NULL
);

-- 2.5a A provider OAuth authorization waiting for its code, keyed by the
-- SHA-256 of its state (the state is the credential of the relay call).
CREATE TABLE provider_oauth_pending (
    state_hash    TEXT PRIMARY KEY,                       -- hex SHA-256
    user_id       TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider      TEXT NOT NULL,
    pkce_verifier TEXT NOT NULL,                          -- encrypted
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL
);
CREATE INDEX provider_oauth_pending_expires ON provider_oauth_pending (expires_at);
