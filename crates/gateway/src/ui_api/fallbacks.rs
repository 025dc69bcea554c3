//! `GET, PUT /_ui/api/admin/fallbacks` (issue 21; admin only): the fallback
//! chains, `{chains: [{model, fallbacks: [model, ...]}]}` with names as
//! sent on `/v1` (`provider/model` allowed). `PUT` replaces every chain and
//! answers what is stored; the change applies at once here and, with
//! PostgreSQL, within a second on other replicas.
//!
//! Checked: names non-empty, without control characters, at most 256
//! bytes; at most [`CHAINS_MAX`] chains of [`FALLBACKS_MAX`] models; a
//! model has one chain; a chain does not name its own model. Whether a name
//! is served is not checked here (a chain may name a provider some users
//! have not connected: for them that entry is skipped).

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};

use super::extract::Admin;
use super::json::UiJson;
use crate::error::GatewayError;
use crate::state::AppState;
use crate::store::fallbacks::Chain;

const CHAINS_MAX: usize = 200;
const FALLBACKS_MAX: usize = 10;

/// The request and the answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "FallbackChains"))]
pub(crate) struct Chains {
    chains: Vec<Chain>,
}

/// A model name as `/v1` takes it, trimmed.
fn valid_name(name: &str, field: &str) -> Result<String, GatewayError> {
    let name = name.trim();
    if name.is_empty() || name.len() > 256 || name.chars().any(char::is_control) {
        return Err(GatewayError::validation(format!(
            "{field}: a model name as sent on /v1 (provider/model allowed), not empty"
        )));
    }
    Ok(name.to_owned())
}

fn valid(chains: Vec<Chain>) -> Result<Vec<Chain>, GatewayError> {
    if chains.len() > CHAINS_MAX {
        return Err(GatewayError::validation(format!(
            "chains: at most {CHAINS_MAX}"
        )));
    }
    let mut out: Vec<Chain> = Vec::with_capacity(chains.len());
    for (i, chain) in chains.into_iter().enumerate() {
        let model = valid_name(&chain.model, &format!("chains[{i}].model"))?;
        if out.iter().any(|c| c.model == model) {
            return Err(GatewayError::validation(format!(
                "chains[{i}].model: '{model}' has a chain already"
            )));
        }
        if chain.fallbacks.len() > FALLBACKS_MAX {
            return Err(GatewayError::validation(format!(
                "chains[{i}].fallbacks: at most {FALLBACKS_MAX} models"
            )));
        }
        let mut fallbacks: Vec<String> = Vec::with_capacity(chain.fallbacks.len());
        for (j, f) in chain.fallbacks.iter().enumerate() {
            let f = valid_name(f, &format!("chains[{i}].fallbacks[{j}]"))?;
            if f == model {
                return Err(GatewayError::validation(format!(
                    "chains[{i}].fallbacks[{j}]: a model cannot stand in for itself"
                )));
            }
            if !fallbacks.contains(&f) {
                fallbacks.push(f);
            }
        }
        out.push(Chain { model, fallbacks });
    }
    Ok(out)
}

/// `GET /_ui/api/admin/fallbacks`.
pub(crate) async fn get(
    State(app): State<AppState>,
    _admin: Admin,
) -> Result<Json<Chains>, GatewayError> {
    let chains = app.store()?.fallbacks().list().await?;
    Ok(Json(Chains { chains }))
}

/// `PUT /_ui/api/admin/fallbacks`.
pub(crate) async fn put(
    State(app): State<AppState>,
    admin: Admin,
    UiJson(body): UiJson<Chains>,
) -> Result<Json<Chains>, GatewayError> {
    let chains = valid(body.chains)?;
    let store = app.store()?;
    store.fallbacks().replace(&chains).await?;
    app.fallbacks().set(&chains);
    tracing::info!(by = %admin.user.id, chains = chains.len(), "fallback chains changed");
    Ok(Json(Chains { chains }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(model: &str, fallbacks: &[&str]) -> Chain {
        Chain {
            model: model.into(),
            fallbacks: fallbacks.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn chains_are_checked() {
        let ok = valid(vec![chain(" a ", &["b", "b", "custom/c"])]).unwrap();
        assert_eq!(ok, vec![chain("a", &["b", "custom/c"])]);
        assert!(valid(vec![chain("a", &["a"])]).is_err());
        assert!(valid(vec![chain("a", &[]), chain("a", &["b"])]).is_err());
        assert!(valid(vec![chain("", &["b"])]).is_err());
        assert!(valid(vec![chain("a", &["b\u{7}c"])]).is_err());
    }
}
