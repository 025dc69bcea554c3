// The playground's protocol side, apart from React: building a /v1 request
// in either client format, folding its streamed events (or its one JSON
// answer) into what the page shows, and the request as a curl command.

import type { SseEvent } from '../../lib/sse';

export type ClientFormat = 'openai' | 'anthropic';

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface ChatParams {
  model: string;
  system: string;
  messages: ChatMessage[];
  temperature: number | null;
  maxTokens: number;
  stream: boolean;
}

export interface Usage {
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens?: number | null;
  cache_write_tokens?: number | null;
}

export interface Reply {
  text: string;
  reasoning: string;
  usage: Usage | null;
  finish: string | null;
  model: string | null;
  error: string | null;
  /** A guardrail changed the text (redacted input or output). */
  warning: string | null;
  /** The stream ended the way its format says a complete answer ends. */
  complete: boolean;
}

export const emptyReply = (): Reply => ({
  text: '',
  reasoning: '',
  usage: null,
  finish: null,
  model: null,
  error: null,
  warning: null,
  complete: false,
});

export function endpointOf(format: ClientFormat): string {
  return format === 'openai' ? '/v1/chat/completions' : '/v1/messages';
}

/** The JSON body of the request in `format`. */
export function buildBody(format: ClientFormat, p: ChatParams): Record<string, unknown> {
  if (format === 'openai') {
    const messages: { role: string; content: string }[] = [];
    if (p.system.trim()) messages.push({ role: 'system', content: p.system });
    messages.push(...p.messages);
    const body: Record<string, unknown> = { model: p.model, messages, max_tokens: p.maxTokens };
    if (p.temperature !== null) body.temperature = p.temperature;
    if (p.stream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
    return body;
  }
  const body: Record<string, unknown> = {
    model: p.model,
    max_tokens: p.maxTokens,
    messages: p.messages,
  };
  if (p.system.trim()) body.system = p.system;
  if (p.temperature !== null) body.temperature = p.temperature;
  if (p.stream) body.stream = true;
  return body;
}

function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function errorText(err: unknown): string {
  if (err && typeof err === 'object') {
    const e = err as { message?: unknown; type?: unknown };
    const msg = typeof e.message === 'string' ? e.message : JSON.stringify(err);
    return typeof e.type === 'string' ? `${e.type}: ${msg}` : msg;
  }
  return String(err);
}

function parseData(ev: SseEvent): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(ev.data);
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Fold one chat-completions stream event into the reply. */
export function applyOpenAiEvent(reply: Reply, ev: SseEvent): Reply {
  if (ev.data.trim() === '[DONE]') return { ...reply, complete: reply.error === null };
  const chunk = parseData(ev);
  if (!chunk) return reply;
  const next = { ...reply };
  if (chunk.error) {
    next.error = errorText(chunk.error);
    return next;
  }
  if (typeof chunk.model === 'string') next.model = chunk.model;
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  for (const choice of choices as { delta?: Record<string, unknown>; finish_reason?: unknown }[]) {
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string') next.text += delta.content;
    if (typeof delta.reasoning_content === 'string') next.reasoning += delta.reasoning_content;
    if (typeof choice.finish_reason === 'string') next.finish = choice.finish_reason;
  }
  const usage = chunk.usage as Record<string, unknown> | null | undefined;
  if (usage && typeof usage === 'object') {
    const details = usage.prompt_tokens_details as Record<string, unknown> | undefined;
    next.usage = {
      input_tokens: num(usage.prompt_tokens),
      output_tokens: num(usage.completion_tokens),
      cache_read_tokens: num(details?.cached_tokens),
    };
  }
  return next;
}

/** Fold one messages-format stream event into the reply. */
export function applyAnthropicEvent(reply: Reply, ev: SseEvent): Reply {
  const data = parseData(ev);
  const type = ev.event !== 'message' ? ev.event : typeof data?.type === 'string' ? data.type : '';
  const next = { ...reply };
  switch (type) {
    case 'message_start': {
      const msg = (data?.message ?? {}) as Record<string, unknown>;
      if (typeof msg.model === 'string') next.model = msg.model;
      const u = (msg.usage ?? {}) as Record<string, unknown>;
      next.usage = {
        input_tokens: num(u.input_tokens),
        output_tokens: num(u.output_tokens),
        cache_read_tokens: num(u.cache_read_input_tokens),
        cache_write_tokens: num(u.cache_creation_input_tokens),
      };
      return next;
    }
    case 'content_block_start': {
      const block = (data?.content_block ?? {}) as Record<string, unknown>;
      if (block.type === 'text' && typeof block.text === 'string') next.text += block.text;
      if (block.type === 'thinking' && typeof block.thinking === 'string') next.reasoning += block.thinking;
      return next;
    }
    case 'content_block_delta': {
      const delta = (data?.delta ?? {}) as Record<string, unknown>;
      if (delta.type === 'text_delta' && typeof delta.text === 'string') next.text += delta.text;
      if (delta.type === 'thinking_delta' && typeof delta.thinking === 'string') next.reasoning += delta.thinking;
      return next;
    }
    case 'message_delta': {
      const delta = (data?.delta ?? {}) as Record<string, unknown>;
      if (typeof delta.stop_reason === 'string') next.finish = delta.stop_reason;
      const u = (data?.usage ?? {}) as Record<string, unknown>;
      const prev = next.usage ?? { input_tokens: null, output_tokens: null };
      next.usage = {
        ...prev,
        output_tokens: num(u.output_tokens) ?? prev.output_tokens,
        input_tokens: num(u.input_tokens) ?? prev.input_tokens,
      };
      return next;
    }
    case 'message_stop':
      next.complete = next.error === null;
      return next;
    case 'error':
      next.error = errorText(data?.error ?? data ?? ev.data);
      return next;
    default:
      return reply;
  }
}

export function applyEvent(format: ClientFormat, reply: Reply, ev: SseEvent): Reply {
  return format === 'openai' ? applyOpenAiEvent(reply, ev) : applyAnthropicEvent(reply, ev);
}

/** A non-streaming answer in `format` as a reply. */
export function replyFromJson(format: ClientFormat, json: unknown): Reply {
  const r = emptyReply();
  const o = (json ?? {}) as Record<string, unknown>;
  if (typeof o.model === 'string') r.model = o.model;
  if (format === 'openai') {
    const choice = (Array.isArray(o.choices) ? o.choices[0] : undefined) as
      | { message?: Record<string, unknown>; finish_reason?: unknown }
      | undefined;
    const msg = choice?.message ?? {};
    r.text = typeof msg.content === 'string' ? msg.content : '';
    r.reasoning = typeof msg.reasoning_content === 'string' ? msg.reasoning_content : '';
    r.finish = typeof choice?.finish_reason === 'string' ? choice.finish_reason : null;
    const u = (o.usage ?? null) as Record<string, unknown> | null;
    if (u) r.usage = { input_tokens: num(u.prompt_tokens), output_tokens: num(u.completion_tokens) };
  } else {
    const blocks = (Array.isArray(o.content) ? o.content : []) as Record<string, unknown>[];
    for (const b of blocks) {
      if (b.type === 'text' && typeof b.text === 'string') r.text += b.text;
      if (b.type === 'thinking' && typeof b.thinking === 'string') r.reasoning += b.thinking;
    }
    r.finish = typeof o.stop_reason === 'string' ? o.stop_reason : null;
    const u = (o.usage ?? null) as Record<string, unknown> | null;
    if (u)
      r.usage = {
        input_tokens: num(u.input_tokens),
        output_tokens: num(u.output_tokens),
        cache_read_tokens: num(u.cache_read_input_tokens),
        cache_write_tokens: num(u.cache_creation_input_tokens),
      };
  }
  const gw = o.guardrail_warning as { message?: unknown; violations?: { name?: unknown }[] } | undefined;
  if (gw && typeof gw === 'object') {
    const names = (gw.violations ?? []).map((v) => String(v.name ?? '')).filter(Boolean);
    r.warning = `${typeof gw.message === 'string' ? gw.message : 'A guardrail redacted this answer.'}${names.length ? ` (${names.join(', ')})` : ''}`;
  }
  r.complete = true;
  return r;
}

/** Quote for a POSIX shell. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The request as a curl command; the key is never in it (a variable instead). */
export function curlCommand(origin: string, format: ClientFormat, body: Record<string, unknown>): string {
  const lines = [`curl ${shellQuote(origin + endpointOf(format))}`];
  if (body.stream) lines.push('  -N');
  lines.push(`  -H 'Content-Type: application/json'`);
  if (format === 'openai') lines.push(`  -H "Authorization: Bearer $GATEWAY_API_KEY"`);
  else {
    lines.push(`  -H "x-api-key: $GATEWAY_API_KEY"`);
    lines.push(`  -H 'anthropic-version: 2023-06-01'`);
  }
  lines.push(`  -d ${shellQuote(JSON.stringify(body, null, 2))}`);
  return lines.join(' \\\n');
}
