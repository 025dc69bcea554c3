import { describe, expect, it } from 'vitest';
import { readSse, SseParser, type SseEvent } from './sse';

const STREAM =
  ': comment\r\n' +
  'event: message_start\r\n' +
  'data: {"a":1}\r\n' +
  '\r\n' +
  'data: line one\n' +
  'data: line two\n' +
  '\n' +
  'event: ping\r' +
  'data:no-space\r' +
  '\r' +
  'id: 7\n' +
  'data: [DONE]\n\n';

const EXPECTED: SseEvent[] = [
  { event: 'message_start', data: '{"a":1}' },
  { event: 'message', data: 'line one\nline two' },
  { event: 'ping', data: 'no-space' },
  { event: 'message', data: '[DONE]', id: '7' },
];

function parseInPieces(pieces: string[]): SseEvent[] {
  const p = new SseParser();
  const out: SseEvent[] = [];
  for (const piece of pieces) out.push(...p.push(piece));
  out.push(...p.end());
  return out;
}

describe('SseParser', () => {
  it('parses a whole stream', () => {
    expect(parseInPieces([STREAM])).toEqual(EXPECTED);
  });

  it('gives the same events wherever the stream is split in two or three', () => {
    for (let i = 0; i <= STREAM.length; i++) {
      expect(parseInPieces([STREAM.slice(0, i), STREAM.slice(i)])).toEqual(EXPECTED);
      const j = Math.min(STREAM.length, i + 3);
      expect(parseInPieces([STREAM.slice(0, i), STREAM.slice(i, j), STREAM.slice(j)])).toEqual(EXPECTED);
    }
  });

  it('gives the same events fed one character at a time', () => {
    expect(parseInPieces(STREAM.split(''))).toEqual(EXPECTED);
  });

  it('dispatches a last event without its blank line at the end', () => {
    expect(parseInPieces(['data: tail'])).toEqual([{ event: 'message', data: 'tail' }]);
  });

  it('ignores events without data', () => {
    expect(parseInPieces(['event: x\n\n', ': keep-alive\n\n'])).toEqual([]);
  });
});

function byteStream(bytes: Uint8Array, cuts: number[]): ReadableStream<Uint8Array> {
  const points = [0, ...cuts, bytes.length];
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i >= points.length - 1) {
        controller.close();
        return;
      }
      controller.enqueue(bytes.slice(points[i], points[i + 1]));
      i++;
    },
  });
}

describe('readSse', () => {
  it('decodes UTF-8 split inside a character', async () => {
    const text = 'data: héllo wörld 🌍\n\ndata: ✓\n\n';
    const bytes = new TextEncoder().encode(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const events: SseEvent[] = [];
      await readSse(byteStream(bytes, [cut]), (e) => events.push(e));
      expect(events.map((e) => e.data)).toEqual(['héllo wörld 🌍', '✓']);
    }
  });
});
