//! `GET /_ui/api/admin/logs/stream` (issue 18; admin; interfaces-full.md 6):
//! the gateway's log lines as Server-Sent Events. First the history kept
//! in memory (`replay` lines, default 200, at most the ring's 1,000), then
//! every new line, each `event: log` with `data: {timestamp, level, target,
//! message, request_id, fields, replayed}`; `level` is the minimum shown
//! (`error`, `warn`, `info`, `debug`; default `info`), `request_id` keeps
//! one request's lines. A `: keep-alive` comment every 15 s keeps proxies
//! from closing an idle stream; a reader that falls behind gets `event:
//! lagged` with `data: {"dropped": N}` and goes on (logging never waits).
//! Lines below the process's `LOG_LEVEL` are never logged, so not streamed.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Query;
use axum::response::Response;
use bytes::Bytes;
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;

use super::extract::Admin;
use crate::error::GatewayError;
use crate::logging::stream::{hub, rank, LogLine, RING_LINES};
use crate::turn::sse_response;

const KEEP_ALIVE: Duration = Duration::from_secs(15);
const DEFAULT_REPLAY: usize = 200;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StreamQuery {
    level: Option<String>,
    request_id: Option<String>,
    replay: Option<usize>,
}

/// Which lines a reader wants.
struct Wanted {
    max_rank: u8,
    request_id: Option<String>,
}

impl Wanted {
    fn takes(&self, line: &LogLine) -> bool {
        rank(line.level) <= self.max_rank
            && self
                .request_id
                .as_deref()
                .is_none_or(|id| line.request_id.as_deref() == Some(id))
    }
}

/// `GET /_ui/api/admin/logs/stream`.
pub(crate) async fn stream(
    _admin: Admin,
    Query(query): Query<StreamQuery>,
) -> Result<Response, GatewayError> {
    let max_rank = match query.level.as_deref().unwrap_or("info") {
        "error" => 1,
        "warn" => 2,
        "info" => 3,
        "debug" => 4,
        _ => {
            return Err(GatewayError::validation(
                "level: error, warn, info or debug",
            ))
        }
    };
    let request_id = query
        .request_id
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty());
    if request_id.as_ref().is_some_and(|id| id.len() > 128) {
        return Err(GatewayError::validation(
            "request_id: at most 128 characters",
        ));
    }
    let replay = query.replay.unwrap_or(DEFAULT_REPLAY).min(RING_LINES);
    let wanted = Wanted {
        max_rank,
        request_id,
    };
    let (ring, mut live) = hub().subscribe();
    let seen = ring.last().map_or(0, |l| l.seq);
    let mut history: Vec<Arc<LogLine>> = ring.into_iter().filter(|l| wanted.takes(l)).collect();
    history.drain(..history.len().saturating_sub(replay));

    let body = async_stream::stream! {
        for line in &history {
            yield Ok::<_, Infallible>(log_event(line, true));
        }
        drop(history);
        let mut keep_alive = tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE);
        loop {
            tokio::select! {
                received = live.recv() => match received {
                    Ok(line) if line.seq > seen && wanted.takes(&line) => yield Ok(log_event(&line, false)),
                    Ok(_) => {}
                    Err(RecvError::Lagged(dropped)) => {
                        yield Ok(Bytes::from(format!("event: lagged\ndata: {{\"dropped\":{dropped}}}\n\n")));
                    }
                    Err(RecvError::Closed) => break,
                },
                _ = keep_alive.tick() => yield Ok(Bytes::from_static(b": keep-alive\n\n")),
            }
        }
    };
    Ok(sse_response(Body::from_stream(body)))
}

/// One `event: log`.
fn log_event(line: &LogLine, replayed: bool) -> Bytes {
    let mut out: Vec<u8> = Vec::with_capacity(160 + line.message.len() + line.fields_json.len());
    out.extend_from_slice(b"event: log\ndata: {\"timestamp\":");
    let at = time::OffsetDateTime::from(line.at);
    let stamp = at
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    wire::json::write_str(&mut out, &stamp);
    out.extend_from_slice(b",\"level\":");
    wire::json::write_str(&mut out, &line.level.as_str().to_ascii_lowercase());
    out.extend_from_slice(b",\"target\":");
    wire::json::write_str(&mut out, line.target);
    out.extend_from_slice(b",\"message\":");
    wire::json::write_str(&mut out, &line.message);
    out.extend_from_slice(b",\"request_id\":");
    match &line.request_id {
        Some(id) => wire::json::write_str(&mut out, id),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"fields\":");
    out.extend_from_slice(&line.fields_json);
    out.extend_from_slice(if replayed {
        b",\"replayed\":true}\n\n"
    } else {
        b",\"replayed\":false}\n\n"
    });
    Bytes::from(out)
}
