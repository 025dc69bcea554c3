//! A store for unit tests: SQLite in a fresh file under the system's
//! temporary directory (a pool of in-memory connections would be several
//! databases), with one user to own things.

use super::ids::UserId;
use super::users::{AuthMethod, NewUser, RoleChoice};
use super::Store;
use crate::crypto::cipher::EncryptionKey;

/// A migrated, empty store.
pub(crate) async fn memory_store() -> Store {
    let dir =
        std::env::temp_dir().join(format!("gateway-unit-{}", crate::crypto::random::token(12)));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let url = format!("sqlite://{}/test.db", dir.display());
    Store::connect(&url, &EncryptionKey::generate())
        .await
        .expect("a SQLite store")
}

/// A new password user.
pub(crate) async fn user(store: &Store, email: &str) -> UserId {
    store
        .users()
        .create(NewUser {
            email,
            role: RoleChoice::AdminIfNone,
            auth_method: AuthMethod::Password,
            password_hash: Some("$argon2id$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaA"),
            sso_subject: None,
            totp_secret: None,
            must_change_password: false,
        })
        .await
        .expect("a user")
        .id
}
