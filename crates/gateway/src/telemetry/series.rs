//! The series whose labels come with each request (provider, model, status):
//! `gateway_requests_total`, `gateway_tokens_total` and the two histograms.
//!
//! Each thread keeps the handles it has used, by provider and model, so the
//! usual request finds them with one hash lookup and records with atomic
//! adds. A label set a thread has not seen yet is registered once (the
//! registry's lock and the label strings are paid then).

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use metrics::{Counter, Label};

use super::histogram::{Histogram, DURATION_BOUNDS, FIRST_TOKEN_BOUNDS};
use super::meters::{meters, HistogramFamily};
use super::{provider_index, Endpoint, PROVIDERS};

/// Distinct models a process labels; the next ones are labelled `other`.
pub(crate) const MAX_MODELS: usize = 500;
/// The `model` label of a request that reached no provider.
const NO_MODEL: &str = "none";
/// The `model` label past [`MAX_MODELS`].
const OTHER_MODEL: &str = "other";

/// A `/v1` request as `gateway_requests_total` counts it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestDone<'a> {
    pub(crate) endpoint: Endpoint,
    /// The client format: the messages format (`anthropic`) or not (`openai`).
    pub(crate) anthropic: bool,
    pub(crate) provider: Option<&'a str>,
    pub(crate) model: Option<&'a str>,
    pub(crate) status: u16,
    /// The request's duration, when the answer ended with its head (a
    /// chat call's is recorded with its answer, [`AnswerDone`]).
    pub(crate) duration_secs: Option<f64>,
}

/// A chat call's answer, when it has ended (its stream too).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AnswerDone<'a> {
    pub(crate) endpoint: Endpoint,
    pub(crate) provider: Option<&'a str>,
    pub(crate) model: Option<&'a str>,
    pub(crate) duration_secs: f64,
    pub(crate) first_token_secs: Option<f64>,
    /// Input, output, cache-read and cache-write tokens.
    pub(crate) tokens: [u64; 4],
}

/// The handles of one provider and model, as one thread has used them.
#[derive(Default)]
struct ModelSeries {
    /// The model's label (itself, or `other` past the bound).
    label: Arc<str>,
    /// `gateway_requests_total` by endpoint, format and status.
    requests: Vec<(Endpoint, bool, u16, Counter)>,
    duration: [Option<Arc<Histogram>>; Endpoint::COUNT],
    first_token: Option<Arc<Histogram>>,
    tokens: Option<[Counter; 4]>,
}

thread_local! {
    static SERIES: RefCell<[HashMap<Box<str>, ModelSeries>; PROVIDERS.len()]> =
        RefCell::new(Default::default());
}

/// A provider (index of [`PROVIDERS`]) and a model name.
type ModelKey = (usize, Box<str>);

/// The models labelled so far in this process (any thread).
static LABELLED: Mutex<Option<HashSet<ModelKey>>> = Mutex::new(None);

/// The label of `model` under `provider`: itself while fewer than
/// [`MAX_MODELS`] are labelled, else `other`.
fn model_label(provider: usize, model: &str) -> Arc<str> {
    let mut labelled = LABELLED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let set = labelled.get_or_insert_with(HashSet::new);
    let key = (provider, Box::<str>::from(model));
    if set.contains(&key) || set.len() < MAX_MODELS {
        set.insert(key);
        Arc::from(model)
    } else {
        Arc::from(OTHER_MODEL)
    }
}

/// Run `f` on the series of `provider` and `model` of this thread.
fn with_series<R>(
    provider: Option<&str>,
    model: Option<&str>,
    f: impl FnOnce(usize, &mut ModelSeries) -> R,
) -> R {
    let p = provider.map_or(PROVIDERS.len() - 1, provider_index);
    let model = if PROVIDERS[p] == "none" {
        NO_MODEL
    } else {
        model.unwrap_or(NO_MODEL)
    };
    SERIES.with(|series| {
        let mut series = series.borrow_mut();
        let map = &mut series[p];
        if let Some(s) = map.get_mut(model) {
            return f(p, s);
        }
        let label = model_label(p, model);
        // Past the bound a model is kept under `other`, not its own name: a
        // flood of made-up model names must not grow every thread's map.
        let key = if &*label == OTHER_MODEL {
            OTHER_MODEL
        } else {
            model
        };
        let s = map.entry(Box::from(key)).or_insert_with(|| ModelSeries {
            label,
            ..ModelSeries::default()
        });
        f(p, s)
    })
}

fn format_label(anthropic: bool) -> &'static str {
    if anthropic {
        "anthropic"
    } else {
        "openai"
    }
}

/// Count a `/v1` request (and its duration when it is known now).
pub(crate) fn record_request(done: &RequestDone<'_>) {
    with_series(done.provider, done.model, |p, s| {
        let found = s.requests.iter().find(|(e, a, st, _)| {
            *e == done.endpoint && *a == done.anthropic && *st == done.status
        });
        match found {
            Some((_, _, _, counter)) => counter.increment(1),
            None => {
                let counter = meters().counter(
                    "gateway_requests_total",
                    vec![
                        Label::from_static_parts("endpoint", done.endpoint.label()),
                        Label::from_static_parts("format", format_label(done.anthropic)),
                        Label::from_static_parts("provider", PROVIDERS[p]),
                        Label::new("model", s.label.to_string()),
                        Label::new("status", done.status.to_string()),
                    ],
                );
                counter.increment(1);
                s.requests
                    .push((done.endpoint, done.anthropic, done.status, counter));
            }
        }
        if let Some(secs) = done.duration_secs {
            duration(p, s, done.endpoint).record(secs);
        }
    });
}

/// Record a chat call's answer: its duration, time to first token, tokens.
pub(crate) fn record_answer(done: &AnswerDone<'_>) {
    with_series(done.provider, done.model, |p, s| {
        duration(p, s, done.endpoint).record(done.duration_secs);
        if let Some(secs) = done.first_token_secs {
            let label = &s.label;
            s.first_token
                .get_or_insert_with(|| {
                    meters().histogram(
                        HistogramFamily::FirstToken,
                        format!("provider=\"{}\",model=\"{}\"", PROVIDERS[p], escape(label)),
                        FIRST_TOKEN_BOUNDS,
                    )
                })
                .record(secs);
        }
        if done.tokens.iter().any(|&n| n > 0) {
            let label = &s.label;
            let counters = s.tokens.get_or_insert_with(|| {
                ["input", "output", "cache_read", "cache_write"].map(|kind| {
                    meters().counter(
                        "gateway_tokens_total",
                        vec![
                            Label::from_static_parts("provider", PROVIDERS[p]),
                            Label::new("model", label.to_string()),
                            Label::from_static_parts("kind", kind),
                        ],
                    )
                })
            });
            for (counter, n) in counters.iter().zip(done.tokens) {
                if n > 0 {
                    counter.increment(n);
                }
            }
        }
    });
}

fn duration(p: usize, s: &mut ModelSeries, endpoint: Endpoint) -> &Arc<Histogram> {
    let label = &s.label;
    s.duration[endpoint.index()].get_or_insert_with(|| {
        meters().histogram(
            HistogramFamily::RequestDuration,
            format!(
                "endpoint=\"{}\",provider=\"{}\",model=\"{}\"",
                endpoint.label(),
                PROVIDERS[p],
                escape(label)
            ),
            DURATION_BOUNDS,
        )
    })
}

/// A label value as the text format writes it (the exporter escapes its
/// own).
fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(escape("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}
