// Admin: provider switches (enable or disable a provider for everyone) and
// the shared pool of accounts every user may use.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, errorMessage } from '../../api/client';
import type { Account, AccountList, AdminProviderList, ProviderId } from '../../api/types';
import { Badge, Button, ConfirmButton, Dialog, Empty, Notice, Page, QueryView, Section, SelectField, TextField } from '../../components/ui';
import { fmtRelative } from '../../lib/format';
import { PROVIDER_IDS, PROVIDER_NAMES } from '../providers/names';

const switchesKey = ['admin-providers'] as const;
const poolKey = ['admin-pool'] as const;

function Switches() {
  const queryClient = useQueryClient();
  const switches = useQuery({ queryKey: switchesKey, queryFn: () => api<AdminProviderList>('/admin/providers') });
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<{ id: ProviderId; enabled: boolean } | null>(null);
  const apply = async () => {
    if (!pending) return;
    try {
      await api(`/admin/providers/${pending.id}`, { method: 'PATCH', body: { enabled: pending.enabled } });
      await queryClient.invalidateQueries({ queryKey: switchesKey });
      await queryClient.invalidateQueries({ queryKey: ['providers-registry'] });
      setPending(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <Section title="Providers">
      <p className="muted small">A disabled provider is refused for every user (403 provider_disabled) on every replica within a second. The primary provider cannot be disabled.</p>
      <QueryView query={switches}>
        {(d) => (
          <ul className="switch-list">
            {d.providers.map((p) => (
              <li key={p.id}>
                <label className="switch">
                  <input
                    type="checkbox"
                    role="switch"
                    checked={p.enabled}
                    disabled={p.id === 'primary'}
                    onChange={(e) => {
                      setError(null);
                      setPending({ id: p.id, enabled: e.target.checked });
                    }}
                  />
                  <span>{PROVIDER_NAMES[p.id] ?? p.id}</span>
                </label>
                {p.enabled ? <Badge tone="good">enabled</Badge> : <Badge tone="neutral">disabled</Badge>}
              </li>
            ))}
          </ul>
        )}
      </QueryView>
      {pending && (
        <Dialog
          title={`${pending.enabled ? 'Enable' : 'Disable'} ${PROVIDER_NAMES[pending.id] ?? pending.id}?`}
          onClose={() => setPending(null)}
          footer={
            <>
              <Button onClick={() => setPending(null)}>Cancel</Button>
              <Button variant={pending.enabled ? 'primary' : 'danger'} onClick={() => void apply()}>
                {pending.enabled ? 'Enable' : 'Disable'}
              </Button>
            </>
          }
        >
          <p>
            {pending.enabled
              ? 'Users with accounts for this provider can use it again.'
              : 'Every request that needs this provider is refused until it is enabled again. Accounts are kept.'}
          </p>
          {error && <Notice tone="error">{error}</Notice>}
        </Dialog>
      )}
    </Section>
  );
}

function AddPoolAccount({ onClose }: { onClose: () => void }) {
  const queryClient = useQueryClient();
  const [mode, setMode] = useState<'key' | 'move'>('key');
  const [provider, setProvider] = useState<ProviderId>('completions_vendor');
  const [label, setLabel] = useState('');
  const [apiKey, setApiKey] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [priority, setPriority] = useState('100');
  const [fromId, setFromId] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const own = useQuery({
    queryKey: ['accounts', provider],
    queryFn: () => api<AccountList>(`/providers/${provider}/accounts`),
    enabled: mode === 'move',
  });
  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    const e: Record<string, string> = {};
    let body: Record<string, unknown>;
    if (mode === 'move') {
      if (!fromId) e.from = 'Choose one of your accounts.';
      body = { from_account_id: fromId, ...(label.trim() ? { label: label.trim() } : {}) };
    } else {
      if (!label.trim()) e.label = 'Give the account a label users will see.';
      if (!apiKey.trim()) e.apiKey = 'Enter the API key.';
      if (provider === 'custom' && !/^https?:\/\/\S+$/.test(baseUrl.trim())) e.baseUrl = 'The custom provider needs a base URL (https://…).';
      const p = Number(priority);
      if (!Number.isInteger(p) || p < 0) e.priority = 'A whole number, 0 or more.';
      body = { provider, label: label.trim(), api_key: apiKey.trim(), priority: p, enabled: true, ...(baseUrl.trim() ? { base_url: baseUrl.trim() } : {}) };
    }
    setErrors(e);
    if (Object.keys(e).length) return;
    setBusy(true);
    setError(null);
    try {
      await api('/admin/pool', { method: 'POST', body });
      await queryClient.invalidateQueries({ queryKey: poolKey });
      onClose();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title="Add a pool account" onClose={onClose}>
      <form onSubmit={submit} noValidate className="stack">
        <fieldset className="segmented">
          <legend>How</legend>
          <label>
            <input type="radio" name="pool-mode" checked={mode === 'key'} onChange={() => setMode('key')} /> With an API key
          </label>
          <label>
            <input type="radio" name="pool-mode" checked={mode === 'move'} onChange={() => setMode('move')} /> Move one of my accounts
          </label>
        </fieldset>
        {error && <Notice tone="error">{error}</Notice>}
        <SelectField label="Provider" value={provider} onChange={(e) => setProvider(e.target.value as ProviderId)}>
          {PROVIDER_IDS.filter((p) => p !== 'primary').map((p) => (
            <option key={p} value={p}>
              {PROVIDER_NAMES[p]}
            </option>
          ))}
        </SelectField>
        {mode === 'move' ? (
          <SelectField label="Your account" value={fromId} onChange={(e) => setFromId(e.target.value)} error={errors.from} hint={own.isPending ? 'Loading your accounts…' : undefined}>
            <option value="">Choose…</option>
            {(own.data?.accounts ?? [])
              .filter((a) => a.source === 'user')
              .map((a) => (
                <option key={a.id} value={a.id}>
                  {a.label || a.id} ({a.status})
                </option>
              ))}
          </SelectField>
        ) : (
          <>
            <TextField label="API key" type="password" autoComplete="off" value={apiKey} onChange={(e) => setApiKey(e.target.value)} error={errors.apiKey} />
            <TextField label={`Base URL${provider === 'custom' ? '' : ' (optional)'}`} type="url" value={baseUrl} onChange={(e) => setBaseUrl(e.target.value)} error={errors.baseUrl} />
            <TextField label="Priority" type="number" min={0} value={priority} onChange={(e) => setPriority(e.target.value)} error={errors.priority} hint="Lower is tried first, after users’ own accounts." />
          </>
        )}
        <TextField label={mode === 'move' ? 'Label (optional)' : 'Label'} value={label} onChange={(e) => setLabel(e.target.value)} error={errors.label} />
        <div className="dialog-foot">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={busy}>
            Add to pool
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function PoolAccounts() {
  const queryClient = useQueryClient();
  const pool = useQuery({ queryKey: poolKey, queryFn: () => api<AccountList>('/admin/pool') });
  const [adding, setAdding] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const patch = async (a: Account, body: Record<string, unknown>) => {
    setError(null);
    try {
      await api(`/admin/pool/${a.id}`, { method: 'PATCH', body });
      await queryClient.invalidateQueries({ queryKey: poolKey });
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <Section title="Shared pool" actions={pool.data && <Button variant="primary" onClick={() => setAdding(true)}>Add account</Button>}>
      <p className="muted small">Pool accounts serve every user who has no working account of their own for the provider.</p>
      {error && <Notice tone="error">{error}</Notice>}
      <QueryView query={pool}>
        {(d) =>
          d.accounts.length === 0 ? (
            <Empty title="No pool accounts">Add one to let every user reach a provider without connecting their own.</Empty>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Enabled</th>
                    <th scope="col">Account</th>
                    <th scope="col">Provider</th>
                    <th scope="col">Status</th>
                    <th scope="col">Priority</th>
                    <th scope="col">Last used</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {d.accounts.map((a) => (
                    <tr key={a.id} className={a.enabled === false ? 'row-off' : ''}>
                      <td>
                        <input type="checkbox" role="switch" aria-label={`${a.enabled === false ? 'Enable' : 'Disable'} ${a.label}`} checked={a.enabled !== false} onChange={(e) => void patch(a, { enabled: e.target.checked })} />
                      </td>
                      <td>
                        {a.label}
                        {a.base_url && <div className="muted small">{a.base_url}</div>}
                      </td>
                      <td>{PROVIDER_NAMES[a.provider] ?? a.provider}</td>
                      <td>
                        {a.status === 'active' ? <Badge tone="good">active</Badge> : a.status === 'cooldown' ? <Badge tone="warn">cooldown {a.cooldown_until ? fmtRelative(a.cooldown_until) : ''}</Badge> : <Badge tone="bad">{a.status}</Badge>}
                        {a.last_error && <div className="muted small error-text">{a.last_error}</div>}
                      </td>
                      <td>
                        <input
                          type="number"
                          className="input-compact"
                          aria-label={`Priority of ${a.label}`}
                          defaultValue={a.priority}
                          min={0}
                          onBlur={(e) => {
                            const v = Number(e.target.value);
                            if (Number.isInteger(v) && v >= 0 && v !== a.priority) void patch(a, { priority: v });
                          }}
                        />
                      </td>
                      <td>{a.last_used ? fmtRelative(a.last_used) : <span className="muted">never</span>}</td>
                      <td className="actions">
                        <ConfirmButton
                          label="Remove"
                          aria-label={`Remove ${a.label}`}
                          title={`Remove ${a.label} from the pool?`}
                          message="Its credentials are deleted. Users who relied on it need their own account for this provider."
                          confirmLabel="Remove"
                          onConfirm={async () => {
                            await api(`/admin/pool/${a.id}`, { method: 'DELETE' });
                            await queryClient.invalidateQueries({ queryKey: poolKey });
                          }}
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryView>
      {adding && <AddPoolAccount onClose={() => setAdding(false)} />}
    </Section>
  );
}

export default function Pool() {
  return (
    <Page title="Provider pool" description="Switch providers on or off for everyone, and share accounts with all users.">
      <Switches />
      <PoolAccounts />
    </Page>
  );
}
