//! The [`SimHandle`] methods of the guardrail service: its URL, the
//! credentials it accepts, its settings and its call counts.

use super::SimHandle;
use crate::guardrail::config::GuardrailConfig;
use crate::guardrail::{GuardrailStats, PREFIX};

impl SimHandle {
    /// `GUARDRAIL_ENDPOINT`: `{base_url}/guardrail-service` (the gateway
    /// calls `POST /guardrail/{id}/version/{version}/apply` below it).
    pub fn guardrail_url(&self) -> String {
        format!("{}{PREFIX}", self.base_url())
    }

    /// The first access key pair the guardrail accepts:
    /// `(access key id, secret access key)`.
    pub fn guardrail_credentials(&self) -> (String, String) {
        let settings = self.services.guardrail.settings();
        settings.credentials.first().cloned().unwrap_or_default()
    }

    /// Change the guardrail's behaviour while running (keys, accept-any,
    /// blocked messages).
    pub fn update_guardrail(&self, change: impl FnOnce(&mut GuardrailConfig)) {
        change(&mut self.services.guardrail.settings());
    }

    /// Guardrail calls so far: `(INPUT, OUTPUT)`, counted by the source their
    /// body named, whatever the answer.
    pub fn guardrail_calls(&self) -> (u64, u64) {
        let stats = self.guardrail_stats();
        (stats.input, stats.output)
    }

    /// Guardrail calls per source and those answered with an error.
    pub fn guardrail_stats(&self) -> GuardrailStats {
        self.services.guardrail.stats()
    }
}
