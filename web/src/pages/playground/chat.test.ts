import { describe, expect, it } from 'vitest';
import { SseParser } from '../../lib/sse';
import { applyEvent, buildBody, type ClientFormat, curlCommand, emptyReply, type Reply, replyFromJson } from './chat';

const OPENAI =
  'data: {"id":"c1","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n' +
  'data: {"id":"c1","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{"reasoning_content":"think"},"finish_reason":null}]}\n\n' +
  'data: {"id":"c1","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{"content":"Héllo"},"finish_reason":null}]}\n\n' +
  'data: {"id":"c1","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":null}]}\n\n' +
  'data: {"id":"c1","object":"chat.completion.chunk","model":"m1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: {"id":"c1","object":"chat.completion.chunk","model":"m1","choices":[],"usage":{"prompt_tokens":13,"completion_tokens":4,"total_tokens":17}}\n\n' +
  'data: [DONE]\n\n';

const ANTHROPIC =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message","role":"assistant","content":[],"model":"claude-x","usage":{"input_tokens":21,"output_tokens":1,"cache_read_input_tokens":5}}}\n\n' +
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}\n\n' +
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}\n\n' +
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
  'event: content_block_start\ndata: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}\n\n' +
  'event: ping\ndata: {"type":"ping"}\n\n' +
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Héllo"}}\n\n' +
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" world"}}\n\n' +
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":1}\n\n' +
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}\n\n' +
  'event: message_stop\ndata: {"type":"message_stop"}\n\n';

function fold(format: ClientFormat, pieces: string[]): Reply {
  const p = new SseParser();
  let r = emptyReply();
  for (const piece of pieces) for (const ev of p.push(piece)) r = applyEvent(format, r, ev);
  for (const ev of p.end()) r = applyEvent(format, r, ev);
  return r;
}

describe('playground stream folding', () => {
  it('chat completions: text, reasoning, usage, finish, complete — split anywhere', () => {
    for (let i = 0; i <= OPENAI.length; i += 7) {
      const r = fold('openai', [OPENAI.slice(0, i), OPENAI.slice(i)]);
      expect(r).toMatchObject({
        text: 'Héllo world',
        reasoning: 'think',
        finish: 'stop',
        model: 'm1',
        complete: true,
        error: null,
        usage: { input_tokens: 13, output_tokens: 4 },
      });
    }
    expect(fold('openai', OPENAI.split('')).text).toBe('Héllo world');
  });

  it('messages: text, thinking, usage from start and delta, stop — split anywhere', () => {
    for (let i = 0; i <= ANTHROPIC.length; i += 5) {
      const r = fold('anthropic', [ANTHROPIC.slice(0, i), ANTHROPIC.slice(i)]);
      expect(r).toMatchObject({
        text: 'Héllo world',
        reasoning: 'hmm',
        finish: 'end_turn',
        model: 'claude-x',
        complete: true,
        usage: { input_tokens: 21, output_tokens: 9, cache_read_tokens: 5 },
      });
    }
    expect(fold('anthropic', ANTHROPIC.split('')).text).toBe('Héllo world');
  });

  it('a chat-completions error chunk is an error and never complete', () => {
    const s = OPENAI.split('data: [DONE]')[0]!.slice(0, 400) + '\n\ndata: {"error":{"message":"upstream broke","type":"upstream_api_error"}}\n\n';
    const r = fold('openai', [s]);
    expect(r.error).toBe('upstream_api_error: upstream broke');
    expect(r.complete).toBe(false);
  });

  it('a messages error event is an error', () => {
    const r = fold('anthropic', ['event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n']);
    expect(r.error).toBe('overloaded_error: busy');
    expect(r.complete).toBe(false);
  });

  it('a stream cut before its end marker is not complete', () => {
    expect(fold('openai', [OPENAI.replace('data: [DONE]\n\n', '')]).complete).toBe(false);
    expect(fold('anthropic', [ANTHROPIC.replace(/event: message_stop[^\n]*\n[^\n]*\n\n/, '')]).complete).toBe(false);
  });
});

describe('requests and answers', () => {
  const params = {
    model: 'm',
    system: 'be brief',
    messages: [{ role: 'user' as const, content: 'hi' }],
    temperature: 0.5,
    maxTokens: 100,
    stream: true,
  };
  it('builds each format', () => {
    expect(buildBody('openai', params)).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
      max_tokens: 100,
      temperature: 0.5,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(buildBody('anthropic', params)).toEqual({
      model: 'm',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
      system: 'be brief',
      temperature: 0.5,
      stream: true,
    });
  });

  it('reads non-streaming answers', () => {
    expect(
      replyFromJson('openai', { model: 'm', choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 2 } }),
    ).toMatchObject({ text: 'ok', finish: 'stop', usage: { input_tokens: 1, output_tokens: 2 }, complete: true });
    expect(
      replyFromJson('anthropic', { model: 'c', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 3, output_tokens: 4 } }),
    ).toMatchObject({ text: 'ok', finish: 'end_turn', usage: { input_tokens: 3, output_tokens: 4 } });
  });

  it('reports a guardrail warning on a redacted answer', () => {
    const r = replyFromJson('openai', {
      choices: [{ message: { content: 'Write to {EMAIL}' }, finish_reason: 'stop' }],
      guardrail_warning: { type: 'guardrail_warning', message: 'content was redacted', violations: [{ kind: 'pii', name: 'EMAIL', action: 'ANONYMIZED' }] },
    });
    expect(r.warning).toBe('content was redacted (EMAIL)');
    expect(r.text).toBe('Write to {EMAIL}');
  });

  it('copies as curl with the key elided and the body shell-quoted', () => {
    const body = buildBody('openai', { ...params, messages: [{ role: 'user', content: "it's" }] });
    const curl = curlCommand('http://gw:9999', 'openai', body);
    expect(curl).toContain("curl 'http://gw:9999/v1/chat/completions'");
    expect(curl).toContain('Authorization: Bearer $GATEWAY_API_KEY');
    expect(curl).toContain(`it'\\''s`);
    expect(curl).not.toMatch(/sk-/);
    expect(curlCommand('http://gw', 'anthropic', buildBody('anthropic', params))).toContain('x-api-key: $GATEWAY_API_KEY');
  });
});
