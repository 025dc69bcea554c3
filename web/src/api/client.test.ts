import { afterEach, describe, expect, it, vi } from 'vitest';
import { api, ApiError, setUnauthorizedHandler } from './client';
import { json, mockFetch } from '../test/utils';

afterEach(() => setUnauthorizedHandler(null));

describe('api client', () => {
  it('sends the csrf_token cookie as X-CSRF-Token on every mutating call, not on GET', async () => {
    document.cookie = 'csrf_token=tok%2Ben';
    document.cookie = 'other=1';
    const { calls } = mockFetch({
      'GET /_ui/api/keys': { body: { keys: [], count: 0 } },
      'POST /_ui/api/keys': { body: {} },
      'PUT /_ui/api/config': { body: {} },
      'PATCH /_ui/api/models/registry/x': { body: {} },
      'DELETE /_ui/api/keys/1': { body: { ok: true } },
    });
    await api('/keys');
    await api('/keys', { method: 'POST', body: { label: 'a' } });
    await api('/config', { method: 'PUT', body: {} });
    await api('/models/registry/x', { method: 'PATCH', body: {} });
    await api('/keys/1', { method: 'DELETE' });
    expect(calls[0]!.headers.get('X-CSRF-Token')).toBeNull();
    for (const c of calls.slice(1)) expect(c.headers.get('X-CSRF-Token')).toBe('tok+en');
    expect(calls.every((c) => c.credentials === 'same-origin')).toBe(true);
    expect(calls[1]!.headers.get('Content-Type')).toBe('application/json');
    expect(calls[1]!.body).toEqual({ label: 'a' });
  });

  it('turns an error body into an ApiError with the server message and type', async () => {
    mockFetch({ 'POST /_ui/api/keys': { status: 409, body: { error: { message: 'at most 100 keys', type: 'conflict' } } } });
    const err = await api('/keys', { method: 'POST', body: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe('at most 100 keys');
    expect((err as ApiError).type).toBe('conflict');
    expect((err as ApiError).status).toBe(409);
  });

  it('keeps the whole body (retry_after_secs of a 423)', async () => {
    mockFetch({ 'POST /_ui/api/auth/login': { status: 423, body: { error: { message: 'locked', type: 'account_locked' }, retry_after_secs: 42 } } });
    const err = (await api('/auth/login', { method: 'POST', body: {}, allow401: true }).catch((e: unknown) => e)) as ApiError;
    expect((err.body as { retry_after_secs: number }).retry_after_secs).toBe(42);
  });

  it('sends the user to sign-in on a 401, remembering where they were', async () => {
    window.history.pushState({}, '', '/_ui/usage?from=2026-01-01');
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    mockFetch({ 'GET /_ui/api/usage': { status: 401, body: { error: { message: 'no session', type: 'auth_error' } } } });
    await expect(api('/usage')).rejects.toThrow('no session');
    expect(handler).toHaveBeenCalledWith('/usage?from=2026-01-01');
  });

  it('does not redirect when a 401 is the answer (allow401) or on the sign-in page', async () => {
    const handler = vi.fn();
    setUnauthorizedHandler(handler);
    mockFetch({ 'POST /_ui/api/auth/login': { status: 401, body: { error: { message: 'bad', type: 'auth_error' } } } });
    window.history.pushState({}, '', '/_ui/keys');
    await expect(api('/auth/login', { method: 'POST', body: {}, allow401: true })).rejects.toThrow('bad');
    window.history.pushState({}, '', '/_ui/login');
    await expect(api('/auth/login', { method: 'POST', body: {} })).rejects.toThrow('bad');
    expect(handler).not.toHaveBeenCalled();
  });

  it('says plainly when the gateway cannot be reached', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))));
    await expect(api('/status')).rejects.toThrow(/could not be reached/);
  });

  it('uses the status line when the body is not the error shape', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' })));
    await expect(api('/status')).rejects.toThrow('502 Bad Gateway');
  });

  it('builds query strings without empty values', async () => {
    const { calls } = mockFetch({ 'GET /_ui/api/usage': () => json(200, {}) });
    await api('/usage', { query: { from: '2026-01-01', to: '', group_by: 'day', user_id: undefined } });
    expect(calls[0]!.url).toBe('/_ui/api/usage?from=2026-01-01&group_by=day');
  });
});
