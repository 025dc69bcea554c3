-- Full deployment, part 5 (spec 2.9, 3.6a; interfaces-full.md 4): the
-- model registry and each provider's visibility default. SQLite flavour.
-- Migration 0001 drafted both tables; nothing ever wrote them, and their
-- shape (no limits, no prices, one row per visible model) is replaced.
DROP TABLE model_registry;
DROP TABLE model_visibility_defaults;

-- One model of one provider, as the provider's listing (or the static list
-- kept in the repository) names it. A model without an entry is not
-- restricted; a disabled entry is refused on /v1 and hidden from listings.
CREATE TABLE model_registry (
    id                         TEXT PRIMARY KEY,          -- UUID
    provider                   TEXT NOT NULL,
    model_id                   TEXT NOT NULL,             -- the upstream's id
    display_name               TEXT,                      -- NULL: the model id
    admin_named                INTEGER NOT NULL DEFAULT 0, -- populate keeps an admin's name
    enabled                    INTEGER NOT NULL DEFAULT 1,
    source                     TEXT NOT NULL CHECK (source IN ('listing', 'static', 'manual')),
    context_window             INTEGER,
    max_output_tokens          INTEGER,
    input_price_per_mtok       REAL,                      -- USD per million tokens
    output_price_per_mtok      REAL,
    cache_read_price_per_mtok  REAL,
    cache_write_price_per_mtok REAL,
    created_at                 INTEGER NOT NULL,
    updated_at                 INTEGER NOT NULL,
    UNIQUE (provider, model_id)
);

-- Per provider, the models a new registry entry gets as enabled (a
-- provider without a row: every new entry is enabled). JSON array of ids.
CREATE TABLE model_visibility_defaults (
    provider       TEXT PRIMARY KEY,
    enabled_models TEXT NOT NULL,
    updated_at     INTEGER NOT NULL
);
