//! The process's metrics registry: the exporter's recorder, the handles of
//! every series whose labels are known in advance, the histograms, and the
//! text format of a scrape.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock};

use metrics::{Counter, Gauge, Key, Label, Level, Metadata, Recorder as _};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle, PrometheusRecorder};

use super::histogram::Histogram;
use super::{CacheName, UpstreamFailure, PROVIDERS};

const METADATA: Metadata<'static> = Metadata::new("gateway", Level::INFO, None);

/// The histogram families (rendered by [`Meters::render`], not the exporter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum HistogramFamily {
    RequestDuration,
    FirstToken,
}

impl HistogramFamily {
    fn name(self) -> &'static str {
        match self {
            HistogramFamily::RequestDuration => "gateway_request_duration_seconds",
            HistogramFamily::FirstToken => "gateway_time_to_first_token_seconds",
        }
    }

    fn help(self) -> &'static str {
        match self {
            HistogramFamily::RequestDuration => {
                "Time from a /v1 request's arrival to the end of its answer (a stream's last byte)."
            }
            HistogramFamily::FirstToken => {
                "Time from a streamed /v1 request's arrival to the first bytes of its answer."
            }
        }
    }
}

/// Guardrail stages and outcomes of `gateway_guardrail_verdicts_total`.
pub(crate) const GUARDRAIL_STAGES: [&str; 2] = ["input", "output"];
pub(crate) const GUARDRAIL_ACTIONS: [&str; 3] = ["pass", "blocked", "redacted"];

/// The registry. See the module doc of `telemetry`.
pub(crate) struct Meters {
    recorder: PrometheusRecorder,
    handle: PrometheusHandle,
    upstream_errors: [[Counter; UpstreamFailure::ALL.len()]; PROVIDERS.len()],
    retries: [Counter; PROVIDERS.len()],
    truncation_recoveries: [Counter; PROVIDERS.len()],
    guardrail_verdicts: [[Counter; GUARDRAIL_ACTIONS.len()]; GUARDRAIL_STAGES.len()],
    guardrail_fail_open: Counter,
    /// `kind` `rate`, then `budget`.
    rate_limited: [Counter; 2],
    /// `result` `hit`, then `miss`, per [`CacheName`].
    cache: [[Counter; 2]; CacheName::ALL.len()],
    pub(crate) open_streams: Gauge,
    usage_queue_depth: Gauge,
    runtime_tasks: Gauge,
    usage_dropped: Counter,
    /// The histograms by family and rendered labels; locked only when a
    /// thread meets a new label set and at a scrape.
    histograms: Mutex<HashMap<(HistogramFamily, String), Arc<Histogram>>>,
}

impl std::fmt::Debug for Meters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meters").finish_non_exhaustive()
    }
}

/// The process's registry, made on first use.
pub(crate) fn meters() -> &'static Meters {
    static METERS: OnceLock<Meters> = OnceLock::new();
    METERS.get_or_init(Meters::new)
}

/// What a scrape reads from the gateway's own counters.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ScrapeValues {
    pub(crate) usage_queue_depth: u64,
    /// Tasks alive in the async runtime (a leak of tasks shows here).
    pub(crate) runtime_tasks: u64,
    pub(crate) usage_dropped: u64,
    pub(crate) guardrail_fail_opens: u64,
}

impl Meters {
    fn new() -> Self {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        describe(&recorder);
        let counter = |name: &'static str, labels: Vec<Label>| {
            recorder.register_counter(&Key::from_parts(name, labels), &METADATA)
        };
        let by_provider = |name: &'static str| {
            PROVIDERS.map(|p| counter(name, vec![Label::from_static_parts("provider", p)]))
        };
        Meters {
            upstream_errors: PROVIDERS.map(|p| {
                UpstreamFailure::ALL.map(|kind| {
                    counter(
                        "gateway_upstream_errors_total",
                        vec![
                            Label::from_static_parts("provider", p),
                            Label::from_static_parts("kind", kind.label()),
                        ],
                    )
                })
            }),
            retries: by_provider("gateway_upstream_retries_total"),
            truncation_recoveries: by_provider("gateway_truncation_recoveries_total"),
            guardrail_verdicts: GUARDRAIL_STAGES.map(|stage| {
                GUARDRAIL_ACTIONS.map(|action| {
                    counter(
                        "gateway_guardrail_verdicts_total",
                        vec![
                            Label::from_static_parts("stage", stage),
                            Label::from_static_parts("action", action),
                        ],
                    )
                })
            }),
            guardrail_fail_open: counter("gateway_guardrail_fail_open_total", vec![]),
            rate_limited: ["rate", "budget"].map(|kind| {
                counter(
                    "gateway_rate_limited_total",
                    vec![Label::from_static_parts("kind", kind)],
                )
            }),
            cache: CacheName::ALL.map(|cache| {
                ["hit", "miss"].map(|result| {
                    counter(
                        "gateway_cache_requests_total",
                        vec![
                            Label::from_static_parts("cache", cache.label()),
                            Label::from_static_parts("result", result),
                        ],
                    )
                })
            }),
            open_streams: recorder
                .register_gauge(&Key::from_static_name("gateway_open_streams"), &METADATA),
            usage_queue_depth: recorder.register_gauge(
                &Key::from_static_name("gateway_usage_queue_depth"),
                &METADATA,
            ),
            runtime_tasks: recorder
                .register_gauge(&Key::from_static_name("gateway_runtime_tasks"), &METADATA),
            usage_dropped: counter("gateway_usage_dropped_total", vec![]),
            histograms: Mutex::new(HashMap::new()),
            recorder,
            handle,
        }
    }

    /// `gateway_build_info{version, mode} 1`, set once at start.
    pub(crate) fn set_build_info(&self, version: &'static str, mode: &'static str) {
        self.recorder
            .register_gauge(
                &Key::from_parts(
                    "gateway_build_info",
                    vec![
                        Label::from_static_parts("version", version),
                        Label::from_static_parts("mode", mode),
                    ],
                ),
                &METADATA,
            )
            .set(1.0);
    }

    /// A counter of the exporter's registry (the per-request series).
    pub(crate) fn counter(&self, name: &'static str, labels: Vec<Label>) -> Counter {
        self.recorder
            .register_counter(&Key::from_parts(name, labels), &METADATA)
    }

    /// The histogram of `family` with `labels` (rendered), made on first use.
    pub(crate) fn histogram(
        &self,
        family: HistogramFamily,
        labels: String,
        bounds: &'static [f64],
    ) -> Arc<Histogram> {
        let mut all = self
            .histograms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.entry((family, labels))
            .or_insert_with(|| Arc::new(Histogram::new(bounds)))
            .clone()
    }

    /// One failed upstream attempt of `provider` (an index of [`PROVIDERS`]).
    pub(crate) fn upstream_error(&self, provider: usize, kind: UpstreamFailure) {
        self.upstream_errors[provider.min(PROVIDERS.len() - 1)][kind as usize].increment(1);
    }

    /// One retry of an upstream call of `provider`.
    pub(crate) fn upstream_retry(&self, provider: usize) {
        self.retries[provider.min(PROVIDERS.len() - 1)].increment(1);
    }

    /// One truncation recovery of `provider`.
    pub(crate) fn truncation_recovery(&self, provider: usize) {
        self.truncation_recoveries[provider.min(PROVIDERS.len() - 1)].increment(1);
    }

    /// One guardrail stage checked: `stage` and `action` index
    /// [`GUARDRAIL_STAGES`] and [`GUARDRAIL_ACTIONS`].
    pub(crate) fn guardrail_verdict(&self, stage: usize, action: usize) {
        self.guardrail_verdicts[stage.min(1)][action.min(2)].increment(1);
    }

    /// A request refused by a rate limit (`budget` false) or a budget.
    pub(crate) fn rate_limited(&self, budget: bool) {
        self.rate_limited[usize::from(budget)].increment(1);
    }

    /// One lookup of `cache`.
    pub(crate) fn cache_lookup(&self, cache: CacheName, hit: bool) {
        self.cache[cache as usize][usize::from(!hit)].increment(1);
    }

    /// The text format (0.0.4) of every series, with `values` read now.
    pub(crate) fn render(&self, values: ScrapeValues) -> String {
        self.usage_queue_depth.set(values.usage_queue_depth as f64);
        self.runtime_tasks.set(values.runtime_tasks as f64);
        self.usage_dropped.absolute(values.usage_dropped);
        self.guardrail_fail_open
            .absolute(values.guardrail_fail_opens);
        self.handle.run_upkeep();
        let mut out = self.handle.render();
        let all = self
            .histograms
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut series: Vec<_> = all.iter().collect();
        series.sort_by(|a, b| a.0.cmp(b.0));
        let mut family = None;
        for ((f, labels), histogram) in series {
            if family != Some(*f) {
                family = Some(*f);
                let _ = writeln!(out, "# HELP {} {}", f.name(), f.help());
                let _ = writeln!(out, "# TYPE {} histogram", f.name());
            }
            histogram.render(f.name(), labels, &mut out);
        }
        out
    }
}

/// The HELP lines of the exporter's families.
fn describe(recorder: &PrometheusRecorder) {
    let counters: [(&'static str, &'static str); 10] = [
        (
            "gateway_requests_total",
            "/v1 requests by endpoint, client format, provider, model and HTTP status.",
        ),
        (
            "gateway_tokens_total",
            "Tokens by provider, model and kind (input, output, cache_read, cache_write).",
        ),
        (
            "gateway_upstream_errors_total",
            "Failed upstream attempts by provider and kind, retried ones included.",
        ),
        (
            "gateway_upstream_retries_total",
            "Upstream attempts repeated after a failure, by provider.",
        ),
        (
            "gateway_truncation_recoveries_total",
            "Truncated answers continued with the recovery instruction, by provider.",
        ),
        (
            "gateway_guardrail_verdicts_total",
            "Guardrail stages checked, by stage and outcome.",
        ),
        (
            "gateway_guardrail_fail_open_total",
            "Guardrail calls that failed and let the text through.",
        ),
        (
            "gateway_rate_limited_total",
            "Requests refused by a key's or user's rate limit or budget.",
        ),
        (
            "gateway_cache_requests_total",
            "Lookups of the API-key, credentials and model caches, by result.",
        ),
        (
            "gateway_usage_dropped_total",
            "Usage records dropped because the writer fell behind.",
        ),
    ];
    for (name, help) in counters {
        recorder.describe_counter(name.into(), None, help.into());
    }
    let gauges: [(&'static str, &'static str); 4] = [
        (
            "gateway_open_streams",
            "Streamed answers being written now.",
        ),
        (
            "gateway_usage_queue_depth",
            "Usage records waiting for the writer.",
        ),
        (
            "gateway_runtime_tasks",
            "Tasks alive in the async runtime (connections, streams, background work).",
        ),
        (
            "gateway_build_info",
            "The running build: always 1, labelled with version and mode.",
        ),
    ];
    for (name, help) in gauges {
        recorder.describe_gauge(name.into(), None, help.into());
    }
}
