//! Reading `GET /metrics` as Prometheus would: one sample per line,
//! `name{label="value",...} number`.

use crate::common::client;

/// The scrape of the gateway at `base` (no token).
pub async fn scrape(base: &str) -> Scrape {
    let resp = client()
        .get(format!("{}/metrics", base.trim_end_matches('/')))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    Scrape(resp.text().await.unwrap())
}

/// One scrape's text.
pub struct Scrape(pub String);

impl Scrape {
    /// The sum of the samples of `name` whose labels include every pair of
    /// `labels` (0 when there is none).
    pub fn value(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.matching(name, labels).sum()
    }

    /// Whether a sample of `name` with these labels exists.
    pub fn has(&self, name: &str, labels: &[(&str, &str)]) -> bool {
        self.matching(name, labels).next().is_some()
    }

    /// The values of the samples of `name` whose labels include `labels`.
    fn matching<'a>(
        &'a self,
        name: &'a str,
        labels: &'a [(&str, &str)],
    ) -> impl Iterator<Item = f64> + 'a {
        self.samples(name)
            .filter(|(l, _)| {
                labels
                    .iter()
                    .all(|(k, v)| l.iter().any(|(lk, lv)| lk == k && lv == v))
            })
            .map(|(_, v)| v)
    }

    fn samples<'a>(
        &'a self,
        name: &'a str,
    ) -> impl Iterator<Item = (Vec<(String, String)>, f64)> + 'a {
        self.0.lines().filter_map(move |line| {
            if line.starts_with('#') {
                return None;
            }
            let (series, value) = line.rsplit_once(' ')?;
            let (n, labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.strip_suffix('}')?),
                None => (series, ""),
            };
            if n != name {
                return None;
            }
            Some((parse_labels(labels), value.parse().ok()?))
        })
    }
}

/// `a="x",b="y"` (values without escapes, as the tests' labels are).
fn parse_labels(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some((key, after)) = rest.split_once("=\"") {
        let Some(end) = after.find('"') else { break };
        out.push((
            key.trim_start_matches(',').to_owned(),
            after[..end].to_owned(),
        ));
        rest = &after[end + 1..];
    }
    out
}

#[test]
fn samples_are_read_with_their_labels() {
    let s = Scrape(
        "# HELP x a counter\nx{a=\"1\",b=\"2\"} 3\nx{a=\"1\",b=\"4\"} 5\ny 7\nx_sum{a=\"1\"} 9\n"
            .into(),
    );
    assert_eq!(s.value("x", &[("a", "1")]), 8.0);
    assert_eq!(s.value("x", &[("b", "4")]), 5.0);
    assert_eq!(s.value("y", &[]), 7.0);
    assert!(!s.has("x", &[("a", "2")]));
}
