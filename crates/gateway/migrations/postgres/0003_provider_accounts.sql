-- Full deployment, part 3 (per-user providers, spec 2.5, 2.5a, 4.4.3):
-- provider accounts, each user's provider order, the admin's provider
-- switches, pending provider OAuth authorizations. PostgreSQL flavour.

-- 2.5 One credential of one user for one provider (several per provider),
-- or, with pool = 1, one an admin shares with every user (user_id is then
-- the admin who added it). Secrets are encrypted, bound to their column and
-- the account's id. Migration 0001 created a first draft of this table
-- that nothing ever wrote (its unique label per provider forbade two
-- unlabelled accounts); it is replaced.
DROP TABLE user_provider_tokens;
CREATE TABLE user_provider_tokens (
    id            UUID PRIMARY KEY,                       -- UUID
    user_id       UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider      TEXT NOT NULL,                          -- messages_vendor | completions_vendor | assistant_vendor | custom
    label         TEXT NOT NULL DEFAULT '',
    auth_kind     TEXT NOT NULL,                          -- api_key | oauth_pkce | oauth_code_host
    access_token  TEXT NOT NULL,                          -- encrypted: the API key or the access token
    refresh_token TEXT,                                   -- encrypted
    expires_at    BIGINT,                                -- Unix seconds
    base_url      TEXT,
    priority      BIGINT NOT NULL DEFAULT 100,           -- lower first
    metadata      TEXT NOT NULL DEFAULT '{}',             -- provider-specific JSON
    pool          BOOLEAN NOT NULL DEFAULT FALSE,
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    last_error    TEXT,
    last_used_at  BIGINT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE INDEX user_provider_tokens_user ON user_provider_tokens (user_id, provider);
CREATE INDEX user_provider_tokens_pool ON user_provider_tokens (pool, provider);

-- 4.4.3 A user's provider order: provider ids, comma-separated, first
-- preferred; providers not listed come after, in registry order.
CREATE TABLE user_provider_order (
    user_id    UUID PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    providers  TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- 4.3 The admin's provider switches (a provider without a row is enabled).
CREATE TABLE provider_switches (
    provider   TEXT PRIMARY KEY,
    enabled    BOOLEAN NOT NULL,
    updated_by UUID,
    updated_at BIGINT NOT NULL
);

-- 2.5a A provider OAuth authorization waiting for its code, keyed by the
-- SHA-256 of its state (the state is the credential of the relay call).
CREATE TABLE provider_oauth_pending (
    state_hash    TEXT PRIMARY KEY,                       -- hex SHA-256
    user_id       UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider      TEXT NOT NULL,
    pkce_verifier TEXT NOT NULL,                          -- encrypted
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL
);
CREATE INDEX provider_oauth_pending_expires ON provider_oauth_pending (expires_at);

-- Every change of a user's accounts or order is announced on channel
-- gateway_invalidate as 'accounts:<user id>' (pool changes as
-- 'accounts:pool') by the writing transaction, so replicas drop their
-- cached provider lists.
