//! A Prometheus histogram with fixed buckets whose recording is a few atomic
//! additions: no lock, no allocation, nothing to drain.
//!
//! The exporter's own histogram keeps every sample (with its time) in a
//! lock-free list that allocates a block every 64 samples and grows until a
//! scrape or an upkeep drains it; a request path that must not allocate
//! counts into buckets directly instead, and [`Histogram::render`] writes
//! the family in the text format next to the exporter's output.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// Upper bounds (seconds) of the request-duration buckets.
pub(crate) const DURATION_BOUNDS: &[f64] = &[
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];
/// Upper bounds (seconds) of the time-to-first-token buckets.
pub(crate) const FIRST_TOKEN_BOUNDS: &[f64] = &[
    0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0, 20.0, 30.0, 60.0,
];

/// One labelled series of a histogram family.
#[derive(Debug)]
pub(crate) struct Histogram {
    bounds: &'static [f64],
    /// One counter per bound, and the last for `+Inf` (not cumulative).
    counts: Box<[AtomicU64]>,
    /// The sum of the samples in microseconds: an integer adds atomically
    /// without a compare-and-swap loop, and a microsecond is finer than
    /// anything the gateway measures.
    sum_micros: AtomicU64,
}

impl Histogram {
    pub(crate) fn new(bounds: &'static [f64]) -> Self {
        Histogram {
            bounds,
            counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(),
            sum_micros: AtomicU64::new(0),
        }
    }

    /// Count one sample of `secs` seconds.
    pub(crate) fn record(&self, secs: f64) {
        let bucket = self.bounds.partition_point(|&bound| bound < secs);
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        // `as` saturates: a negative or NaN sample adds nothing.
        self.sum_micros
            .fetch_add((secs * 1e6) as u64, Ordering::Relaxed);
    }

    /// Write the series' `_bucket`, `_sum` and `_count` lines; `labels` is
    /// the rendered label set without braces (`a="x",b="y"`).
    pub(crate) fn render(&self, name: &str, labels: &str, out: &mut String) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0u64;
        for (i, count) in self.counts.iter().enumerate() {
            cumulative += count.load(Ordering::Relaxed);
            let le = match self.bounds.get(i) {
                Some(bound) => bound.to_string(),
                None => "+Inf".to_owned(),
            };
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{le}\"}} {cumulative}"
            );
        }
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let braces = |l: &str| {
            if l.is_empty() {
                String::new()
            } else {
                format!("{{{l}}}")
            }
        };
        let _ = writeln!(out, "{name}_sum{} {sum}", braces(labels));
        let _ = writeln!(out, "{name}_count{} {cumulative}", braces(labels));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_fall_into_the_first_bucket_that_holds_them() {
        let h = Histogram::new(&[0.1, 1.0]);
        h.record(0.05);
        h.record(0.1); // a bound is inclusive (`le`)
        h.record(0.5);
        h.record(7.0);
        let mut out = String::new();
        h.render("t_seconds", "model=\"m\"", &mut out);
        assert_eq!(
            out,
            "t_seconds_bucket{model=\"m\",le=\"0.1\"} 2\n\
             t_seconds_bucket{model=\"m\",le=\"1\"} 3\n\
             t_seconds_bucket{model=\"m\",le=\"+Inf\"} 4\n\
             t_seconds_sum{model=\"m\"} 7.65\n\
             t_seconds_count{model=\"m\"} 4\n"
        );
    }

    #[test]
    fn a_series_without_labels_has_no_braces() {
        let h = Histogram::new(&[1.0]);
        h.record(-3.0);
        let mut out = String::new();
        h.render("t", "", &mut out);
        assert_eq!(
            out,
            "t_bucket{le=\"1\"} 1\nt_bucket{le=\"+Inf\"} 1\nt_sum 0\nt_count 1\n"
        );
    }
}
