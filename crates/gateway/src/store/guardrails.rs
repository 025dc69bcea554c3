//! Guardrail profiles and rules (issue 16, spec 2.8), and the links
//! between them. A profile's secret key and session token are encrypted
//! at rest, bound to their column and the profile's id, and leave this
//! module only through [`Guardrails::keys`]. Every write is one
//! transaction that announces `guardrails`, so every replica reloads its
//! rules at once.

use super::clock::now;
use super::ids::{GuardrailProfileId, GuardrailRuleId};
use super::upstream_credentials::Announce as _;
use super::users::conflict_on_unique;
use super::{with_pool, write_tx, Store, StoreError};
use crate::config::Secret;

/// The payload that makes replicas reload the guardrails.
pub const GUARDRAILS_PAYLOAD: &str = "guardrails";

/// A profile as listed: everything but its secrets.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Profile {
    pub id: GuardrailProfileId,
    pub name: String,
    pub guardrail_id: String,
    pub guardrail_version: String,
    pub region: String,
    pub access_key_id: String,
    pub enabled: bool,
    pub created_at: i64,
    pub updated_at: i64,
    /// The rules that use it.
    #[sqlx(skip)]
    pub rule_ids: Vec<GuardrailRuleId>,
}

/// A rule as stored.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Rule {
    pub id: GuardrailRuleId,
    pub name: String,
    pub description: String,
    pub cel_expression: String,
    /// `Input`, `Output` or `Both`.
    pub apply_to: String,
    pub sampling_rate: i64,
    pub enabled: bool,
    pub created_at: i64,
    pub updated_at: i64,
    /// The profiles it runs.
    #[sqlx(skip)]
    pub profile_ids: Vec<GuardrailProfileId>,
}

/// A profile's fields (a new profile, or the whole of a changed one);
/// secrets `None` on a change keep the stored ones.
#[derive(Debug)]
pub struct ProfileFields {
    pub name: String,
    pub guardrail_id: String,
    pub guardrail_version: String,
    pub region: String,
    pub access_key_id: String,
    pub secret_access_key: Option<Secret>,
    /// `Some(None)`: remove the stored token.
    pub session_token: Option<Option<Secret>>,
    pub enabled: bool,
}

/// A rule's fields (a new rule, or the whole of a changed one).
#[derive(Debug, Clone)]
pub struct RuleFields {
    pub name: String,
    pub description: String,
    pub cel_expression: String,
    pub apply_to: String,
    pub sampling_rate: i64,
    pub enabled: bool,
    pub profile_ids: Vec<GuardrailProfileId>,
}

/// A profile's keys, decrypted.
#[derive(Debug, Clone)]
pub struct ProfileKeys {
    pub secret_access_key: Secret,
    pub session_token: Option<Secret>,
}

fn secret_context(id: GuardrailProfileId) -> String {
    format!("guardrail_profiles.secret_access_key:{id}")
}

fn token_context(id: GuardrailProfileId) -> String {
    format!("guardrail_profiles.session_token:{id}")
}

const PROFILE_COLUMNS: &str = "id, name, guardrail_id, guardrail_version, region, access_key_id, \
     enabled, created_at, updated_at";
const RULE_COLUMNS: &str = "id, name, description, cel_expression, apply_to, sampling_rate, \
     enabled, created_at, updated_at";

/// The ids linked to `id`; `sides` turns a link into (`id`'s side, the other).
fn linked<T: PartialEq, U>(
    links: &[(GuardrailRuleId, GuardrailProfileId)],
    sides: impl Fn(&(GuardrailRuleId, GuardrailProfileId)) -> (T, U),
    id: T,
) -> Vec<U> {
    links
        .iter()
        .map(sides)
        .filter(|(this, _)| *this == id)
        .map(|(_, other)| other)
        .collect()
}

/// A row to delete.
#[derive(Clone, Copy)]
enum Row {
    Profile(GuardrailProfileId),
    Rule(GuardrailRuleId),
}

/// The guardrail repository.
pub struct Guardrails<'a> {
    store: &'a Store,
}

impl<'a> Guardrails<'a> {
    pub(crate) fn new(store: &'a Store) -> Self {
        Guardrails { store }
    }

    async fn links(&self) -> Result<Vec<(GuardrailRuleId, GuardrailProfileId)>, StoreError> {
        Ok(with_pool!(self.store, p => {
            sqlx::query_as("SELECT rule_id, profile_id FROM guardrail_rule_profiles")
                .fetch_all(p)
                .await?
        }))
    }

    /// Every profile, by name, with the rules that use it.
    pub async fn profiles(&self) -> Result<Vec<Profile>, StoreError> {
        let sql = format!("SELECT {PROFILE_COLUMNS} FROM guardrail_profiles ORDER BY name");
        let mut profiles: Vec<Profile> = with_pool!(self.store, p => {
            sqlx::query_as(&sql).fetch_all(p).await?
        });
        let links = self.links().await?;
        for profile in &mut profiles {
            profile.rule_ids = linked(&links, |&(r, p)| (p, r), profile.id);
        }
        Ok(profiles)
    }

    /// One profile.
    pub async fn profile(&self, id: GuardrailProfileId) -> Result<Profile, StoreError> {
        self.profiles()
            .await?
            .into_iter()
            .find(|p| p.id == id)
            .ok_or(StoreError::NotFound("guardrail profile"))
    }

    /// A profile's keys, decrypted.
    pub async fn keys(&self, id: GuardrailProfileId) -> Result<ProfileKeys, StoreError> {
        let row: Option<(String, Option<String>)> = with_pool!(self.store, p => {
            sqlx::query_as("SELECT secret_access_key, session_token FROM guardrail_profiles WHERE id = $1")
                .bind(id)
                .fetch_optional(p)
                .await?
        });
        let (secret, token) = row.ok_or(StoreError::NotFound("guardrail profile"))?;
        let cipher = self.store.cipher();
        Ok(ProfileKeys {
            secret_access_key: cipher.decrypt_secret(&secret, &secret_context(id))?,
            session_token: token
                .map(|t| cipher.decrypt_secret(&t, &token_context(id)))
                .transpose()?,
        })
    }

    /// Store a new profile (its secret key is required).
    pub async fn create_profile(&self, fields: ProfileFields) -> Result<Profile, StoreError> {
        let id = GuardrailProfileId::new();
        let cipher = self.store.cipher();
        let secret = fields
            .secret_access_key
            .as_ref()
            .ok_or_else(|| StoreError::Conflict("a profile needs its secret access key".into()))?;
        let secret = cipher.encrypt_secret(secret, &secret_context(id))?;
        let token = fields
            .session_token
            .flatten()
            .map(|t| cipher.encrypt_secret(&t, &token_context(id)))
            .transpose()?;
        let at = now();
        with_pool!(self.store, p => write_tx!(p, tx => {
            sqlx::query(
                "INSERT INTO guardrail_profiles (id, name, guardrail_id, guardrail_version, region, \
                 access_key_id, secret_access_key, session_token, enabled, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)",
            )
            .bind(id)
            .bind(&fields.name)
            .bind(&fields.guardrail_id)
            .bind(&fields.guardrail_version)
            .bind(&fields.region)
            .bind(&fields.access_key_id)
            .bind(&secret)
            .bind(&token)
            .bind(fields.enabled)
            .bind(at)
            .execute(&mut *tx)
            .await
            .map_err(|e| conflict_on_unique(e, "a guardrail profile of that name exists"))?;
            tx.announce(GUARDRAILS_PAYLOAD).await?;
            Ok(())
        }));
        self.profile(id).await
    }

    /// Replace a profile's fields; secrets given replace the stored ones.
    pub async fn update_profile(
        &self,
        id: GuardrailProfileId,
        fields: ProfileFields,
    ) -> Result<Profile, StoreError> {
        let cipher = self.store.cipher();
        let secret = fields
            .secret_access_key
            .as_ref()
            .map(|s| cipher.encrypt_secret(s, &secret_context(id)))
            .transpose()?;
        let token = match &fields.session_token {
            None => None,
            Some(None) => Some(None),
            Some(Some(t)) => Some(Some(cipher.encrypt_secret(t, &token_context(id))?)),
        };
        with_pool!(self.store, p => write_tx!(p, tx => {
            let changed = sqlx::query(
                "UPDATE guardrail_profiles SET name = $2, guardrail_id = $3, guardrail_version = $4, \
                 region = $5, access_key_id = $6, enabled = $7, updated_at = $8, \
                 secret_access_key = COALESCE($9, secret_access_key), \
                 session_token = CASE WHEN $10 THEN $11 ELSE session_token END \
                 WHERE id = $1",
            )
            .bind(id)
            .bind(&fields.name)
            .bind(&fields.guardrail_id)
            .bind(&fields.guardrail_version)
            .bind(&fields.region)
            .bind(&fields.access_key_id)
            .bind(fields.enabled)
            .bind(now())
            .bind(&secret)
            .bind(token.is_some())
            .bind(token.clone().flatten())
            .execute(&mut *tx)
            .await
            .map_err(|e| conflict_on_unique(e, "a guardrail profile of that name exists"))?
            .rows_affected();
            if changed == 0 {
                return Err(StoreError::NotFound("guardrail profile"));
            }
            tx.announce(GUARDRAILS_PAYLOAD).await?;
            Ok(())
        }));
        self.profile(id).await
    }

    /// Delete a profile (its links go with it).
    pub async fn delete_profile(&self, id: GuardrailProfileId) -> Result<(), StoreError> {
        self.delete(Row::Profile(id)).await
    }

    /// Delete a rule (its links go with it).
    pub async fn delete_rule(&self, id: GuardrailRuleId) -> Result<(), StoreError> {
        self.delete(Row::Rule(id)).await
    }

    async fn delete(&self, row: Row) -> Result<(), StoreError> {
        let (sql, what) = match row {
            Row::Profile(_) => (
                "DELETE FROM guardrail_profiles WHERE id = $1",
                "guardrail profile",
            ),
            Row::Rule(_) => (
                "DELETE FROM guardrail_rules WHERE id = $1",
                "guardrail rule",
            ),
        };
        with_pool!(self.store, p => write_tx!(p, tx => {
            let query = sqlx::query(sql);
            let query = match row {
                Row::Profile(id) => query.bind(id),
                Row::Rule(id) => query.bind(id),
            };
            if query.execute(&mut *tx).await?.rows_affected() == 0 {
                return Err(StoreError::NotFound(what));
            }
            tx.announce(GUARDRAILS_PAYLOAD).await?;
            Ok(())
        }));
        Ok(())
    }

    /// Every rule, by name, with its profiles.
    pub async fn rules(&self) -> Result<Vec<Rule>, StoreError> {
        let sql = format!("SELECT {RULE_COLUMNS} FROM guardrail_rules ORDER BY name");
        let mut rules: Vec<Rule> = with_pool!(self.store, p => {
            sqlx::query_as(&sql).fetch_all(p).await?
        });
        let links = self.links().await?;
        for rule in &mut rules {
            rule.profile_ids = linked(&links, |&link| link, rule.id);
        }
        Ok(rules)
    }

    /// One rule.
    pub async fn rule(&self, id: GuardrailRuleId) -> Result<Rule, StoreError> {
        self.rules()
            .await?
            .into_iter()
            .find(|r| r.id == id)
            .ok_or(StoreError::NotFound("guardrail rule"))
    }

    /// Store a new rule with its links.
    pub async fn create_rule(&self, fields: RuleFields) -> Result<Rule, StoreError> {
        let id = GuardrailRuleId::new();
        self.write_rule(id, fields, true).await?;
        self.rule(id).await
    }

    /// Replace a rule's fields and links.
    pub async fn update_rule(
        &self,
        id: GuardrailRuleId,
        fields: RuleFields,
    ) -> Result<Rule, StoreError> {
        self.write_rule(id, fields, false).await?;
        self.rule(id).await
    }

    async fn write_rule(
        &self,
        id: GuardrailRuleId,
        f: RuleFields,
        new: bool,
    ) -> Result<(), StoreError> {
        let at = now();
        let sql = if new {
            "INSERT INTO guardrail_rules (id, name, description, cel_expression, apply_to, \
             sampling_rate, enabled, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)"
        } else {
            "UPDATE guardrail_rules SET name = $2, description = $3, cel_expression = $4, \
             apply_to = $5, sampling_rate = $6, enabled = $7, updated_at = $8 WHERE id = $1"
        };
        with_pool!(self.store, p => write_tx!(p, tx => {
            let written = sqlx::query(sql)
                .bind(id)
                .bind(&f.name)
                .bind(&f.description)
                .bind(&f.cel_expression)
                .bind(&f.apply_to)
                .bind(f.sampling_rate)
                .bind(f.enabled)
                .bind(at)
                .execute(&mut *tx)
                .await
                .map_err(|e| conflict_on_unique(e, "a guardrail rule of that name exists"))?
                .rows_affected();
            if written == 0 {
                return Err(StoreError::NotFound("guardrail rule"));
            }
            sqlx::query("DELETE FROM guardrail_rule_profiles WHERE rule_id = $1")
                .bind(id)
                .execute(&mut *tx)
                .await?;
            for profile in &f.profile_ids {
                let (known,): (i64,) = sqlx::query_as("SELECT COUNT(*) FROM guardrail_profiles WHERE id = $1")
                    .bind(*profile)
                    .fetch_one(&mut *tx)
                    .await?;
                if known == 0 {
                    return Err(StoreError::NotFound("guardrail profile"));
                }
                sqlx::query("INSERT INTO guardrail_rule_profiles (rule_id, profile_id) VALUES ($1, $2)")
                    .bind(id)
                    .bind(*profile)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.announce(GUARDRAILS_PAYLOAD).await?;
            Ok(())
        }));
        Ok(())
    }
}
