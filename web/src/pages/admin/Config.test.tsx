import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderAt } from '../../test/utils';
import Config from './Config';

const SCHEMA = {
  fields: [
    { name: 'http_max_retries', type: 'integer', default: '3', description: 'Retries.', reload: 'hot', secret: false, editable: true },
    { name: 'http_connect_timeout', type: 'duration', default: '30s', description: 'Connect timeout.', reload: 'restart', secret: false, editable: true },
    { name: 'debug_mode', type: 'enum', default: 'off', description: 'Body logging.', reload: 'hot', secret: false, editable: true, values: ['off', 'errors', 'all'] },
    { name: 'truncation_recovery', type: 'boolean', default: 'true', description: 'Recovery.', reload: 'hot', secret: false, editable: true },
    { name: 'server_port', type: 'integer', default: '8000', description: 'Port.', reload: 'restart', secret: false, editable: false },
    { name: 'sso_client_id', type: 'string', default: null, description: 'SSO.', reload: 'hot', secret: false, editable: true },
  ],
};
const CONFIG = {
  values: { http_max_retries: '3', http_connect_timeout: '30s', debug_mode: 'off', truncation_recovery: 'true', server_port: '9999', sso_client_id: null },
  sources: { http_max_retries: 'default', http_connect_timeout: 'database', debug_mode: 'default', truncation_recovery: 'default', server_port: 'environment' },
  pending_restart: { http_connect_timeout: { configured: '45s', running: '30s' } },
  sso_enabled: false,
};
const HISTORY = {
  entries: [{ id: 1, key: 'http_connect_timeout', old_value: '30s', new_value: '45s', secret: false, changed_by: 'u', changed_by_email: 'a@example.com', changed_at: '2026-11-24T10:00:00Z' }],
  count: 1,
};

describe('configuration page', () => {
  it('shows grouped, type-aware fields with reload badges, pending restarts and history', async () => {
    mockFetch({ 'GET /_ui/api/config/schema': { body: SCHEMA }, 'GET /_ui/api/config': { body: CONFIG }, 'GET /_ui/api/config/history': { body: HISTORY } });
    renderAt(<Config />, '/admin/config');
    expect(await screen.findByRole('heading', { name: 'Upstream connections' })).toBeInTheDocument();
    expect(screen.getByLabelText('debug_mode').tagName).toBe('SELECT');
    expect(screen.getByLabelText('truncation_recovery')).toHaveAttribute('type', 'checkbox');
    expect(screen.getByLabelText('http_max_retries')).toHaveAttribute('type', 'number');
    expect(screen.getByLabelText('server_port')).toBeDisabled();
    expect(screen.queryByLabelText('sso_client_id')).toBeNull();
    expect(screen.getByText(/Restart pending/).closest('.notice')).toHaveTextContent('http_connect_timeout (30s → 45s)');
    expect(screen.getAllByText('restart').length).toBeGreaterThan(0);
    expect(screen.getAllByText('hot reload').length).toBe(3);
    const history = await screen.findByRole('region', { name: 'History' });
    expect(within(history).getByLabelText('before: 30s')).toBeInTheDocument();
    expect(within(history).getByLabelText('after: 45s')).toBeInTheDocument();
  });

  it('checks values by type, then sends only the changed fields and says what applied', async () => {
    const { calls } = mockFetch({
      'GET /_ui/api/config/schema': { body: SCHEMA },
      'GET /_ui/api/config': { body: CONFIG },
      'GET /_ui/api/config/history': { body: { entries: [], count: 0 } },
      'PUT /_ui/api/config': { body: { ok: true, changed: ['http_max_retries', 'debug_mode'], applied: ['http_max_retries', 'debug_mode'], pending_restart: [] } },
    });
    renderAt(<Config />, '/admin/config');
    const timeout = await screen.findByLabelText('http_connect_timeout');
    await userEvent.clear(timeout);
    await userEvent.type(timeout, 'soon');
    expect(screen.getByRole('alert')).toHaveTextContent('A duration');
    expect(screen.getByRole('button', { name: /Save/ })).toBeDisabled();
    await userEvent.clear(timeout);
    await userEvent.type(timeout, '30s');
    const retries = screen.getByLabelText('http_max_retries');
    await userEvent.clear(retries);
    await userEvent.type(retries, '5');
    await userEvent.selectOptions(screen.getByLabelText('debug_mode'), 'errors');
    await userEvent.click(screen.getByRole('button', { name: 'Save 2 changes' }));
    await waitFor(() => expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({ http_max_retries: '5', debug_mode: 'errors' }));
    expect(await screen.findByText(/Applied now: http_max_retries, debug_mode/)).toBeInTheDocument();
  });

  it('shows the server refusing a value', async () => {
    mockFetch({
      'GET /_ui/api/config/schema': { body: SCHEMA },
      'GET /_ui/api/config': { body: CONFIG },
      'GET /_ui/api/config/history': { body: { entries: [], count: 0 } },
      'PUT /_ui/api/config': { status: 400, body: { error: { message: 'invalid configuration: http_max_retries: at most 10', type: 'validation_error' } } },
    });
    renderAt(<Config />, '/admin/config');
    const retries = await screen.findByLabelText('http_max_retries');
    await userEvent.clear(retries);
    await userEvent.type(retries, '50');
    await userEvent.click(screen.getByRole('button', { name: 'Save 1 change' }));
    expect(await screen.findByText('invalid configuration: http_max_retries: at most 10')).toBeInTheDocument();
  });
});
