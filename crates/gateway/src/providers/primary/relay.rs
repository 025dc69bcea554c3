//! Driving a `primary` answer, with truncation recovery.
//!
//! The relay hands out the provider's events in order. When the answer turns
//! out truncated (protocol doc section 4; detected by the stream parser) and
//! `truncation_recovery` is on, it asks once more with the partial answer and a
//! recovery notice appended to the conversation (`translate::truncation`), and
//! continues the same client answer with what comes back.
//!
//! Tool calls: while a recovery is still possible, every tool-call event is
//! held until the upstream stream ends. A truncated answer then hands all of
//! them (the cut ones and their complete siblings) to the recovery request,
//! which tells the model that none was executed; so the client must not have
//! seen any of them, or it would run a call the model is about to make again.
//! An answer that ends normally releases them in order before its `Stop`.
//! Once no recovery is possible, calls are released as soon as the upstream
//! closes them.

use std::collections::HashMap;
use std::sync::Arc;

use translate::truncation::{inject_recovery, Truncation};
use translate::{ChatEvent, ChatRequest, Collector, Usage};

use super::credentials::per_user::PrimaryAuth;
use super::models::ResolvedModel;
use super::request::{encode_request, CallOptions};
use super::stream::{self, EventSource, Interruption, Step};
use crate::config::RuntimeConfig;
use crate::telemetry;
use crate::upstream::Upstream;

/// At most this many recovery requests per client request.
const MAX_RECOVERIES: u32 = 1;

pub struct PrimaryRelay {
    /// The request's configuration snapshot and client (a recovery request uses them too).
    rt: Arc<RuntimeConfig>,
    upstream: Upstream,
    /// The caller's token source (a recovery request uses it too).
    auth: PrimaryAuth,
    /// The conversation as the client sent it (recovery appends to a copy).
    request: ChatRequest,
    model: ResolvedModel,
    source: EventSource,
    /// Tool-call events held per (renumbered) index until the call is closed.
    held_tools: HashMap<u32, Vec<ChatEvent>>,
    /// Tool calls released so far; continuations number theirs after these.
    released_tools: u32,
    /// Index offset applied to the current source's tool calls.
    tool_offset: u32,
    /// The answer so far, for the recovery request (only when recovery is on).
    partial: Option<Collector>,
    /// Output tokens of earlier, truncated attempts.
    carried_output: u32,
    recoveries: u32,
    in_continuation: bool,
    finished: bool,
    /// The events of the source's latest read, before they are routed: one
    /// buffer for every read of the answer rather than one grown per read.
    raw: Vec<ChatEvent>,
}

impl PrimaryRelay {
    pub fn new(
        rt: Arc<RuntimeConfig>,
        upstream: Upstream,
        auth: PrimaryAuth,
        request: ChatRequest,
        model: ResolvedModel,
        source: EventSource,
    ) -> Self {
        let recovery = rt.truncation_recovery;
        PrimaryRelay {
            rt,
            upstream,
            auth,
            request,
            model,
            source,
            held_tools: HashMap::new(),
            released_tools: 0,
            tool_offset: 0,
            partial: recovery.then(Collector::new),
            carried_output: 0,
            recoveries: 0,
            in_continuation: false,
            finished: false,
            raw: Vec::new(),
        }
    }

    /// Route the first batch (read by `primary::open`) through the relay.
    pub async fn first_batch(
        &mut self,
        events: Vec<ChatEvent>,
        ended: Option<translate::primary::StreamSummary>,
        out: &mut Vec<ChatEvent>,
    ) {
        match ended {
            None => {
                for ev in events {
                    self.route(ev, out);
                }
            }
            Some(summary) => self.end_of_source(events, summary, out).await,
        }
    }

    /// Append the next events to `out`; `false` once the answer is complete.
    pub async fn next(&mut self, out: &mut Vec<ChatEvent>) -> bool {
        if self.finished {
            return false;
        }
        let mut raw = std::mem::take(&mut self.raw);
        match self.source.fill(&mut raw).await {
            Step::More => {
                for ev in raw.drain(..) {
                    self.route(ev, out);
                }
                self.raw = raw;
            }
            Step::Done(summary) => self.end_of_source(raw, summary, out).await,
        }
        !self.finished
    }

    async fn end_of_source(
        &mut self,
        mut raw: Vec<ChatEvent>,
        summary: translate::primary::StreamSummary,
        out: &mut Vec<ChatEvent>,
    ) {
        // A connection that broke mid-answer (or a body that ended inside a
        // frame) cut the answer short like a missing completion signal: the
        // parser's truncation report stands, and the answer is recovered
        // when it can be. Other failures (a stall, a corrupt frame, the
        // upstream's own exception) end it with their error.
        let cut = self.source.interrupted() == Some(Interruption::Cut);
        let truncation = if cut || summary.error.is_none() {
            summary.truncation
        } else {
            None
        };
        let recover = truncation.is_some() && self.may_recover();
        if recover && cut {
            // The cut's error event gives way to what the parser still held.
            raw.retain(|e| !matches!(e, ChatEvent::Error(_)));
            raw.extend(self.source.take_cut_tail());
            tracing::info!("the upstream connection broke mid-answer; recovering");
        }
        for ev in raw {
            match ev {
                ChatEvent::Stop { .. } if recover => {}
                ChatEvent::Usage(u) if recover => {
                    self.carried_output = self
                        .carried_output
                        .saturating_add(u.output_tokens.unwrap_or(0));
                }
                // Held calls belong before the end of the answer: an encoder
                // writes nothing after its `Stop`.
                ev @ (ChatEvent::Stop { .. } | ChatEvent::Error(_)) if !recover => {
                    self.release_held(out);
                    self.route(ev, out);
                }
                other => self.route(other, out),
            }
        }
        match truncation {
            // Boxed: the recovery makes a whole new upstream call, and its
            // state would otherwise make every relay's future kilobytes
            // larger (and every move of it that much dearer) for a path
            // few answers take.
            Some(truncation) if recover => Box::pin(self.recover(&truncation, out)).await,
            _ => {
                self.release_held(out);
                self.finished = true;
            }
        }
    }

    /// Whether a truncation of the current source could still be recovered.
    fn may_recover(&self) -> bool {
        self.partial.is_some() && self.recoveries < MAX_RECOVERIES
    }

    /// Release every held call, in index order.
    fn release_held(&mut self, out: &mut Vec<ChatEvent>) {
        let mut rest: Vec<u32> = self.held_tools.keys().copied().collect();
        rest.sort_unstable();
        for index in rest {
            self.close_tool(index.saturating_sub(self.tool_offset), out);
        }
    }

    async fn recover(&mut self, truncation: &Truncation, out: &mut Vec<ChatEvent>) {
        self.recoveries += 1;
        // The held calls (cut or complete) never reached the client: the
        // recovery request reports each as not executed.
        let mut held: Vec<(u32, Vec<ChatEvent>)> = self.held_tools.drain().collect();
        held.sort_unstable_by_key(|(index, _)| *index);
        if let Some(partial) = self.partial.as_mut() {
            for (_, events) in held {
                // A private index, as in `replay_part`: each call is pushed whole.
                for ev in events {
                    partial.push(renumber(ev, u32::MAX));
                }
                partial.push(ChatEvent::ToolCallEnd { index: u32::MAX });
            }
        }
        let partial = match self.partial.take().map(Collector::finish) {
            Some(Ok(resp)) => resp,
            _ => {
                self.finished = true;
                return;
            }
        };
        tracing::info!(
            content = truncation.content,
            tools = truncation.tools.len(),
            "truncated upstream answer; asking for the rest"
        );
        telemetry::meters().truncation_recovery(telemetry::provider_index("primary"));
        let mut next = self.request.clone();
        inject_recovery(&mut next, &partial, truncation);
        // Keep collecting so a second truncation could be recovered too.
        let mut collector = Collector::new();
        for part in partial.content {
            replay_part(part, &mut collector);
        }
        self.partial = Some(collector);
        let opts = CallOptions {
            fake_reasoning: None,
            truncation_recovery: true,
        };
        let opened = match encode_request(&self.rt, &self.auth, &next, &self.model, opts) {
            Ok(body) => stream::open(&self.upstream, &self.auth, body, &self.model, false).await,
            Err(e) => Err(e),
        };
        match opened {
            Ok((source, first, ended)) => {
                self.source = source;
                self.tool_offset = self.released_tools;
                self.in_continuation = true;
                Box::pin(self.first_batch(first, ended, out)).await;
            }
            Err(e) => {
                // The partial answer stands; say how it ended.
                tracing::warn!("truncation recovery failed: {e}");
                out.push(ChatEvent::Usage(Usage {
                    output_tokens: Some(self.carried_output),
                    ..Usage::default()
                }));
                out.push(ChatEvent::Stop {
                    reason: translate::StopReason::MaxTokens,
                    stop_sequence: None,
                });
                self.finished = true;
            }
        }
    }

    fn route(&mut self, ev: ChatEvent, out: &mut Vec<ChatEvent>) {
        match ev {
            ChatEvent::Start { .. } if self.in_continuation => {}
            ChatEvent::ToolCallStart { index, id, name } => {
                let index = index + self.tool_offset;
                self.held_tools
                    .entry(index)
                    .or_default()
                    .push(ChatEvent::ToolCallStart { index, id, name });
            }
            ChatEvent::ToolCallDelta { index, arguments } => {
                let index = index + self.tool_offset;
                self.held_tools
                    .entry(index)
                    .or_default()
                    .push(ChatEvent::ToolCallDelta { index, arguments });
            }
            // While a recovery is possible, calls stay held until the source ends.
            ChatEvent::ToolCallEnd { .. } if self.may_recover() => {}
            ChatEvent::ToolCallEnd { index } => self.close_tool(index, out),
            ChatEvent::Usage(mut u) if self.carried_output > 0 => {
                if let Some(o) = u.output_tokens.as_mut() {
                    *o = o.saturating_add(self.carried_output);
                }
                self.emit(ChatEvent::Usage(u), out);
            }
            other => self.emit(other, out),
        }
    }

    /// Release the held events of a call.
    fn close_tool(&mut self, source_index: u32, out: &mut Vec<ChatEvent>) {
        let index = source_index + self.tool_offset;
        let Some(events) = self.held_tools.remove(&index) else {
            return;
        };
        // Number calls densely in release order.
        let new_index = self.released_tools;
        self.released_tools += 1;
        for ev in events {
            self.emit(renumber(ev, new_index), out);
        }
        self.emit(ChatEvent::ToolCallEnd { index: new_index }, out);
    }

    fn emit(&mut self, ev: ChatEvent, out: &mut Vec<ChatEvent>) {
        if let Some(partial) = self.partial.as_mut() {
            partial.push_ref(&ev);
        }
        out.push(ev);
    }
}

fn renumber(ev: ChatEvent, index: u32) -> ChatEvent {
    match ev {
        ChatEvent::ToolCallStart { id, name, .. } => ChatEvent::ToolCallStart { index, id, name },
        ChatEvent::ToolCallDelta { arguments, .. } => ChatEvent::ToolCallDelta { index, arguments },
        ChatEvent::ToolCallEnd { .. } => ChatEvent::ToolCallEnd { index },
        other => other,
    }
}

/// Feed a collected part back into a collector as events.
fn replay_part(part: translate::ContentPart, c: &mut Collector) {
    use translate::ContentPart as P;
    match part {
        P::Text { text, .. } => c.push(ChatEvent::TextDelta(text)),
        P::Thinking {
            thinking,
            signature,
        } => {
            c.push(ChatEvent::ThinkingDelta(thinking));
            if let Some(sig) = signature {
                c.push(ChatEvent::ThinkingSignature(sig));
            }
        }
        P::RedactedThinking { data } => c.push(ChatEvent::RedactedThinking(data)),
        P::ToolUse {
            id,
            name,
            arguments,
        } => {
            // Index space of the replay is private to this collector.
            let index = u32::MAX;
            c.push(ChatEvent::ToolCallStart { index, id, name });
            c.push(ChatEvent::ToolCallDelta { index, arguments });
            c.push(ChatEvent::ToolCallEnd { index });
        }
        P::Image(_) | P::ToolResult { .. } => {}
    }
}
