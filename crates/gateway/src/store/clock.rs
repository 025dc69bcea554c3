//! Time as the store keeps it: Unix seconds (UTC) in a `BIGINT`, the same
//! comparisons on both backends; RFC 3339 at the API edge.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

/// Seconds since the Unix epoch, now. Read from `SystemTime` directly:
/// `OffsetDateTime::now_utc()` works out the calendar date and time of day
/// only for `unix_timestamp` to undo it (about 500 instructions a call, and
/// every request makes two).
pub fn now() -> i64 {
    match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        Ok(since) => secs(since),
        // A clock set before 1970.
        Err(before) => -secs(before.duration()),
    }
}

/// `secs` as RFC 3339 in UTC (`2025-01-31T12:00:00Z`).
pub fn rfc3339(secs: i64) -> String {
    OffsetDateTime::from_unix_timestamp(secs)
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| "1970-01-01T00:00:00Z".to_owned())
}

/// A duration in whole seconds as the store's `i64`, saturating.
pub fn secs(d: std::time::Duration) -> i64 {
    i64::try_from(d.as_secs()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(1_700_000_000), "2023-11-14T22:13:20Z");
        assert_eq!(secs(std::time::Duration::from_millis(1500)), 1);
        assert!(now() > 1_700_000_000);
    }

    #[test]
    fn now_agrees_with_the_calendar_clock() {
        let calendar = OffsetDateTime::now_utc().unix_timestamp();
        assert!((now() - calendar).abs() <= 1);
    }
}
