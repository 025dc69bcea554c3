//! The store of full deployment: SQLite (default, a file in `DATA_DIR`) or
//! PostgreSQL (`DATABASE_URL=postgres://...`, shared by several replicas),
//! one set of repository functions above both.
//!
//! - [`Store::connect`] opens the pool, applies the migrations of its backend
//!   (`migrations/sqlite`, `migrations/postgres`) and checks the encryption key
//!   against the value stored on first start ([`meta`]).
//! - One repository per aggregate, borrowed from the store:
//!   [`Store::users`], [`Store::sessions`], [`Store::pending_logins`],
//!   [`Store::recovery_codes`], [`Store::login_failures`], [`Store::domains`],
//!   [`Store::config`], [`Store::meta`], [`Store::api_keys`],
//!   [`Store::upstream_credentials`], [`Store::usage`].
//!
//! Each query is written once: SQLite accepts PostgreSQL's `$1` parameters,
//! and [`with_pool!`] type-checks the same body against both pools. SQL is
//! split per backend only where the databases differ (locking).
//!
//! Representation, the same on both backends as far as the types allow:
//! ids are UUIDs (`UUID` in PostgreSQL, hyphenated `TEXT` in SQLite; see
//! [`ids`]); timestamps are `BIGINT` Unix seconds in UTC (see [`clock`]),
//! rendered as RFC 3339 at the API edge; booleans are `BOOLEAN` (SQLite stores
//! 0/1); JSON documents are `TEXT`.

pub mod api_keys;
pub mod clock;
pub mod config;
pub mod domains;
pub mod fallbacks;
pub mod guardrails;
pub mod ids;
pub mod login_failures;
pub mod meta;
pub mod model_registry;
pub mod pending_logins;
pub mod provider_accounts;
pub mod provider_oauth_pending;
pub mod provider_switches;
pub mod recovery_codes;
pub mod replicas;
pub mod sessions;
pub mod sso_pending;
#[cfg(test)]
pub(crate) mod testing;
pub mod upstream_credentials;
pub mod usage;
pub mod users;

use std::path::Path;
use std::str::FromStr as _;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Postgres, Sqlite, Transaction};

use crate::config::Config;
use crate::crypto::key_file::{self, KeySource};
use crate::crypto::{Cipher, CryptoError, EncryptionKey};
use crate::error::GatewayError;

/// Run `$body` with `$p` bound to the concrete pool, so one body is compiled
/// for SQLite and for PostgreSQL.
macro_rules! with_pool {
    ($store:expr, $p:ident => $body:expr) => {
        match $store.pool() {
            $crate::store::Pool::Sqlite($p) => $body,
            $crate::store::Pool::Postgres($p) => $body,
        }
    };
}
pub(crate) use with_pool;

/// Run `$body` (a block ending in `Ok(value)`) in a write transaction on
/// pool `$p`, with the transaction bound to `$tx`: committed when the body
/// returns `Ok`, rolled back at once when it returns `Err` (an early
/// `return Err(..)` or `?` inside the body leaves the body, not the caller).
/// The rollback is explicit so a refused change releases its locks before
/// the caller goes on, instead of whenever the connection is next used.
macro_rules! write_tx {
    ($p:ident, $tx:ident => $body:block) => {{
        let mut $tx = $crate::store::WritePool::begin_write($p).await?;
        let result: Result<_, $crate::store::StoreError> = async { $body }.await;
        match result {
            Ok(value) => {
                $tx.commit().await?;
                value
            }
            Err(err) => {
                if let Err(e) = $tx.rollback().await {
                    tracing::warn!("rolling back a refused change: {e}");
                }
                return Err(err);
            }
        }
    }};
}
pub(crate) use write_tx;

/// The connection pool of one backend.
#[derive(Debug, Clone)]
pub enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Which database a store uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Sqlite => "sqlite",
            Backend::Postgres => "postgres",
        }
    }
}

/// A store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error("applying the database migrations: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    #[error(transparent)]
    Crypto(#[from] CryptoError),
    /// The key decrypts nothing this database holds.
    #[error(
        "the encryption key does not match the key this database was set up with: \
         set CONFIG_ENCRYPTION_KEY (or restore $DATA_DIR/encryption.key) to the original key"
    )]
    WrongKey,
    #[error("DATABASE_URL: {0}")]
    InvalidUrl(String),
    /// A record the caller named does not exist.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// A uniqueness rule or a state rule refused the change.
    #[error("{0}")]
    Conflict(String),
    /// The change would leave no admin.
    #[error("the last admin cannot be removed or demoted")]
    LastAdmin,
    /// The user holds the most API keys allowed.
    #[error("the user holds {max} API keys already")]
    KeyLimit { max: i64 },
    /// A stored value is not what this build writes.
    #[error("corrupt stored value: {0}")]
    Corrupt(String),
}

impl From<StoreError> for GatewayError {
    fn from(err: StoreError) -> Self {
        match err {
            StoreError::NotFound(what) => GatewayError::NotFound(format!("{what} not found")),
            StoreError::Conflict(message) => GatewayError::Conflict(message),
            StoreError::LastAdmin => GatewayError::Conflict(StoreError::LastAdmin.to_string()),
            StoreError::KeyLimit { max } => {
                GatewayError::Conflict(format!("you hold {max} API keys already; delete one first"))
            }
            other => GatewayError::Internal(other.into()),
        }
    }
}

/// The store; cheap to clone (the pool and cipher are shared).
#[derive(Debug, Clone)]
pub struct Store {
    pool: Pool,
    cipher: Cipher,
}

/// Most pooled connections per process.
const MAX_CONNECTIONS_POSTGRES: u32 = 10;
/// SQLite has one writer at a time; a few connections serve concurrent reads (WAL).
const MAX_CONNECTIONS_SQLITE: u32 = 4;
/// How long a SQLite writer waits for the lock before failing.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// How long to wait for a pooled connection.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(15);

impl Store {
    /// Open the store of `config`: create `DATA_DIR`, resolve the encryption
    /// key (`CONFIG_ENCRYPTION_KEY` or the key file, generated on first run),
    /// connect, migrate and check the key. Logs where the key came from.
    pub async fn open(config: &Config) -> Result<Store, StoreError> {
        std::fs::create_dir_all(&config.data_dir).map_err(|source| {
            StoreError::Crypto(CryptoError::Io {
                context: format!("creating DATA_DIR {}", config.data_dir.display()),
                source,
            })
        })?;
        let (key, source) =
            key_file::resolve(config.config_encryption_key.as_ref(), &config.data_dir)?;
        match &source {
            KeySource::Environment => {
                tracing::info!("stored secrets are encrypted with CONFIG_ENCRYPTION_KEY")
            }
            KeySource::File(path) => tracing::info!(
                "stored secrets are encrypted with the key in {}",
                path.display()
            ),
            KeySource::Generated(path) => tracing::warn!(
                "CONFIG_ENCRYPTION_KEY is not set: generated a new encryption key in {} \
                 (mode 0600); keep it with the database, or set CONFIG_ENCRYPTION_KEY",
                path.display()
            ),
        }
        Store::connect(config.database_url.expose(), &key).await
    }

    /// Connect to `url` (`sqlite:...`, `postgres://...`), apply the migrations
    /// and verify `key` against the database's key check.
    pub async fn connect(url: &str, key: &EncryptionKey) -> Result<Store, StoreError> {
        let pool = if url.starts_with("sqlite:") {
            Pool::Sqlite(connect_sqlite(url).await?)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Pool::Postgres(connect_postgres(url).await?)
        } else {
            return Err(StoreError::InvalidUrl(
                "expected a sqlite://... or postgres://... URL".into(),
            ));
        };
        match &pool {
            Pool::Sqlite(p) => sqlx::migrate!("./migrations/sqlite").run(p).await?,
            Pool::Postgres(p) => sqlx::migrate!("./migrations/postgres").run(p).await?,
        }
        let store = Store {
            pool,
            cipher: Cipher::new(key),
        };
        store.meta().verify_key().await?;
        Ok(store)
    }

    pub fn backend(&self) -> Backend {
        match self.pool {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Postgres(_) => Backend::Postgres,
        }
    }

    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The cipher of stored secrets.
    pub fn cipher(&self) -> &Cipher {
        &self.cipher
    }

    /// Close every pooled connection (tests reopening the same database).
    pub async fn close(&self) {
        with_pool!(self, p => p.close().await)
    }

    pub fn users(&self) -> users::Users<'_> {
        users::Users::new(self)
    }

    pub fn sessions(&self) -> sessions::Sessions<'_> {
        sessions::Sessions::new(self)
    }

    pub fn pending_logins(&self) -> pending_logins::PendingLogins<'_> {
        pending_logins::PendingLogins::new(self)
    }

    pub fn recovery_codes(&self) -> recovery_codes::RecoveryCodes<'_> {
        recovery_codes::RecoveryCodes::new(self)
    }

    pub fn login_failures(&self) -> login_failures::LoginFailures<'_> {
        login_failures::LoginFailures::new(self)
    }

    pub fn domains(&self) -> domains::Domains<'_> {
        domains::Domains::new(self)
    }

    pub fn config(&self) -> config::ConfigStore<'_> {
        config::ConfigStore::new(self)
    }

    pub fn meta(&self) -> meta::Meta<'_> {
        meta::Meta::new(self)
    }

    pub fn api_keys(&self) -> api_keys::ApiKeys<'_> {
        api_keys::ApiKeys::new(self)
    }

    pub fn fallbacks(&self) -> fallbacks::Fallbacks<'_> {
        fallbacks::Fallbacks::new(self)
    }

    pub fn guardrails(&self) -> guardrails::Guardrails<'_> {
        guardrails::Guardrails::new(self)
    }

    pub fn replicas(&self) -> replicas::Replicas<'_> {
        replicas::Replicas::new(self)
    }

    pub fn model_registry(&self) -> model_registry::ModelRegistry<'_> {
        model_registry::ModelRegistry::new(self)
    }

    pub fn provider_accounts(&self) -> provider_accounts::ProviderAccounts<'_> {
        provider_accounts::ProviderAccounts::new(self)
    }

    pub fn provider_oauth_pending(&self) -> provider_oauth_pending::ProviderOAuthPending<'_> {
        provider_oauth_pending::ProviderOAuthPending::new(self)
    }

    pub fn sso_pending(&self) -> sso_pending::SsoPending<'_> {
        sso_pending::SsoPending::new(self)
    }

    pub fn provider_switches(&self) -> provider_switches::ProviderSwitches<'_> {
        provider_switches::ProviderSwitches::new(self)
    }

    pub fn upstream_credentials(&self) -> upstream_credentials::UpstreamCredentialStore<'_> {
        upstream_credentials::UpstreamCredentialStore::new(self)
    }

    pub fn usage(&self) -> usage::Usage<'_> {
        usage::Usage::new(self)
    }
}

async fn connect_sqlite(url: &str) -> Result<SqlitePool, StoreError> {
    let options = SqliteConnectOptions::from_str(url)
        .map_err(|e| StoreError::InvalidUrl(e.to_string()))?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(SQLITE_BUSY_TIMEOUT);
    if let Some(dir) = options.get_filename().parent() {
        if !dir.as_os_str().is_empty() && dir != Path::new(":memory:") {
            std::fs::create_dir_all(dir).map_err(|source| {
                StoreError::Crypto(CryptoError::Io {
                    context: format!("creating {}", dir.display()),
                    source,
                })
            })?;
        }
    }
    let path = options.get_filename().to_path_buf();
    let existed = path.exists();
    let pool = SqlitePoolOptions::new()
        .max_connections(MAX_CONNECTIONS_SQLITE)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await?;
    if !existed {
        restrict_to_owner(&path);
    }
    Ok(pool)
}

/// A database file this process created is readable by its owner only
/// (SQLite gives its `-wal` and `-shm` files the same mode).
#[cfg(unix)]
fn restrict_to_owner(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let mut files = vec![path.to_path_buf()];
    for suffix in ["-wal", "-shm"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        files.push(name.into());
    }
    for file in files.iter().filter(|f| f.is_file()) {
        if let Err(e) = std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600)) {
            tracing::warn!("could not restrict {} to its owner: {e}", file.display());
        }
    }
}

#[cfg(not(unix))]
fn restrict_to_owner(_path: &Path) {}

async fn connect_postgres(url: &str) -> Result<PgPool, StoreError> {
    let options =
        PgConnectOptions::from_str(url).map_err(|e| StoreError::InvalidUrl(e.to_string()))?;
    Ok(PgPoolOptions::new()
        .max_connections(MAX_CONNECTIONS_POSTGRES)
        .acquire_timeout(ACQUIRE_TIMEOUT)
        .connect_with(options)
        .await?)
}

/// How a SQLite transaction that will write begins (see [`WritePool`]).
pub(crate) const SQLITE_BEGIN_WRITE: &str = "BEGIN IMMEDIATE";

/// Backend-specific transaction handling, used inside [`with_pool!`] bodies.
pub(crate) trait WritePool {
    type Db: sqlx::Database;
    /// Begin a transaction that will write. SQLite takes the write lock at
    /// once (`BEGIN IMMEDIATE`), so a read-then-write never fails on lock
    /// upgrade; PostgreSQL begins normally.
    async fn begin_write(&self) -> Result<Transaction<'static, Self::Db>, sqlx::Error>;
}

impl WritePool for SqlitePool {
    type Db = Sqlite;
    async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>, sqlx::Error> {
        self.begin_with(SQLITE_BEGIN_WRITE).await
    }
}

impl WritePool for PgPool {
    type Db = Postgres;
    async fn begin_write(&self) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        self.begin().await
    }
}

/// Serialises the changes that decide who is an admin (first-admin claim,
/// role change, delete), so two of them cannot both see "another admin
/// exists" and together leave none, or both see "no admin yet".
pub(crate) trait RoleLock {
    async fn lock_roles(&mut self) -> Result<(), sqlx::Error>;
}

impl RoleLock for Transaction<'static, Sqlite> {
    /// `BEGIN IMMEDIATE` already holds SQLite's single write lock.
    async fn lock_roles(&mut self) -> Result<(), sqlx::Error> {
        Ok(())
    }
}

impl RoleLock for Transaction<'static, Postgres> {
    /// A transaction-scoped advisory lock, released at commit or rollback.
    /// Advisory locks are database-wide: the key includes the schema, so
    /// deployments (or tests) in different schemas of one database do not
    /// wait for each other.
    async fn lock_roles(&mut self) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))")
            .bind(ROLE_LOCK_CLASS)
            .execute(&mut **self)
            .await
            .map(|_| ())
    }
}

/// The advisory lock class of role changes (an arbitrary constant).
const ROLE_LOCK_CLASS: i32 = 0x6777_726c;
