import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderAt } from '../../test/utils';
import Logs, { parseLogEvent } from './Logs';

function line(message: string, level = 'info', replayed = false) {
  return `event: log\ndata: ${JSON.stringify({ timestamp: '2026-11-25T01:02:03.456Z', level, target: 'gateway::x', message, request_id: 'req-1', fields: { a: 1 }, replayed })}\n\n`;
}

/** A response whose body the test writes into. */
function controlledStream() {
  let push: (s: string) => void = () => {};
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      push = (s) => c.enqueue(new TextEncoder().encode(s));
    },
  });
  return { response: new Response(body, { headers: { 'Content-Type': 'text/event-stream' } }), push: (s: string) => push(s) };
}

describe('log stream', () => {
  it('parses log events and rejects others', () => {
    expect(parseLogEvent('{"level":"warn","message":"m"}')).toMatchObject({ level: 'warn', message: 'm', replayed: false, fields: {} });
    expect(parseLogEvent('{"nope":1}')).toBeNull();
    expect(parseLogEvent('not json')).toBeNull();
  });

  it('streams lines with the level and request-id filters, holds them while paused', async () => {
    const streams: ReturnType<typeof controlledStream>[] = [];
    const { calls } = mockFetch({
      'GET /_ui/api/admin/logs/stream': () => {
        const s = controlledStream();
        streams.push(s);
        return s.response;
      },
    });
    renderAt(<Logs />, '/admin/logs');
    await waitFor(() => expect(streams).toHaveLength(1));
    expect(calls[0]!.url).toBe('/_ui/api/admin/logs/stream?level=info&replay=200');
    streams[0]!.push(line('from history', 'info', true) + line('first live', 'warn'));
    expect(await screen.findByText('first live')).toBeInTheDocument();
    expect(screen.getByText('from history')).toBeInTheDocument();

    await userEvent.click(screen.getByRole('button', { name: 'Pause' }));
    streams[0]!.push(line('while paused'));
    expect(await screen.findByRole('button', { name: 'Resume (1 new)' })).toBeInTheDocument();
    expect(screen.queryByText('while paused')).toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Resume (1 new)' }));
    expect(screen.getByText('while paused')).toBeInTheDocument();

    await userEvent.selectOptions(screen.getByLabelText('Minimum level'), 'warn');
    await userEvent.type(screen.getByLabelText('Request id'), 'req-42');
    await userEvent.click(screen.getByRole('button', { name: 'Apply' }));
    await waitFor(() => expect(calls.at(-1)!.url).toBe('/_ui/api/admin/logs/stream?level=warn&request_id=req-42&replay=200'));
  });

  it('says when the gateway has no log stream', async () => {
    mockFetch({});
    renderAt(<Logs />, '/admin/logs');
    expect(await screen.findByText('Not available on this gateway')).toBeInTheDocument();
  });
});
