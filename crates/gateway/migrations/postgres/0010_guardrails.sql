-- Issue 16: content guardrails (spec 2.8; interfaces-full.md section 5).
-- A profile is one configured call to the cloud guardrail service; its
-- secret key and session token are encrypted (AES-256-GCM, bound to the
-- column and the profile's id). A rule is a CEL expression that chooses the
-- requests its profiles check; rules and profiles link many-to-many.
-- Migration 0001 drafted these tables; nothing ever wrote them, and their
-- shape (no session token, `expression` for the CEL text) is replaced.
DROP TABLE guardrail_rule_profiles;
DROP TABLE guardrail_rules;
DROP TABLE guardrail_profiles;

CREATE TABLE guardrail_profiles (
    id                 UUID PRIMARY KEY,
    name               TEXT NOT NULL UNIQUE,
    guardrail_id       TEXT NOT NULL,
    guardrail_version  TEXT NOT NULL,
    region             TEXT NOT NULL,
    access_key_id      TEXT NOT NULL,
    secret_access_key  TEXT NOT NULL,              -- encrypted
    session_token      TEXT,                       -- encrypted; NULL: long-term keys
    enabled            BOOLEAN NOT NULL DEFAULT TRUE,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);

CREATE TABLE guardrail_rules (
    id                 UUID PRIMARY KEY,
    name               TEXT NOT NULL UNIQUE,
    description        TEXT NOT NULL DEFAULT '',
    cel_expression     TEXT NOT NULL DEFAULT '',   -- empty: every request
    apply_to           TEXT NOT NULL CHECK (apply_to IN ('Input', 'Output', 'Both')),
    sampling_rate      BIGINT NOT NULL CHECK (sampling_rate BETWEEN 0 AND 100),
    enabled            BOOLEAN NOT NULL DEFAULT TRUE,
    created_at         BIGINT NOT NULL,
    updated_at         BIGINT NOT NULL
);

CREATE TABLE guardrail_rule_profiles (
    rule_id     UUID NOT NULL REFERENCES guardrail_rules (id) ON DELETE CASCADE,
    profile_id  UUID NOT NULL REFERENCES guardrail_profiles (id) ON DELETE CASCADE,
    PRIMARY KEY (rule_id, profile_id)
);
CREATE INDEX guardrail_rule_profiles_by_profile ON guardrail_rule_profiles (profile_id);
