import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderAt } from '../test/utils';
import { budgetAmount, perMinute } from '../components/LimitFields';
import Keys, { endOfDay, labelProblem, modelList } from './Keys';

const KEY = { id: 'k1', key_prefix: 'sk-abcdefg', label: 'laptop', last_used: null, created_at: '2026-11-20T10:00:00Z', expires_at: null as string | null, allowed_models: null as string[] | null, budget_usd: null as number | null, budget_period: null as string | null, rpm_limit: null as number | null, tpm_limit: null as number | null, spend_usd: 0, budget_resets_at: null as string | null };

describe('API keys', () => {
  it('shows loading, then the empty state', async () => {
    mockFetch({ 'GET /_ui/api/keys': { body: { keys: [], count: 0 } } });
    renderAt(<Keys />, '/keys');
    expect(screen.getByRole('status')).toHaveTextContent('Loading keys');
    expect(await screen.findByText('No keys yet')).toBeInTheDocument();
  });

  it('shows an error with a retry', async () => {
    mockFetch({ 'GET /_ui/api/keys': { status: 500, body: { error: { message: 'database unavailable', type: 'internal_error' } } } });
    renderAt(<Keys />, '/keys');
    expect(await screen.findByText('database unavailable', {}, { timeout: 3000 })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Try again' })).toBeInTheDocument();
  });

  it('creates a key and shows it once', async () => {
    let keys = [] as (typeof KEY)[];
    const { calls } = mockFetch({
      'GET /_ui/api/keys': () => new Response(JSON.stringify({ keys, count: keys.length })),
      'POST /_ui/api/keys': () => {
        keys = [KEY];
        return new Response(JSON.stringify({ ...KEY, key: 'sk-abcdefgSECRETSECRET' }));
      },
    });
    renderAt(<Keys />, '/keys');
    await screen.findByText('No keys yet');
    await userEvent.type(screen.getByLabelText('Label'), ' laptop ');
    await userEvent.click(screen.getByRole('button', { name: 'Create key' }));
    const dialog = await screen.findByRole('dialog', { name: 'Your new API key' });
    expect(within(dialog).getByLabelText('New API key')).toHaveTextContent('sk-abcdefgSECRETSECRET');
    expect(calls.find((c) => c.method === 'POST')!.body).toEqual({ label: 'laptop' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'I have copied it' }));
    expect(screen.queryByText('sk-abcdefgSECRETSECRET')).toBeNull();
    expect(await screen.findByText('sk-abcdefg…')).toBeInTheDocument();
  });

  it('creates a key with an expiry and a model list, and shows its rules', async () => {
    let keys = [] as (typeof KEY)[];
    const { calls } = mockFetch({
      'GET /_ui/api/keys': () => new Response(JSON.stringify({ keys, count: keys.length })),
      'POST /_ui/api/keys': () => {
        keys = [{ ...KEY, expires_at: '2030-01-31T23:59:59Z', allowed_models: ['claude-sonnet-4.5', 'custom/llama3'] }];
        return new Response(JSON.stringify({ ...keys[0], key: 'sk-abcdefgSECRET' }));
      },
    });
    renderAt(<Keys />, '/keys');
    await screen.findByText('No keys yet');
    await userEvent.type(screen.getByLabelText('Expires'), '2030-01-31');
    await userEvent.type(screen.getByLabelText('Models'), 'claude-sonnet-4.5, custom/llama3, claude-sonnet-4.5');
    await userEvent.click(screen.getByRole('button', { name: 'Create key' }));
    await screen.findByRole('dialog', { name: 'Your new API key' });
    expect(calls.find((c) => c.method === 'POST')!.body).toEqual({
      label: '',
      expires_at: '2030-01-31T23:59:59Z',
      allowed_models: ['claude-sonnet-4.5', 'custom/llama3'],
    });
    await userEvent.click(screen.getByRole('button', { name: 'I have copied it' }));
    expect(await screen.findByText(/only claude-sonnet-4.5, custom\/llama3/)).toBeInTheDocument();
    expect(modelList(' , ')).toBeNull();
    expect(endOfDay('soon')).toBeNull();
  });

  it('creates a key with a budget and rate limits, and shows its spend', async () => {
    let keys = [] as (typeof KEY)[];
    const { calls } = mockFetch({
      'GET /_ui/api/keys': () => new Response(JSON.stringify({ keys, count: keys.length })),
      'POST /_ui/api/keys': () => {
        keys = [{ ...KEY, budget_usd: 25, budget_period: 'daily', rpm_limit: 60, tpm_limit: null, spend_usd: 26.5, budget_resets_at: '2030-01-02T00:00:00Z' }];
        return new Response(JSON.stringify({ ...keys[0], key: 'sk-abcdefgSECRET' }));
      },
    });
    renderAt(<Keys />, '/keys');
    await screen.findByText('No keys yet');
    await userEvent.type(screen.getByLabelText('Requests / min'), '0');
    await userEvent.click(screen.getByRole('button', { name: 'Create key' }));
    expect(await screen.findByText('A whole number, 1 or more.')).toBeInTheDocument();
    expect(calls.some((c) => c.method === 'POST')).toBe(false);
    await userEvent.clear(screen.getByLabelText('Requests / min'));
    await userEvent.type(screen.getByLabelText('Requests / min'), '60');
    await userEvent.type(screen.getByLabelText('Budget (USD)'), '25');
    await userEvent.selectOptions(screen.getByLabelText('Budget period'), 'daily');
    await userEvent.click(screen.getByRole('button', { name: 'Create key' }));
    await screen.findByRole('dialog', { name: 'Your new API key' });
    expect(calls.find((c) => c.method === 'POST')!.body).toEqual({ label: '', budget_usd: 25, budget_period: 'daily', rpm_limit: 60 });
    await userEvent.click(screen.getByRole('button', { name: 'I have copied it' }));
    expect(await screen.findByText(/60 requests\/min/)).toBeInTheDocument();
    expect(screen.getByText(/of \$25\.00.* today/)).toBeInTheDocument();
    expect(screen.getByText('spent')).toBeInTheDocument();
    expect(budgetAmount('')).toBeUndefined();
    expect(budgetAmount('-1')).toBeNull();
    expect(perMinute('2.5')).toBeNull();
  });

  it('refuses a label that is too long before sending', async () => {
    expect(labelProblem('x'.repeat(101))).toBe('At most 100 characters.');
    expect(labelProblem('tab\there')).toBe('No control characters.');
    expect(labelProblem('fine')).toBeNull();
  });

  it('revokes only after confirmation, with the CSRF header', async () => {
    document.cookie = 'csrf_token=csrf-1';
    let keys = [KEY];
    const { calls } = mockFetch({
      'GET /_ui/api/keys': () => new Response(JSON.stringify({ keys, count: keys.length })),
      'DELETE /_ui/api/keys/k1': () => {
        keys = [];
        return new Response(JSON.stringify({ ok: true }));
      },
    });
    renderAt(<Keys />, '/keys');
    await userEvent.click(await screen.findByRole('button', { name: 'Revoke key laptop' }));
    const dialog = screen.getByRole('dialog', { name: 'Revoke this key?' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await userEvent.click(screen.getByRole('button', { name: 'Revoke key laptop' }));
    await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Revoke key' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    const del = calls.find((c) => c.method === 'DELETE')!;
    expect(del.headers.get('X-CSRF-Token')).toBe('csrf-1');
    expect(await screen.findByText('No keys yet')).toBeInTheDocument();
  });

  it('keeps the dialog open and shows the server message when revoking fails', async () => {
    mockFetch({
      'GET /_ui/api/keys': { body: { keys: [KEY], count: 1 } },
      'DELETE /_ui/api/keys/k1': { status: 404, body: { error: { message: 'key not found', type: 'not_found' } } },
    });
    renderAt(<Keys />, '/keys');
    await userEvent.click(await screen.findByRole('button', { name: 'Revoke key laptop' }));
    await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Revoke key' }));
    expect(await within(screen.getByRole('dialog')).findByText('key not found')).toBeInTheDocument();
  });
});
