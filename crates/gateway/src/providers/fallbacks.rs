//! The fallback chains as requests see them (issue 21): a map from the
//! model a client names to the models tried in turn when it fails before
//! the first byte, swapped whole when the administrator changes it (here
//! at once, on other replicas at the `fallbacks` announcement and every
//! 30 s). Without chains a request pays one atomic load.

use std::collections::HashMap;
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::error::GatewayError;
use crate::store::fallbacks::Chain;
use crate::store::{Store, StoreError};

/// The chains; cheap to share.
#[derive(Debug, Default)]
pub struct FallbackChains {
    chains: ArcSwap<HashMap<String, Arc<[String]>>>,
}

impl FallbackChains {
    /// The models standing in for `model`, when it has a chain.
    pub fn for_model(&self, model: &str) -> Option<Arc<[String]>> {
        let chains = self.chains.load();
        if chains.is_empty() {
            return None;
        }
        chains.get(model).cloned()
    }

    /// Use `chains` from now on.
    pub fn set(&self, chains: &[Chain]) {
        let map = chains
            .iter()
            .filter(|c| !c.fallbacks.is_empty())
            .map(|c| (c.model.clone(), Arc::from(c.fallbacks.clone())))
            .collect();
        self.chains.store(Arc::new(map));
    }

    /// Read the chains from the store again.
    pub async fn reload(&self, store: &Store) -> Result<(), StoreError> {
        self.set(&store.fallbacks().list().await?);
        Ok(())
    }
}

/// Whether a failure before the first byte lets the next model of a chain
/// try: the provider could not be reached, failed (5xx), refused for load
/// (429, after the gateway's own retries and account fallover) or did not
/// begin its answer in time. Anything about the request itself (400s, a
/// model the caller may not use) is the answer.
pub fn falls_back(e: &GatewayError) -> bool {
    match e {
        GatewayError::Upstream { status, .. } => status.is_server_error() || status.as_u16() == 429,
        _ => false,
    }
}

/// Whether a chain's entry cannot serve this caller, so the next one is
/// tried (the entry is skipped; the original failure stays the answer if
/// none serves).
pub fn unusable(e: &GatewayError) -> bool {
    matches!(
        e,
        GatewayError::ProviderNotConnected(_)
            | GatewayError::ProviderDisabled(_)
            | GatewayError::ModelDisabled(_)
            | GatewayError::InvalidModel(_)
            | GatewayError::Forbidden(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;

    #[test]
    fn chains_and_what_falls_back() {
        let c = FallbackChains::default();
        assert!(c.for_model("a").is_none());
        c.set(&[
            Chain {
                model: "a".into(),
                fallbacks: vec!["b".into(), "custom/c".into()],
            },
            Chain {
                model: "empty".into(),
                fallbacks: vec![],
            },
        ]);
        assert_eq!(c.for_model("a").unwrap().as_ref(), ["b", "custom/c"]);
        assert!(c.for_model("empty").is_none());
        let upstream = |s: u16| GatewayError::Upstream {
            status: StatusCode::from_u16(s).unwrap(),
            message: String::new(),
            retry_after: None,
        };
        assert!(
            falls_back(&upstream(500)) && falls_back(&upstream(504)) && falls_back(&upstream(429))
        );
        assert!(!falls_back(&upstream(400)) && !falls_back(&GatewayError::validation("x")));
        assert!(unusable(&GatewayError::ProviderNotConnected("x".into())));
    }
}
