-- The whole schema of full deployment (spec part 2), PostgreSQL flavour.
-- Ids are UUID; timestamps are Unix seconds (UTC) in BIGINT; JSON documents
-- are TEXT (the same binding as SQLite). Secrets are AES-256-GCM values
-- ("v1:..."), never plaintext. Rows owned by a user go with the user
-- (ON DELETE CASCADE); "who changed it" references are set to NULL instead.

-- Store-wide facts: the encryption key check, the one-time setup code.
CREATE TABLE meta (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- 2.1 User.
CREATE TABLE users (
    id                   UUID PRIMARY KEY,
    email                TEXT NOT NULL UNIQUE,              -- trimmed, lower-case
    role                 TEXT NOT NULL CHECK (role IN ('Admin', 'User')),
    auth_method          TEXT NOT NULL CHECK (auth_method IN ('password', 'sso')),
    password_hash        TEXT,                              -- Argon2id PHC string
    sso_subject          TEXT UNIQUE,                       -- the identity provider's `sub`
    totp_enabled         BOOLEAN NOT NULL DEFAULT FALSE,
    totp_secret          TEXT,                              -- encrypted
    totp_pending_secret  TEXT,                              -- encrypted, during enrollment
    totp_last_step       BIGINT,                           -- last accepted 30 s step
    must_change_password BOOLEAN NOT NULL DEFAULT FALSE,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    last_login_at        BIGINT
);
CREATE INDEX users_role ON users (role);

-- 2.2 Session.
CREATE TABLE sessions (
    id           UUID PRIMARY KEY,
    user_id      UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf_token   TEXT NOT NULL,
    auth_method  TEXT NOT NULL CHECK (auth_method IN ('password', 'sso')),
    created_at   BIGINT NOT NULL,
    refreshed_at BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

-- 2.3 API key (hash only).
CREATE TABLE api_keys (
    id           UUID PRIMARY KEY,
    user_id      UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key_hash     TEXT NOT NULL UNIQUE,                     -- hex SHA-256 of the key
    key_prefix   TEXT NOT NULL,                            -- shown in lists
    label        TEXT NOT NULL DEFAULT '',
    created_at   BIGINT NOT NULL,
    last_used_at BIGINT
);
CREATE INDEX api_keys_user ON api_keys (user_id);

-- 2.4 Per-user upstream credentials (primary provider).
CREATE TABLE user_upstream_credentials (
    user_id             UUID PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    refresh_token       TEXT NOT NULL,                     -- encrypted
    upstream_region     TEXT NOT NULL,
    oauth_client_id     TEXT NOT NULL,
    oauth_client_secret TEXT NOT NULL,                     -- encrypted
    oauth_sso_region    TEXT NOT NULL,
    sso_start_url       TEXT,
    client_expires_at   BIGINT,
    created_at          BIGINT NOT NULL,
    updated_at          BIGINT NOT NULL
);

-- 2.5 Provider token record.
CREATE TABLE user_provider_tokens (
    id            UUID PRIMARY KEY,
    user_id       UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider      TEXT NOT NULL,
    account_label TEXT NOT NULL DEFAULT '',                -- several accounts per provider
    access_token  TEXT NOT NULL,                           -- encrypted
    refresh_token TEXT,                                    -- encrypted
    expires_at    BIGINT,
    base_url      TEXT,
    priority      BIGINT NOT NULL DEFAULT 0,              -- lower = preferred
    metadata      TEXT NOT NULL DEFAULT '{}',              -- JSON
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    UNIQUE (user_id, provider, account_label)
);
CREATE INDEX user_provider_tokens_user ON user_provider_tokens (user_id, priority);

-- 2.5a Pending 2FA login.
CREATE TABLE pending_2fa_logins (
    token      UUID PRIMARY KEY,
    user_id    UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    attempts   BIGINT NOT NULL DEFAULT 0,                 -- wrong codes so far
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX pending_2fa_logins_expires ON pending_2fa_logins (expires_at);

-- 2.6 Recovery codes.
CREATE TABLE totp_recovery_codes (
    id         UUID PRIMARY KEY,
    user_id    UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash  TEXT NOT NULL,                              -- hex SHA-256 of the code
    used_at    BIGINT,                                    -- the used marker
    created_at BIGINT NOT NULL,
    UNIQUE (user_id, code_hash)
);

-- 5.7 Login failures per email (also for unknown emails).
CREATE TABLE login_failures (
    email            TEXT PRIMARY KEY,
    failures         BIGINT NOT NULL,
    first_failure_at BIGINT NOT NULL,
    last_failure_at  BIGINT NOT NULL
);
CREATE INDEX login_failures_last ON login_failures (last_failure_at);

-- 2.7 Runtime configuration overlay and its history.
CREATE TABLE config (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,                              -- encrypted when secret
    secret     BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at BIGINT NOT NULL,
    updated_by UUID REFERENCES users (id) ON DELETE SET NULL
);
CREATE TABLE config_history (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key        TEXT NOT NULL,
    old_value  TEXT,                                       -- masked when secret
    new_value  TEXT,                                       -- masked when secret; NULL = removed
    secret     BOOLEAN NOT NULL DEFAULT FALSE,
    changed_by UUID REFERENCES users (id) ON DELETE SET NULL,
    changed_at BIGINT NOT NULL
);
CREATE INDEX config_history_key ON config_history (key);

-- 5.3 Domain allowlist of SSO sign-in.
CREATE TABLE domain_allowlist (
    domain     TEXT PRIMARY KEY,                           -- lower-case
    added_by   UUID REFERENCES users (id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL
);

-- 2.8 Guardrails.
CREATE TABLE guardrail_profiles (
    id                UUID PRIMARY KEY,
    name              TEXT NOT NULL UNIQUE,
    guardrail_id      TEXT NOT NULL,
    guardrail_version TEXT NOT NULL,
    region            TEXT NOT NULL,
    access_key_id     TEXT,
    secret_access_key TEXT,                                -- encrypted
    enabled           BOOLEAN NOT NULL DEFAULT TRUE,
    created_at        BIGINT NOT NULL,
    updated_at        BIGINT NOT NULL
);
CREATE TABLE guardrail_rules (
    id            UUID PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    description   TEXT NOT NULL DEFAULT '',
    expression    TEXT NOT NULL DEFAULT '',                -- CEL; empty matches every request
    apply_to      TEXT NOT NULL CHECK (apply_to IN ('Input', 'Output', 'Both')),
    sampling_rate BIGINT NOT NULL DEFAULT 100 CHECK (sampling_rate BETWEEN 0 AND 100),
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);
CREATE TABLE guardrail_rule_profiles (
    rule_id    UUID NOT NULL REFERENCES guardrail_rules (id) ON DELETE CASCADE,
    profile_id UUID NOT NULL REFERENCES guardrail_profiles (id) ON DELETE CASCADE,
    PRIMARY KEY (rule_id, profile_id)
);
CREATE INDEX guardrail_rule_profiles_profile ON guardrail_rule_profiles (profile_id);

-- 2.9 Model registry, visibility defaults, provider settings, pool, usage.
CREATE TABLE model_registry (
    id           UUID PRIMARY KEY,
    provider     TEXT NOT NULL,
    model_id     TEXT NOT NULL,
    display_name TEXT NOT NULL DEFAULT '',
    enabled      BOOLEAN NOT NULL DEFAULT TRUE,
    source       TEXT NOT NULL DEFAULT 'auto' CHECK (source IN ('auto', 'static', 'manual')),
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    UNIQUE (provider, model_id)
);
CREATE TABLE model_visibility_defaults (
    provider   TEXT NOT NULL,
    model_id   TEXT NOT NULL,
    visible    BOOLEAN NOT NULL DEFAULT TRUE,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (provider, model_id)
);
CREATE TABLE provider_settings (
    provider   TEXT PRIMARY KEY,
    enabled    BOOLEAN NOT NULL DEFAULT TRUE,
    updated_at BIGINT NOT NULL
);
CREATE TABLE pool_accounts (
    id            UUID PRIMARY KEY,
    provider      TEXT NOT NULL,
    label         TEXT NOT NULL,
    access_token  TEXT NOT NULL,                           -- encrypted
    refresh_token TEXT,                                    -- encrypted
    expires_at    BIGINT,
    base_url      TEXT,
    priority      BIGINT NOT NULL DEFAULT 0,
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    metadata      TEXT NOT NULL DEFAULT '{}',
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    UNIQUE (provider, label)
);
CREATE TABLE usage_records (
    user_id            UUID NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day                TEXT NOT NULL,                      -- YYYY-MM-DD (UTC)
    provider           TEXT NOT NULL,
    model              TEXT NOT NULL,
    requests           BIGINT NOT NULL DEFAULT 0,
    input_tokens       BIGINT NOT NULL DEFAULT 0,
    output_tokens      BIGINT NOT NULL DEFAULT 0,
    cache_read_tokens  BIGINT NOT NULL DEFAULT 0,
    cache_write_tokens BIGINT NOT NULL DEFAULT 0,
    updated_at         BIGINT NOT NULL,
    PRIMARY KEY (user_id, day, provider, model)
);
CREATE INDEX usage_records_day ON usage_records (day);
