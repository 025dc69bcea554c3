-- Issue 18 (spec 2.5a): SSO sign-ins between the redirect to the identity
-- provider and its callback, in the store so the callback may reach any
-- replica (before, they waited in the memory of the replica that began
-- them). Keyed by the SHA-256 of the `state`; the code verifier and the
-- nonce are encrypted, bound to the row. The callback deletes its row
-- (single use); rows live 10 minutes; at most 10,000 (expired rows go with
-- each new one, and when full the oldest goes). SQLite flavour.
CREATE TABLE sso_pending_logins (
    state_hash     TEXT PRIMARY KEY,                       -- hex SHA-256 of the state
    code_verifier  TEXT NOT NULL,                          -- encrypted
    nonce          TEXT NOT NULL,                          -- encrypted
    binding_digest TEXT NOT NULL,                          -- hex SHA-256 of the flow cookie
    redirect_uri   TEXT NOT NULL,
    issuer         TEXT NOT NULL,
    client_id      TEXT NOT NULL,
    purpose        TEXT NOT NULL CHECK (purpose IN ('sign_in', 'link')),
    link_user_id   TEXT,                                   -- UUID, the account to link (purpose 'link')
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL,
    CHECK ((purpose = 'link') = (link_user_id IS NOT NULL))
);
CREATE INDEX sso_pending_logins_expires ON sso_pending_logins (expires_at);
CREATE INDEX sso_pending_logins_created ON sso_pending_logins (created_at);
