//! A fault-injecting HTTP/1.1 proxy between the gateway and a simulated
//! upstream (issue 19, "fault injection").
//!
//! The gateway talks to the proxy over plain TCP; the proxy reads each
//! request, forwards it to the simulator with an HTTP client (so the answer
//! arrives decoded, whatever its framing), and writes the answer back to the
//! gateway itself, chunk-encoded, applying the fault queued for that
//! connection. Working at the socket on the gateway's side is what lets a
//! fault reset the connection (RST, not a clean close), cut it inside a
//! chunk, or stall it.
//!
//! Faults that need the answer's structure count in **units**: event-stream
//! frames for `primary` (the 4-byte length that opens each frame) and SSE
//! events for the vendors (blocks ending in a blank line). Every connection
//! takes the next queued fault ([`FaultProxy::push`]); with none queued it
//! passes the answer through unchanged.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

/// What the proxy does to one answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// The answer as it is.
    Pass,
    /// Reset the connection after reading the request: no answer at all.
    ResetBeforeAnswer,
    /// Send the status line and headers, then reset.
    ResetAfterHeaders,
    /// Send `units` whole units, then reset; `mid`: also half of the next
    /// one (a cut inside a frame or an event).
    CutAfter { units: usize, mid: bool },
    /// Send `units` whole units, then keep the connection open silently.
    StallAfter { units: usize },
    /// Send the answer one byte per write.
    Drip,
    /// Send the whole answer in one write, once it is all read (every event
    /// of a stream reaches the gateway at once).
    OneWrite,
    /// Flip a byte of the payload of event-stream frame `unit` (its message
    /// CRC no longer matches).
    CorruptCrc { unit: usize },
    /// Replace frame `unit` by a prelude announcing a 64 MiB frame (with a
    /// valid prelude CRC), then reset.
    OversizedFrame { unit: usize },
    /// Put bytes that are not UTF-8 into the data of SSE event `unit`.
    InvalidUtf8 { unit: usize },
    /// Answer with this `Content-Type` instead of the upstream's.
    ContentType(&'static str),
    /// Answer 200 with a JSON error body instead of the upstream's answer.
    ErrorBody200,
    /// Answer this status without asking the upstream (`retry-after`
    /// seconds when given): a 5xx storm, a 429.
    Status { code: u16, retry_after: Option<u32> },
}

/// The proxy; dropped, it stops accepting.
pub struct FaultProxy {
    pub addr: SocketAddr,
    queue: Arc<Mutex<VecDeque<Fault>>>,
    seen: Arc<Mutex<Vec<Fault>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FaultProxy {
    /// A proxy in front of `target` (a base URL such as `http://127.0.0.1:9100`).
    pub async fn start(target: &str) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let queue: Arc<Mutex<VecDeque<Fault>>> = Arc::default();
        let seen: Arc<Mutex<Vec<Fault>>> = Arc::default();
        let target = target.trim_end_matches('/').to_owned();
        let http = reqwest::Client::builder()
            .no_proxy()
            .timeout(Duration::from_secs(60))
            .build()
            .unwrap();
        let (q, s) = (queue.clone(), seen.clone());
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let (q, s, http, target) = (q.clone(), s.clone(), http.clone(), target.clone());
                tokio::spawn(async move {
                    let _ = serve_connection(socket, &http, &target, &q, &s).await;
                });
            }
        });
        FaultProxy {
            addr,
            queue,
            seen,
            task,
        }
    }

    /// The base URL the gateway is given instead of the upstream's.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Apply `fault` to the next `times` connections (after those queued).
    pub fn push(&self, fault: Fault, times: usize) {
        let mut q = self.queue.lock().unwrap();
        q.extend(std::iter::repeat_n(fault, times));
    }

    /// Forget every queued fault and every applied one.
    pub fn clear(&self) {
        self.queue.lock().unwrap().clear();
        self.seen.lock().unwrap().clear();
    }

    /// The faults applied so far, one per request, in order.
    pub fn applied(&self) -> Vec<Fault> {
        self.seen.lock().unwrap().clone()
    }
}

/// One request read from the gateway.
struct Incoming {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Bytes,
}

async fn serve_connection(
    mut socket: TcpStream,
    http: &reqwest::Client,
    target: &str,
    queue: &Mutex<VecDeque<Fault>>,
    seen: &Mutex<Vec<Fault>>,
) -> std::io::Result<()> {
    socket.set_nodelay(true)?;
    // One request per connection: the answer says `Connection: close`.
    let Some(request) = read_request(&mut socket).await? else {
        return Ok(());
    };
    let fault = queue.lock().unwrap().pop_front().unwrap_or(Fault::Pass);
    seen.lock().unwrap().push(fault.clone());

    match &fault {
        Fault::ResetBeforeAnswer => return reset(socket),
        Fault::Status { code, retry_after } => {
            let body = format!(
                r#"{{"message":"injected {code}","error":{{"message":"injected {code}","type":"injected"}}}}"#
            );
            let mut head =
                format!("HTTP/1.1 {code} Injected\r\ncontent-type: application/json\r\n");
            if let Some(s) = retry_after {
                head.push_str(&format!("retry-after: {s}\r\n"));
            }
            head.push_str(&format!(
                "content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            ));
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
            return socket.shutdown().await;
        }
        _ => {}
    }

    let method =
        reqwest::Method::from_bytes(request.method.as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut upstream = http.request(method, format!("{target}{}", request.path));
    for (name, value) in &request.headers {
        if !is_hop_by_hop(name) && !name.eq_ignore_ascii_case("host") {
            upstream = upstream.header(name, value);
        }
    }
    let mut answer = match upstream.body(request.body).send().await {
        Ok(answer) => answer,
        Err(_) => return reset(socket),
    };

    let status = answer.status();
    let mut content_type = answer
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_owned();
    let framing = if content_type.contains("eventstream") {
        Framing::EventStream
    } else if content_type.starts_with("text/event-stream") {
        Framing::Sse
    } else {
        Framing::Whole
    };
    let event_stream = framing == Framing::EventStream;
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    );
    if let Fault::ContentType(ct) = &fault {
        content_type = (*ct).to_owned();
    }
    for (name, value) in answer.headers() {
        let name = name.as_str();
        if is_hop_by_hop(name) || name == "content-length" || name == "content-type" {
            continue;
        }
        if let Ok(v) = value.to_str() {
            head.push_str(&format!("{name}: {v}\r\n"));
        }
    }
    if fault == Fault::ErrorBody200 {
        let body = r#"{"message":"Improperly formed request.","error":{"message":"injected error in a 200 answer","type":"api_error"}}"#;
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        );
        socket.write_all(head.as_bytes()).await?;
        socket.write_all(body.as_bytes()).await?;
        return socket.shutdown().await;
    }
    head.push_str(&format!(
        "content-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
    ));
    socket.write_all(head.as_bytes()).await?;
    if fault == Fault::ResetAfterHeaders {
        return reset(socket);
    }

    // Units of the answer as they arrive (under `OneWrite`, gathered here).
    let mut gathered = (fault == Fault::OneWrite).then(BytesMut::new);
    let mut units = Units::new(framing);
    let mut sent_units = 0usize;
    loop {
        let chunk = match answer.chunk().await {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(_) => return reset(socket),
        };
        units.feed(&chunk);
        while let Some(unit) = units.next() {
            match apply(&fault, sent_units, unit, event_stream) {
                Action::Send(bytes) if gathered.is_some() => {
                    if let Some(all) = gathered.as_mut() {
                        all.extend_from_slice(&bytes);
                    }
                }
                Action::Send(bytes) => write_chunk(&mut socket, &bytes, &fault).await?,
                Action::SendThenReset(bytes) => {
                    write_chunk(&mut socket, &bytes, &fault).await?;
                    return reset(socket);
                }
                Action::Stall => {
                    tokio::time::sleep(Duration::from_secs(3600)).await;
                    return Ok(());
                }
            }
            sent_units += 1;
        }
    }
    // Whatever did not make a whole unit (a last SSE event without its
    // blank line; a whole JSON body, one unit of its own) goes now.
    let mut rest = units.rest();
    if let Some(mut all) = gathered {
        all.extend_from_slice(&rest);
        rest = all.freeze();
    }
    if !rest.is_empty() {
        match apply(&fault, sent_units, rest, event_stream) {
            Action::Send(bytes) => write_chunk(&mut socket, &bytes, &fault).await?,
            Action::SendThenReset(bytes) => {
                write_chunk(&mut socket, &bytes, &fault).await?;
                return reset(socket);
            }
            Action::Stall => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return Ok(());
            }
        }
    }
    if let Fault::CutAfter { .. } | Fault::StallAfter { .. } = fault {
        // The answer had fewer units than the fault wanted: cut at the end.
        return reset(socket);
    }
    socket.write_all(b"0\r\n\r\n").await?;
    socket.shutdown().await
}

/// What to do with unit number `index`.
enum Action {
    Send(Bytes),
    SendThenReset(Bytes),
    Stall,
}

fn apply(fault: &Fault, index: usize, unit: Bytes, event_stream: bool) -> Action {
    match fault {
        Fault::CutAfter { units, mid } if index == *units => {
            if *mid {
                Action::SendThenReset(unit.slice(..unit.len() / 2))
            } else {
                Action::SendThenReset(Bytes::new())
            }
        }
        Fault::StallAfter { units } if index == *units => Action::Stall,
        Fault::CorruptCrc { unit: at } if index == *at && event_stream => {
            let mut bytes = BytesMut::from(&unit[..]);
            // The byte before the trailing message CRC: inside the payload.
            let i = bytes.len().saturating_sub(5);
            bytes[i] ^= 0x55;
            Action::Send(bytes.freeze())
        }
        Fault::OversizedFrame { unit: at } if index == *at && event_stream => {
            let total: u32 = 64 * 1024 * 1024;
            let headers: u32 = 0;
            let mut prelude = Vec::with_capacity(12);
            prelude.extend_from_slice(&total.to_be_bytes());
            prelude.extend_from_slice(&headers.to_be_bytes());
            let crc = crc32(&prelude);
            prelude.extend_from_slice(&crc.to_be_bytes());
            Action::SendThenReset(Bytes::from(prelude))
        }
        Fault::InvalidUtf8 { unit: at } if index == *at && !event_stream => {
            // `data: ` + invalid bytes, inside the first data line.
            let text = unit.to_vec();
            match text.windows(6).position(|w| w == b"data: ") {
                Some(i) => {
                    let mut out = text[..i + 6].to_vec();
                    out.extend_from_slice(&[0xff, 0xfe, 0xc3]);
                    out.extend_from_slice(&text[i + 6..]);
                    Action::Send(Bytes::from(out))
                }
                None => Action::Send(unit),
            }
        }
        _ => Action::Send(unit),
    }
}

/// Write `bytes` as one chunk, or byte by byte under [`Fault::Drip`].
async fn write_chunk(socket: &mut TcpStream, bytes: &[u8], fault: &Fault) -> std::io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    if *fault == Fault::Drip {
        for b in bytes {
            socket.write_all(b"1\r\n").await?;
            socket.write_all(&[*b]).await?;
            socket.write_all(b"\r\n").await?;
            socket.flush().await?;
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        return Ok(());
    }
    socket
        .write_all(format!("{:x}\r\n", bytes.len()).as_bytes())
        .await?;
    socket.write_all(bytes).await?;
    socket.write_all(b"\r\n").await?;
    socket.flush().await
}

/// Close with RST (linger 0): the peer sees a reset, not a clean end.
#[expect(
    deprecated,
    reason = "a zero linger resets at once; the blocking-on-drop the deprecation warns of needs a non-zero one"
)]
fn reset(socket: TcpStream) -> std::io::Result<()> {
    socket.set_linger(Some(Duration::ZERO))?;
    drop(socket);
    Ok(())
}

fn is_hop_by_hop(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "connection"
            | "keep-alive"
            | "transfer-encoding"
            | "te"
            | "trailer"
            | "upgrade"
            | "proxy-connection"
    )
}

/// Read one request (head and a `content-length` body); `None` when the
/// gateway closed the connection without sending one.
async fn read_request(socket: &mut TcpStream) -> std::io::Result<Option<Incoming>> {
    let mut buf = BytesMut::with_capacity(8192);
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if socket.read_buf(&mut buf).await? == 0 {
            return Ok(None);
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or("").split_whitespace();
    let method = first.next().unwrap_or("GET").to_owned();
    let path = first.next().unwrap_or("/").to_owned();
    let mut headers = Vec::new();
    let mut length = 0usize;
    for line in lines.filter(|l| !l.is_empty()) {
        if let Some((name, value)) = line.split_once(':') {
            let (name, value) = (name.trim().to_owned(), value.trim().to_owned());
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse().unwrap_or(0);
            }
            headers.push((name, value));
        }
    }
    while buf.len() < head_end + length {
        if socket.read_buf(&mut buf).await? == 0 {
            break;
        }
    }
    let body = buf.split_off(head_end).freeze();
    Ok(Some(Incoming {
        method,
        path,
        headers,
        body: body.slice(..length.min(body.len())),
    }))
}

/// How an answer is cut into units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// AWS event-stream frames, by their length prelude.
    EventStream,
    /// SSE events, by their blank line.
    Sse,
    /// Anything else (a JSON answer): the whole body is one unit.
    Whole,
}

/// Cuts an answer into units.
struct Units {
    buf: BytesMut,
    framing: Framing,
}

impl Units {
    fn new(framing: Framing) -> Self {
        Units {
            buf: BytesMut::new(),
            framing,
        }
    }

    fn feed(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
    }

    fn next(&mut self) -> Option<Bytes> {
        if self.framing == Framing::Whole {
            return None;
        }
        let end = if self.framing == Framing::EventStream {
            if self.buf.len() < 4 {
                return None;
            }
            let total =
                u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
            (self.buf.len() >= total && total >= 16).then_some(total)?
        } else {
            let lf = self
                .buf
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| i + 2);
            let crlf = self
                .buf
                .windows(4)
                .position(|w| w == b"\r\n\r\n")
                .map(|i| i + 4);
            match (lf, crlf) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b)?,
            }
        };
        Some(self.buf.split_to(end).freeze())
    }

    fn rest(&mut self) -> Bytes {
        self.buf.split().freeze()
    }
}

/// CRC-32 (IEEE), as the event-stream prelude uses.
fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= u32::from(b);
        for _ in 0..8 {
            let mask = (crc & 1).wrapping_neg();
            crc = (crc >> 1) ^ (0xEDB8_8320 & mask);
        }
    }
    !crc
}
