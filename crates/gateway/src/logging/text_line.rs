//! The text log line (`LOG_FORMAT=text` into a file, a pipe or a collector),
//! written straight into the line.
//!
//! The layout is `tracing_subscriber`'s default without colours, byte for
//! byte: `2026-11-28T14:40:01.123456Z  INFO request{request_id=...}: target:
//! message name=value ...`. Its own formatter writes each part through `fmt`
//! and a styling wrapper even when it has no style to apply; the timestamp
//! alone, formatted from the calendar on every line, cost about 2,100
//! instructions of the access line, the wrappers about 1,600. Here the
//! date and time are formatted once a second (per thread) and the rest are
//! plain string writes. At a terminal the stock formatter (with colours)
//! is used instead: its cost does not matter there.

use std::cell::Cell;
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::{Event, Level, Subscriber};
use tracing_log::NormalizeEvent as _;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// The `FormatEvent` of `LOG_FORMAT=text` without colours.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct TextLine;

impl<S, N> FormatEvent<S, N> for TextLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        // A record bridged from the `log` crate names its own target and level.
        let normalized = event.normalized_metadata();
        let meta = normalized.as_ref().unwrap_or_else(|| event.metadata());

        write_timestamp(&mut writer, SystemTime::now())?;
        writer.write_char(' ')?;
        writer.write_str(level_text(*meta.level()))?;
        writer.write_char(' ')?;
        if let Some(scope) = ctx.event_scope() {
            let mut any = false;
            for span in scope.from_root() {
                writer.write_str(span.metadata().name())?;
                any = true;
                let extensions = span.extensions();
                if let Some(fields) = extensions.get::<FormattedFields<N>>() {
                    if !fields.is_empty() {
                        writer.write_char('{')?;
                        writer.write_str(fields)?;
                        writer.write_char('}')?;
                    }
                }
                writer.write_char(':')?;
            }
            if any {
                writer.write_char(' ')?;
            }
        }
        writer.write_str(meta.target())?;
        writer.write_str(": ")?;
        ctx.format_fields(writer.by_ref(), event)?;
        writer.write_char('\n')
    }
}

/// The level as the stock formatter pads it (five characters).
fn level_text(level: Level) -> &'static str {
    match level {
        Level::TRACE => "TRACE",
        Level::DEBUG => "DEBUG",
        Level::INFO => " INFO",
        Level::WARN => " WARN",
        Level::ERROR => "ERROR",
    }
}

/// `YYYY-MM-DDTHH:MM:SS`, the part of a timestamp that changes once a second.
type SecondText = [u8; 19];

thread_local! {
    /// The second last formatted on this thread, and its text.
    static LAST_SECOND: Cell<(u64, SecondText)> = const { Cell::new((u64::MAX, [0; 19])) };
}

/// `at` in UTC as `2026-11-28T14:40:01.123456Z`, as `tracing_subscriber`'s
/// `SystemTime` timer writes it (microseconds, `Z`).
fn write_timestamp(out: &mut impl fmt::Write, at: SystemTime) -> fmt::Result {
    let Ok(since_epoch) = at.duration_since(UNIX_EPOCH) else {
        return out.write_str("<unknown time>");
    };
    let second = since_epoch.as_secs();
    let (cached, mut text) = LAST_SECOND.get();
    if cached != second {
        let Some(fresh) = second_text(second) else {
            return out.write_str("<unknown time>");
        };
        text = fresh;
        LAST_SECOND.set((second, text));
    }
    let mut tail = *b".000000Z";
    put_digits(&mut tail[1..7], since_epoch.subsec_micros());
    // Both are ASCII digits and separators, written above.
    out.write_str(std::str::from_utf8(&text).map_err(|_| fmt::Error)?)?;
    out.write_str(std::str::from_utf8(&tail).map_err(|_| fmt::Error)?)
}

/// The date and time of a second since the epoch; `None` past year 9999,
/// which the fixed-width text cannot hold.
fn second_text(second: u64) -> Option<SecondText> {
    let at = time::OffsetDateTime::from_unix_timestamp(i64::try_from(second).ok()?).ok()?;
    let year = u32::try_from(at.year()).ok().filter(|y| *y <= 9999)?;
    let mut text = *b"0000-00-00T00:00:00";
    put_digits(&mut text[0..4], year);
    put_digits(&mut text[5..7], u32::from(u8::from(at.month())));
    put_digits(&mut text[8..10], u32::from(at.day()));
    put_digits(&mut text[11..13], u32::from(at.hour()));
    put_digits(&mut text[14..16], u32::from(at.minute()));
    put_digits(&mut text[17..19], u32::from(at.second()));
    Some(text)
}

/// `value` in decimal, right-aligned and zero-padded to the width of `out`
/// (higher digits that do not fit are dropped; callers pass values that fit).
fn put_digits(out: &mut [u8], mut value: u32) {
    for digit in out.iter_mut().rev() {
        *digit = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

#[cfg(test)]
#[path = "text_line_tests.rs"]
mod tests;
