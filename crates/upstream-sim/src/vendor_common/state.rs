//! The vendor simulators' state, one per simulator instance: live settings,
//! scenario queues, the messages vendor's OAuth tokens, the assistant tokens,
//! and stream counters per vendor. Each part sits behind its own lock.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::config::VendorsConfig;
use super::scenario::VendorScenario;
use super::select::{self, VendorBook};
use super::Vendor;
use crate::assistant_vendor::tokens::AssistantTokens;
use crate::messages_vendor::oauth::OAuthStore;
use crate::stats::StreamCounters;

#[derive(Debug)]
pub(crate) struct VendorState {
    settings: Mutex<VendorsConfig>,
    book: Mutex<VendorBook>,
    oauth: Mutex<OAuthStore>,
    assistant: Mutex<AssistantTokens>,
    streams: [Arc<StreamCounters>; 4],
    /// The API listener's base URL (the assistant token's `endpoints.api` is below it).
    api_base: OnceLock<String>,
}

/// Lock a mutex, ignoring poisoning: a panicked handler leaves consistent maps.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl VendorState {
    pub fn new(config: &VendorsConfig) -> Self {
        VendorState {
            settings: Mutex::new(config.clone()),
            book: Mutex::new(VendorBook::new(config.default_scenario.clone())),
            oauth: Mutex::new(OAuthStore::default()),
            assistant: Mutex::new(AssistantTokens::default()),
            streams: Default::default(),
            api_base: OnceLock::new(),
        }
    }

    pub fn settings(&self) -> MutexGuard<'_, VendorsConfig> {
        lock(&self.settings)
    }

    pub fn book(&self) -> MutexGuard<'_, VendorBook> {
        lock(&self.book)
    }

    pub fn oauth(&self) -> MutexGuard<'_, OAuthStore> {
        lock(&self.oauth)
    }

    pub fn assistant(&self) -> MutexGuard<'_, AssistantTokens> {
        lock(&self.assistant)
    }

    pub fn streams(&self, vendor: Vendor) -> &Arc<StreamCounters> {
        &self.streams[vendor.index()]
    }

    pub fn set_api_base(&self, url: String) {
        // Set once at start; a second call is impossible by construction.
        let _ = self.api_base.set(url);
    }

    pub fn api_base(&self) -> &str {
        self.api_base.get().map(String::as_str).unwrap_or("")
    }

    /// The scenario of one request to `vendor` whose last user text is `text`.
    pub fn choose(
        &self,
        vendor: Vendor,
        text: &str,
    ) -> Result<VendorScenario, super::scenario::VendorScenarioParseError> {
        let directives = select::parse_directives(text)?;
        Ok(self.book().choose(vendor, directives))
    }
}
