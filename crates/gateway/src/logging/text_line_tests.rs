use std::time::Duration;

use time::macros::format_description;

use super::*;
use crate::logging::captured::Captured;
use crate::logging::text_fields::TextFields;

/// What `emit` logs through [`TextLine`] and through the stock formatter
/// without colours and without its time (the same fields writer in both).
fn both(emit: impl Fn()) -> (String, String) {
    let ours = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(ours.clone())
        .with_ansi(false)
        .with_max_level(Level::TRACE)
        .fmt_fields(TextFields)
        .event_format(TextLine)
        .finish();
    tracing::subscriber::with_default(subscriber, &emit);
    let stock = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(stock.clone())
        .with_ansi(false)
        .without_time()
        .with_max_level(Level::TRACE)
        .fmt_fields(TextFields)
        .finish();
    tracing::subscriber::with_default(subscriber, &emit);
    (ours.text(), stock.text())
}

/// Each line of `ours` is a timestamp, a space and the stock line.
fn assert_same_lines_after_the_time(ours: &str, stock: &str) {
    let ours: Vec<&str> = ours.lines().collect();
    let stock: Vec<&str> = stock.lines().collect();
    assert_eq!(ours.len(), stock.len(), "{ours:?} / {stock:?}");
    for (line, want) in ours.iter().zip(&stock) {
        let (time, rest) = line.split_at(27);
        assert!(is_timestamp(time), "{line}");
        assert_eq!(rest.strip_prefix(' '), Some(*want), "{line}");
    }
}

fn is_timestamp(text: &str) -> bool {
    let shape = "dddd-dd-ddTdd:dd:dd.ddddddZ";
    text.len() == shape.len()
        && text.bytes().zip(shape.bytes()).all(|(b, s)| {
            if s == b'd' {
                b.is_ascii_digit()
            } else {
                b == s
            }
        })
}

#[test]
fn lines_match_the_stock_layout_at_every_level_in_and_out_of_spans() {
    let (ours, stock) = both(|| {
        tracing::info!(method = %"POST", status = 200u16, latency_ms = 0.4, "request");
        let outer = tracing::info_span!("request", request_id = %"abc-1");
        let _outer = outer.enter();
        tracing::warn!(upstream = "x\ny", "failed: {}", 3);
        let inner = tracing::debug_span!("empty");
        inner.in_scope(|| {
            tracing::error!(target: "gateway::other", code = 7i64, "inner");
            tracing::debug!("debug");
            tracing::trace!(ok = true, "trace");
        });
    });
    assert_eq!(ours.lines().count(), 5, "{ours}");
    assert!(ours.contains(" INFO gateway::logging::text_line::tests: request method=POST"));
    assert!(ours.contains("ERROR request{request_id=abc-1}:empty: gateway::other: inner code=7"));
    assert_same_lines_after_the_time(&ours, &stock);
}

#[test]
fn a_record_from_the_log_crate_shows_its_own_target_and_level() {
    let (ours, stock) = both(|| {
        let record = log::Record::builder()
            .args(format_args!("handshake done"))
            .level(log::Level::Warn)
            .target("rustls::client")
            .module_path_static(Some("rustls::client"))
            .file_static(Some("client.rs"))
            .line(Some(12))
            .build();
        tracing_log::format_trace(&record).unwrap();
    });
    assert!(
        ours.contains(" WARN rustls::client: handshake done"),
        "{ours}"
    );
    assert_same_lines_after_the_time(&ours, &stock);
}

#[test]
fn timestamps_are_utc_to_the_microsecond_across_seconds_and_days() {
    let reference =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:6]Z");
    // Same second twice (the cached text), the next second, a new day, a
    // leap day, the epoch, the last second of 9999.
    let instants = [
        (1_795_877_326, 123_456_789),
        (1_795_877_326, 999_999_000),
        (1_795_877_327, 1_000),
        (1_795_910_399, 500_000_000),
        (1_795_910_400, 0),
        (951_782_400, 0),
        (0, 0),
        (253_402_300_799, 999_999_999),
    ];
    for (secs, nanos) in instants {
        let at = UNIX_EPOCH + Duration::new(secs, nanos);
        let mut ours = String::new();
        write_timestamp(&mut ours, at).unwrap();
        let want = time::OffsetDateTime::from(at).format(reference).unwrap();
        assert_eq!(ours, want, "{secs}.{nanos}");
    }
}

#[test]
fn a_time_the_text_cannot_hold_is_unknown() {
    let mut out = String::new();
    write_timestamp(&mut out, UNIX_EPOCH + Duration::from_secs(253_402_300_800)).unwrap();
    assert_eq!(out, "<unknown time>");
    assert_eq!(
        second_text(253_402_300_799).map(|t| t.to_vec()),
        Some(b"9999-12-31T23:59:59".to_vec())
    );
}
