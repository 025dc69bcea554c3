import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { json, mockFetch, renderAt } from '../../test/utils';
import Providers from './Providers';

const REGISTRY = {
  providers: [
    { id: 'primary', display_name: 'Primary', auth_kinds: ['device'], enabled: true, multi_account: true },
    { id: 'custom', display_name: 'Custom', auth_kinds: ['api_key'], enabled: true, multi_account: true },
    { id: 'messages_vendor', display_name: 'Messages', auth_kinds: ['oauth_pkce'], enabled: true, multi_account: true },
  ],
};
const COOLING = {
  id: 'a1',
  provider: 'messages_vendor',
  label: 'work',
  priority: 100,
  base_url: null,
  auth_kind: 'oauth_pkce',
  status: 'cooldown',
  expires_at: null,
  cooldown_until: new Date(Date.now() + 40_000).toISOString(),
  last_error: '429 from the provider',
  last_used: null,
  created_at: '2026-11-20T00:00:00Z',
  source: 'user',
};

function routes(extra: Record<string, Parameters<typeof mockFetch>[0][string]> = {}) {
  return {
    'GET /_ui/api/upstream/status': { body: { has_token: false, expired: false } },
    'GET /_ui/api/providers/registry': { body: REGISTRY },
    'GET /_ui/api/providers/status': { body: { providers: [] } },
    'GET /_ui/api/providers/priority': { body: { order: [] } },
    'GET /_ui/api/providers/rate-limits': { body: { accounts: [] } },
    'GET /_ui/api/providers/custom/accounts': { body: { accounts: [] } },
    'GET /_ui/api/providers/messages_vendor/accounts': { body: { accounts: [COOLING] } },
    ...extra,
  };
}

describe('providers page', () => {
  it('shows an account in cooldown honestly, and disconnects it after confirmation', async () => {
    document.cookie = 'csrf_token=t';
    const { calls } = mockFetch(routes({ 'DELETE /_ui/api/providers/messages_vendor': { body: { ok: true, removed: 1 } } }));
    renderAt(<Providers />, '/providers');
    const card = await screen.findByRole('region', { name: 'Messages' });
    expect(await within(card).findByText(/cooling down, ready in \d+ s/)).toBeInTheDocument();
    expect(within(card).getByText('429 from the provider')).toBeInTheDocument();
    await userEvent.click(within(card).getByRole('button', { name: 'Disconnect account work' }));
    await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Disconnect' }));
    await waitFor(() => expect(calls.find((c) => c.method === 'DELETE')?.url).toBe('/_ui/api/providers/messages_vendor?account_id=a1'));
  });

  it('connects an API-key provider: required fields checked, then the key is sent once', async () => {
    const { calls } = mockFetch(
      routes({
        'GET /_ui/api/providers/custom/connect': {
          body: {
            provider: 'custom',
            auth_kind: 'api_key',
            fields: [
              { name: 'base_url', label: 'Base URL', secret: false, required: true },
              { name: 'api_key', label: 'API key', secret: true, required: true },
            ],
          },
        },
        'POST /_ui/api/providers/custom/accounts': () => json(201, { ...COOLING, id: 'n1', provider: 'custom', status: 'active' }),
      }),
    );
    renderAt(<Providers />, '/providers');
    const card = await screen.findByRole('region', { name: 'Custom' });
    await userEvent.click(await within(card).findByRole('button', { name: 'Connect' }));
    const save = await within(card).findByRole('button', { name: 'Check and save' });
    await userEvent.click(save);
    expect(within(card).getByText('Enter the Base URL.')).toBeInTheDocument();
    expect(within(card).getByText('Enter the API key.')).toBeInTheDocument();
    expect(within(card).getByLabelText('API key')).toHaveAttribute('type', 'password');
    await userEvent.type(within(card).getByLabelText('Base URL'), 'https://llm.example.com/v1');
    await userEvent.type(within(card).getByLabelText('API key'), 'secret-key');
    await userEvent.click(save);
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ base_url: 'https://llm.example.com/v1', api_key: 'secret-key' }),
    );
  });

  it('shows the relay command and the sign-in link for the OAuth relay provider', async () => {
    mockFetch(
      routes({
        'GET /_ui/api/providers/messages_vendor/connect': {
          body: { provider: 'messages_vendor', auth_kind: 'oauth_pkce', auth_url: 'https://v.example/authorize', relay_script_url: '/x' },
        },
        'GET /_ui/api/providers/messages_vendor/auth': {
          body: { auth_url: 'https://v.example/authorize?state=s1', state: 's1', relay_script_url: '/_ui/api/providers/messages_vendor/relay-script?state=s1' },
        },
      }),
    );
    renderAt(<Providers />, '/providers');
    const card = await screen.findByRole('region', { name: 'Messages' });
    await userEvent.click(await within(card).findByRole('button', { name: 'Add an account' }));
    await userEvent.click(await within(card).findByRole('button', { name: 'Start sign-in' }));
    expect(
      await within(card).findByText(`curl -fsSL '${window.location.origin}/_ui/api/providers/messages_vendor/relay-script?state=s1' | sh`),
    ).toBeInTheDocument();
    expect(within(card).getByRole('link', { name: 'Open the provider’s sign-in page' })).toHaveAttribute('href', 'https://v.example/authorize?state=s1');
  });

  it('says so when the gateway offers only the primary provider', async () => {
    mockFetch({ 'GET /_ui/api/upstream/status': { body: { has_token: true, expired: true } } });
    renderAt(<Providers />, '/providers');
    expect(await screen.findByText('credentials refused by the SSO service: reconnect')).toBeInTheDocument();
    expect(await screen.findByText(/offers only the primary provider/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Reconnect' })).toBeInTheDocument();
  });
});
