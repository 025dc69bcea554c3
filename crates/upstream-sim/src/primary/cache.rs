//! Pre-encoded content frames for the answers that are the same for every
//! request (generated text and the default answer per model), so a benchmark
//! run encodes each answer once and afterwards only frames the per-request
//! trailer (usage figures depend on the request size).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::{Bytes, BytesMut};
use wire::eventstream;

use super::events::{self, SimEvent};
use super::scenario::{Scenario, ScenarioKind};

/// Most distinct answers kept; later ones are encoded per request.
const CAPACITY: usize = 256;

/// The framed content of one answer.
#[derive(Debug)]
pub(crate) struct CachedContent {
    pub frames: Bytes,
    pub output_chars: usize,
}

impl CachedContent {
    pub fn encode(content: &[SimEvent]) -> Self {
        let mut buf = BytesMut::with_capacity(content.len() * 96);
        for e in content {
            eventstream::encode_event(e.event_type(), &e.payload(), &mut buf);
        }
        CachedContent {
            frames: buf.freeze(),
            output_chars: events::output_chars(content),
        }
    }
}

/// Whether a scenario's content can come from the cache: the same bytes for
/// every request with the same model, and played in one piece.
pub(crate) fn cacheable(s: &Scenario) -> bool {
    matches!(
        s.kind,
        ScenarioKind::Default { .. } | ScenarioKind::Text { .. }
    ) && s.fault.is_none()
        && s.first_delay.is_zero()
        && s.interval.is_zero()
}

/// The cache key of a cacheable scenario for a model.
pub(crate) fn key(s: &Scenario, model_id: &str) -> String {
    match s.kind {
        // Only the default answer names the model.
        ScenarioKind::Default { .. } => format!("{s}\u{0}{model_id}"),
        _ => s.to_string(),
    }
}

#[derive(Debug, Default)]
pub(crate) struct FrameCache {
    entries: Mutex<HashMap<String, Arc<CachedContent>>>,
}

impl FrameCache {
    /// The cached content under `key`, encoding (outside the lock) on a miss.
    pub fn get_or_encode(
        &self,
        key: String,
        encode: impl FnOnce() -> CachedContent,
    ) -> Arc<CachedContent> {
        if let Some(hit) = self.lock().get(&key) {
            return hit.clone();
        }
        let fresh = Arc::new(encode());
        let mut entries = self.lock();
        if entries.len() < CAPACITY {
            entries.insert(key, fresh.clone());
        }
        fresh
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<CachedContent>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn encodes_once_per_key() {
        let cache = FrameCache::default();
        let calls = Cell::new(0);
        let make = || {
            calls.set(calls.get() + 1);
            CachedContent::encode(&[SimEvent::Text("hello".into())])
        };
        let a = cache.get_or_encode("k".into(), make);
        let b = cache.get_or_encode("k".into(), make);
        assert_eq!(calls.get(), 1);
        assert_eq!(a.frames, b.frames);
        assert_eq!(a.output_chars, 5);
        let mut expected = BytesMut::new();
        eventstream::encode_event(
            "assistantResponseEvent",
            br#"{"content":"hello"}"#,
            &mut expected,
        );
        assert_eq!(a.frames, expected.freeze());
    }

    #[test]
    fn which_scenarios_are_cached_and_keyed() {
        let text = Scenario::text(10, 5);
        assert!(cacheable(&text));
        assert!(cacheable(&Scenario::default_answer()));
        assert!(!cacheable(&Scenario::echo()));
        assert!(!cacheable(&Scenario::tools(1, 2)));
        assert!(!cacheable(&"text interval=5".parse().unwrap()));
        assert!(!cacheable(&"text corrupt_at=1".parse().unwrap()));
        assert_eq!(key(&text, "auto"), key(&text, "claude-sonnet-4"));
        let d = Scenario::default_answer();
        assert_ne!(key(&d, "auto"), key(&d, "claude-sonnet-4"));
    }
}
