//! The domain allowlist of SSO sign-in (spec 5.3).
//!
//! Rule of [`Domains::is_allowed`]: an email domain is allowed when it is on
//! the list, exactly (no implicit subdomains: `example.com` does not admit
//! `evil.example.com`'s users; add each domain). An empty list admits nobody,
//! with one exception: while setup is incomplete (no admin yet) an empty list
//! admits the first sign-in, so a deployment whose first admin arrives by SSO
//! can be set up; once an admin exists, creating an account through SSO
//! needs an allowlisted domain. The list guards account creation only: an
//! existing account signs in whatever its domain (`ui_api::sso`), so removing
//! a domain does not lock out its admins. Password accounts are not affected
//! (admins create them).

use super::clock::now;
use super::ids::UserId;
use super::{with_pool, Store, StoreError};

/// One allowlisted domain.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct AllowedDomain {
    pub domain: String,
    pub added_by: Option<UserId>,
    pub created_at: i64,
}

/// A domain as stored: trimmed, lower-case, without a leading `@` or a
/// trailing dot; or what is wrong with it.
pub fn normalize_domain(input: &str) -> Result<String, String> {
    let d = input.trim().trim_start_matches('@').trim_end_matches('.');
    let d = d.to_ascii_lowercase();
    let labels_ok = d.split('.').all(|label| {
        (1..=63).contains(&label.len())
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    if d.len() <= 253 && d.contains('.') && labels_ok {
        Ok(d)
    } else {
        Err("domain: expected a domain name such as example.com".into())
    }
}

/// The domain-allowlist repository.
pub struct Domains<'a> {
    store: &'a Store,
}

impl<'a> Domains<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        Domains { store }
    }

    /// Every domain, alphabetically.
    pub async fn list(&self) -> Result<Vec<AllowedDomain>, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT domain, added_by, created_at FROM domain_allowlist ORDER BY domain",
            )
            .fetch_all(p)
            .await?
        }))
    }

    /// Add `domain` (already normalised); false when it was on the list.
    pub async fn add(&self, domain: &str, added_by: Option<UserId>) -> Result<bool, StoreError> {
        let now = now();
        let done = with_pool!(self.store, p => {
            sqlx::query(
                "INSERT INTO domain_allowlist (domain, added_by, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (domain) DO NOTHING",
            )
            .bind(domain)
            .bind(added_by)
            .bind(now)
            .execute(p)
            .await?
            .rows_affected()
        });
        Ok(done == 1)
    }

    /// Remove `domain`; false when it was not on the list.
    pub async fn remove(&self, domain: &str) -> Result<bool, StoreError> {
        let done = with_pool!(self.store, p => {
            sqlx::query("DELETE FROM domain_allowlist WHERE domain = $1")
                .bind(domain)
                .execute(p)
                .await?
                .rows_affected()
        });
        Ok(done == 1)
    }

    /// Whether an SSO sign-in with an email of `email_domain` is allowed
    /// (the rule is in the module doc).
    pub async fn is_allowed(&self, email_domain: &str) -> Result<bool, StoreError> {
        let domain = email_domain
            .trim()
            .trim_end_matches('.')
            .to_ascii_lowercase();
        let (listed, any, has_admin): (bool, bool, bool) = with_pool!(self.store, p => {
            sqlx::query_as(
                "SELECT EXISTS (SELECT 1 FROM domain_allowlist WHERE domain = $1), \
                        EXISTS (SELECT 1 FROM domain_allowlist), \
                        EXISTS (SELECT 1 FROM users WHERE role = 'Admin')",
            )
            .bind(&domain)
            .fetch_one(p)
            .await?
        });
        Ok(listed || (!any && !has_admin))
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_domain;

    #[test]
    fn domains_normalise_and_validate() {
        assert_eq!(normalize_domain(" @Example.COM. ").unwrap(), "example.com");
        assert_eq!(
            normalize_domain("xn--bcher-kva.de").unwrap(),
            "xn--bcher-kva.de"
        );
        for bad in [
            "",
            "localhost",
            "a..b",
            "-a.com",
            "a-.com",
            "exa mple.com",
            "a@b.com",
            "*.a.com",
        ] {
            assert!(normalize_domain(bad).is_err(), "{bad}");
        }
    }
}
