// Server-Sent Events parsing over fetch (the WHATWG event-stream grammar):
// bytes arrive in chunks split anywhere (inside a line, between CR and LF,
// inside a UTF-8 character); events come out whole. Used by the playground
// (/v1 streams) and the admin log stream.

export interface SseEvent {
  /** The `event:` field, or "message" when absent. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  id?: string;
}

/** Incremental parser: push text, get the events completed so far. */
export class SseParser {
  private buffer = '';
  private eventType = '';
  private dataLines: string[] = [];
  private hasData = false;
  private lastId: string | undefined;
  /** A CR ended the last chunk: a LF starting the next belongs to it. */
  private pendingCr = false;

  push(text: string): SseEvent[] {
    let input = text;
    if (this.pendingCr) {
      this.pendingCr = false;
      if (input.startsWith('\n')) input = input.slice(1);
    }
    this.buffer += input;
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.buffer.slice(start, i);
      if (c === 13) {
        if (i + 1 < this.buffer.length) {
          if (this.buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** End of input: a last event without its blank line is dispatched. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.buffer) {
      const ev = this.line(this.buffer);
      this.buffer = '';
      if (ev) out.push(ev);
    }
    const last = this.dispatch();
    if (last) out.push(last);
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      default:
        break;
    }
    return null;
  }

  private dispatch(): SseEvent | null {
    const type = this.eventType;
    this.eventType = '';
    if (!this.hasData) {
      this.dataLines = [];
      return null;
    }
    const ev: SseEvent = { event: type || 'message', data: this.dataLines.join('\n') };
    if (this.lastId !== undefined) ev.id = this.lastId;
    this.dataLines = [];
    this.hasData = false;
    return ev;
  }
}

/**
 * Read a fetch body as SSE, calling `onEvent` for each event as it completes.
 * Resolves at the end of the stream; rejects on a read error or an abort.
 */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  onEvent: (ev: SseEvent) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      for (const ev of parser.push(decoder.decode(value, { stream: true }))) onEvent(ev);
    }
    for (const ev of parser.push(decoder.decode())) onEvent(ev);
    for (const ev of parser.end()) onEvent(ev);
  } finally {
    reader.releaseLock();
  }
}
