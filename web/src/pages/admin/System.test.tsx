import { act, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mockFetch, renderAt } from '../../test/utils';
import System from './System';

const INFO = {
  version: '1.4.0',
  mode: 'full',
  build: { commit: 'abc1234', built_at: '2026-11-24T10:00:00Z' },
  database: { kind: 'postgres', schema_version: 25 },
  started_at: '2026-11-24T10:00:00Z',
  uptime_secs: 3725,
  replicas: [{ id: 'r1', hostname: 'gw-a', version: '1.4.0', last_seen: new Date().toISOString() }],
  pending_restart: ['http_connect_timeout'],
  limits: { counted_in: 'redis', redis_round_trips: 12, failures: 3 },
  guardrails: { enabled: true, active_rules: 2, blocked: 4, redacted: 1, fail_opens: 5 },
};

let visibility: DocumentVisibilityState = 'visible';
beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: true });
  visibility = 'visible';
  vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => visibility);
});
afterEach(() => vi.useRealTimers());

describe('system page', () => {
  it('shows what runs, and refreshes every 30 s only while the tab is visible', async () => {
    const { calls } = mockFetch({ 'GET /_ui/api/system': { body: INFO } });
    renderAt(<System />, '/admin/system');
    expect(await screen.findByText('PostgreSQL')).toBeInTheDocument();
    expect(screen.getByText('1 h 02 min')).toBeInTheDocument();
    expect(screen.getByText('http_connect_timeout')).toBeInTheDocument();
    expect(screen.getByText('gw-a')).toBeInTheDocument();
    expect(screen.getByText('counted in Redis, shared by every replica')).toBeInTheDocument();
    expect(screen.getByText(/3 counter failures/)).toBeInTheDocument();
    expect(screen.getByText('5 checks failed open')).toBeInTheDocument();
    expect(calls).toHaveLength(1);
    await act(() => vi.advanceTimersByTimeAsync(30_000));
    expect(calls).toHaveLength(2);
    visibility = 'hidden';
    act(() => {
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await act(() => vi.advanceTimersByTimeAsync(180_000));
    expect(calls).toHaveLength(2);
  });

  it('shows what a non-admin is answered (version and mode only)', async () => {
    mockFetch({ 'GET /_ui/api/system': { body: { version: '0.1.0', mode: 'full' } } });
    renderAt(<System />, '/admin/system');
    expect(await screen.findByText('0.1.0')).toBeInTheDocument();
    expect(screen.getByText('Full deployment')).toBeInTheDocument();
    expect(screen.queryByText('Guardrails')).not.toBeInTheDocument();
  });
});
