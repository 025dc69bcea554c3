// Upstream and providers: connect `primary` by the device flow, connect each
// other provider by its own flow, see every account's status, expiry and
// cooldown, order the providers (drag or arrow buttons), disconnect.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, errorMessage, isNotFound } from '../../api/client';
import type {
  Account,
  AccountList,
  ConnectInfo,
  DeviceAuthorization,
  MessagesVendorAuth,
  PollAnswer,
  ProviderId,
  ProviderRegistry,
  ProviderStatusList,
  RateLimitList,
  RegistryProvider,
  UpstreamStatus,
} from '../../api/types';
import {
  Badge,
  Button,
  ConfirmButton,
  CopyButton,
  Empty,
  ErrorNotice,
  Loading,
  Notice,
  Page,
  QueryView,
  Section,
  TextField,
} from '../../components/ui';
import { fmtDateTime, fmtRelative } from '../../lib/format';
import { pollEvery, useVisibleInterval } from '../../lib/visibility';
import { DeviceFlow, type FlowOutcome } from './DeviceFlow';
import { PROVIDER_NAMES } from './names';
import { PriorityEditor } from './PriorityEditor';

const AUTH_KIND_LABEL: Record<string, string> = {
  device: 'device login',
  oauth_pkce: 'OAuth',
  oauth_code_host: 'code-host sign-in',
  api_key: 'API key',
};

const FLOW_TEXT: Record<Exclude<FlowOutcome, 'success'>, string> = {
  expired: 'The code expired before it was approved. Start again.',
  denied: 'The authorization was refused.',
  cancelled: 'Cancelled.',
};

function PrimaryCard() {
  const queryClient = useQueryClient();
  const status = useQuery({
    queryKey: ['upstream-status'],
    queryFn: () => api<UpstreamStatus>('/upstream/status'),
  });
  const [flow, setFlow] = useState<DeviceAuthorization | null>(null);
  const [advanced, setAdvanced] = useState(false);
  const [startUrl, setStartUrl] = useState('');
  const [ssoRegion, setSsoRegion] = useState('');
  const [region, setRegion] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ tone: 'success' | 'error' | 'warning'; text: string } | null>(null);

  const start = async (ev?: FormEvent) => {
    ev?.preventDefault();
    setBusy(true);
    setResult(null);
    try {
      const body: Record<string, string> = {};
      if (startUrl.trim()) body.sso_start_url = startUrl.trim();
      if (ssoRegion.trim()) body.sso_region = ssoRegion.trim();
      if (region.trim()) body.upstream_region = region.trim();
      setFlow(await api<DeviceAuthorization>('/upstream/setup', { method: 'POST', body }));
    } catch (e) {
      setResult({ tone: 'error', text: errorMessage(e) });
    } finally {
      setBusy(false);
    }
  };

  const finished = async (o: FlowOutcome, a?: PollAnswer) => {
    setFlow(null);
    if (o === 'success') {
      setResult({ tone: 'success', text: 'Connected. Requests to the primary provider use these credentials now.' });
      await queryClient.invalidateQueries({ queryKey: ['upstream-status'] });
      await queryClient.invalidateQueries({ queryKey: ['providers-status'] });
    } else {
      setResult({ tone: o === 'cancelled' ? 'warning' : 'error', text: a?.message ?? FLOW_TEXT[o] });
    }
  };

  const disconnect = async () => {
    await api('/upstream/token', { method: 'DELETE' });
    setResult(null);
    await queryClient.invalidateQueries({ queryKey: ['upstream-status'] });
  };

  const s = status.data;
  return (
    <Section
      title={PROVIDER_NAMES.primary}
      actions={
        s?.has_token && (
          <ConfirmButton
            label="Disconnect"
            title="Disconnect the primary provider?"
            message="Your stored upstream credentials are deleted. Requests routed to the primary provider are refused until you connect again."
            confirmLabel="Disconnect"
            onConfirm={disconnect}
          />
        )
      }
    >
      {status.isPending && <Loading />}
      {status.isError && <ErrorNotice error={status.error} onRetry={() => void status.refetch()} />}
      {s && (
        <div className="stack">
          <div className="row">
            {!s.has_token ? (
              <Badge tone="warn">not connected</Badge>
            ) : s.expired ? (
              <Badge tone="bad">credentials refused by the SSO service: reconnect</Badge>
            ) : (
              <Badge tone="good">connected</Badge>
            )}
            {s.has_token && (
              <span className="muted small">
                {s.sso_start_url && <>start URL {s.sso_start_url} · </>}
                {s.sso_region && <>SSO region {s.sso_region} · </>}
                {s.upstream_region && <>API region {s.upstream_region}</>}
              </span>
            )}
          </div>
          {result && <Notice tone={result.tone}>{result.text}</Notice>}
          {flow ? (
            <DeviceFlow
              auth={flow}
              poll={(code) => api<PollAnswer>('/upstream/poll', { method: 'POST', body: { device_code: code } })}
              onFinished={(o, a) => void finished(o, a)}
            />
          ) : (
            <form onSubmit={start} className="stack" noValidate>
              <p className="muted">
                Sign in with the upstream’s device flow: the gateway shows a code, you approve it in the browser, and
                your credentials are stored encrypted for your account only.
              </p>
              <button type="button" className="linklike" aria-expanded={advanced} onClick={() => setAdvanced((a) => !a)}>
                {advanced ? 'Hide' : 'Show'} organization settings
              </button>
              {advanced && (
                <div className="grid-3">
                  <TextField
                    label="SSO start URL"
                    placeholder="deployment default"
                    type="url"
                    value={startUrl}
                    onChange={(e) => setStartUrl(e.target.value)}
                  />
                  <TextField label="SSO region" placeholder="default" value={ssoRegion} onChange={(e) => setSsoRegion(e.target.value)} />
                  <TextField label="API region" placeholder="default" value={region} onChange={(e) => setRegion(e.target.value)} />
                </div>
              )}
              <div>
                <Button type="submit" variant="primary" busy={busy}>
                  {s.has_token ? 'Reconnect' : 'Connect'}
                </Button>
              </div>
            </form>
          )}
        </div>
      )}
    </Section>
  );
}

function accountBadge(a: Account, now = Date.now()) {
  if (a.source === 'pool' && a.enabled === false) return <Badge tone="neutral">disabled</Badge>;
  switch (a.status) {
    case 'active':
      return <Badge tone="good">active</Badge>;
    case 'cooldown':
      return (
        <Badge tone="warn" title={a.cooldown_until ?? undefined}>
          cooling down{a.cooldown_until ? `, ready ${fmtRelative(a.cooldown_until, now)}` : ''}
        </Badge>
      );
    case 'expired':
      return <Badge tone="bad">expired: reconnect</Badge>;
    case 'error':
      return <Badge tone="bad">error</Badge>;
    default:
      return <Badge>{a.status}</Badge>;
  }
}

export function AccountsTable({
  provider,
  accounts,
  onChanged,
}: {
  provider: ProviderId;
  accounts: Account[];
  onChanged: () => Promise<unknown>;
}) {
  const [editing, setEditing] = useState<string | null>(null);
  const [label, setLabel] = useState('');
  const [priority, setPriority] = useState('');
  const [err, setErr] = useState<string | null>(null);
  const save = async (a: Account) => {
    const p = Number(priority);
    if (!Number.isInteger(p) || p < 0) {
      setErr('Priority is a whole number, 0 or more (lower is tried first).');
      return;
    }
    try {
      await api(`/providers/${provider}/accounts/${a.id}`, { method: 'PATCH', body: { label: label.trim(), priority: p } });
      setEditing(null);
      setErr(null);
      await onChanged();
    } catch (e) {
      setErr(errorMessage(e));
    }
  };
  if (accounts.length === 0) return <p className="muted">No account connected.</p>;
  return (
    <div className="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Account</th>
            <th scope="col">Status</th>
            <th scope="col">Priority</th>
            <th scope="col">Expires</th>
            <th scope="col">Last used</th>
            <th scope="col">
              <span className="sr-only">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {accounts.map((a) => (
            <tr key={a.id}>
              <td>
                {editing === a.id ? (
                  <TextField label="Label" value={label} onChange={(e) => setLabel(e.target.value)} />
                ) : (
                  <>
                    <div>{a.label || <span className="muted">unnamed</span>}</div>
                    <div className="muted small">
                      {AUTH_KIND_LABEL[a.auth_kind] ?? a.auth_kind}
                      {a.base_url && <> · {a.base_url}</>}
                      {a.source === 'pool' && <> · shared pool</>}
                    </div>
                  </>
                )}
              </td>
              <td>
                {accountBadge(a)}
                {a.last_error && <div className="muted small error-text">{a.last_error}</div>}
              </td>
              <td>
                {editing === a.id ? (
                  <TextField
                    label="Priority"
                    type="number"
                    min={0}
                    value={priority}
                    onChange={(e) => setPriority(e.target.value)}
                    error={err}
                  />
                ) : (
                  a.priority
                )}
              </td>
              <td title={a.expires_at ?? undefined}>{a.expires_at ? fmtRelative(a.expires_at) : <span className="muted">no expiry</span>}</td>
              <td>{a.last_used ? fmtRelative(a.last_used) : <span className="muted">never</span>}</td>
              <td className="actions">
                {a.source === 'user' &&
                  (editing === a.id ? (
                    <>
                      <Button small variant="primary" onClick={() => void save(a)}>
                        Save
                      </Button>
                      <Button small onClick={() => setEditing(null)}>
                        Cancel
                      </Button>
                    </>
                  ) : (
                    <>
                      <Button
                        small
                        aria-label={`Edit account ${a.label || a.id}`}
                        onClick={() => {
                          setEditing(a.id);
                          setLabel(a.label);
                          setPriority(String(a.priority));
                          setErr(null);
                        }}
                      >
                        Edit
                      </Button>
                      <ConfirmButton
                        label="Disconnect"
                        aria-label={`Disconnect account ${a.label || a.id}`}
                        title="Disconnect this account?"
                        message={`The credentials of “${a.label || 'this account'}” are deleted from the gateway.`}
                        confirmLabel="Disconnect"
                        onConfirm={async () => {
                          await api(`/providers/${provider}`, { method: 'DELETE', query: { account_id: a.id } });
                          await onChanged();
                        }}
                      />
                    </>
                  ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function ApiKeyConnect({ info, onDone }: { info: Extract<ConnectInfo, { auth_kind: 'api_key' }>; onDone: () => Promise<unknown> }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [label, setLabel] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    const errs: Record<string, string> = {};
    for (const f of info.fields) {
      const v = (values[f.name] ?? '').trim();
      if (f.required && !v) errs[f.name] = `Enter the ${f.label}.`;
      if (v && f.name === 'base_url' && !/^https?:\/\/\S+$/.test(v)) errs[f.name] = 'Enter a URL starting with https://';
    }
    setErrors(errs);
    if (Object.keys(errs).length) return;
    setBusy(true);
    setError(null);
    try {
      const body: Record<string, string> = {};
      for (const f of info.fields) if (values[f.name]?.trim()) body[f.name] = values[f.name]!.trim();
      if (label.trim()) body.label = label.trim();
      await api(`/providers/${info.provider}/accounts`, { method: 'POST', body });
      setValues({});
      setLabel('');
      await onDone();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form onSubmit={submit} noValidate className="stack">
      <p className="muted small">The key is checked with one call to the provider before it is stored (encrypted).</p>
      {error && <Notice tone="error">{error}</Notice>}
      <div className="grid-2">
        {info.fields.map((f) => (
          <TextField
            key={f.name}
            label={f.label + (f.required ? '' : ' (optional)')}
            type={f.secret ? 'password' : f.name === 'base_url' ? 'url' : 'text'}
            autoComplete="off"
            value={values[f.name] ?? ''}
            onChange={(e) => setValues((v) => ({ ...v, [f.name]: e.target.value }))}
            error={errors[f.name]}
          />
        ))}
        <TextField label="Label (optional)" value={label} onChange={(e) => setLabel(e.target.value)} />
      </div>
      <div>
        <Button type="submit" variant="primary" busy={busy}>
          Check and save
        </Button>
      </div>
    </form>
  );
}

function RelayConnect({ provider, onDone }: { provider: ProviderId; onDone: () => Promise<unknown> }) {
  const [auth, setAuth] = useState<MessagesVendorAuth | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [known, setKnown] = useState<Set<string>>(new Set());
  const [connected, setConnected] = useState(false);
  const start = async () => {
    setBusy(true);
    setError(null);
    try {
      const before = await api<AccountList>(`/providers/${provider}/accounts`);
      setKnown(new Set(before.accounts.map((a) => a.id)));
      setAuth(await api<MessagesVendorAuth>(`/providers/${provider}/auth`));
      setConnected(false);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  // Watch for the account the relay script creates.
  useVisibleInterval(
    async () => {
      const now = await api<AccountList>(`/providers/${provider}/accounts`);
      if (now.accounts.some((a) => !known.has(a.id))) {
        setConnected(true);
        setAuth(null);
        await onDone();
      }
    },
    5000,
    auth !== null,
  );
  const command = auth ? `curl -fsSL '${new URL(auth.relay_script_url, window.location.origin).href}' | sh` : '';
  return (
    <div className="stack">
      {connected && <Notice tone="success">Connected: the new account is listed above.</Notice>}
      {error && <Notice tone="error">{error}</Notice>}
      {!auth ? (
        <div>
          <p className="muted small">
            This provider signs in with OAuth and a loopback redirect (port 54545). A small script on your computer
            receives the answer and hands it to the gateway.
          </p>
          <Button variant="primary" busy={busy} onClick={() => void start()}>
            Start sign-in
          </Button>
        </div>
      ) : (
        <ol className="steps">
          <li>
            In a terminal on <strong>this computer</strong>, run (needs <code>python3</code> and <code>curl</code>;
            it waits up to 10 minutes):
            <div className="secret-box">
              <code>{command}</code>
              <CopyButton text={command} />
            </div>
          </li>
          <li>
            <a href={auth.auth_url} target="_blank" rel="noopener noreferrer">
              Open the provider’s sign-in page
            </a>{' '}
            and approve. The browser is sent to the script, which passes the code to the gateway.
          </li>
          <li>
            <Badge tone="info">
              <span className="pulse" aria-hidden="true" /> waiting for the new account
            </Badge>{' '}
            <Button small variant="ghost" onClick={() => setAuth(null)}>
              Cancel
            </Button>
          </li>
        </ol>
      )}
    </div>
  );
}

function CodeHostConnect({
  info,
  onDone,
}: {
  info: Extract<ConnectInfo, { auth_kind: 'oauth_code_host' }>;
  onDone: () => Promise<unknown>;
}) {
  const [flow, setFlow] = useState<DeviceAuthorization | null>(null);
  const [result, setResult] = useState<{ tone: 'success' | 'error' | 'warning'; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const start = async () => {
    setBusy(true);
    setResult(null);
    try {
      setFlow(await api<DeviceAuthorization>('/assistant/device-code', { method: 'POST', body: {} }));
    } catch (e) {
      setResult({ tone: 'error', text: errorMessage(e) });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="stack">
      {result && <Notice tone={result.tone}>{result.text}</Notice>}
      {flow ? (
        <DeviceFlow
          auth={flow}
          poll={(code) => api<PollAnswer>('/assistant/device-poll', { method: 'POST', body: { device_code: code } })}
          onFinished={(o, a) => {
            setFlow(null);
            if (o === 'success') {
              setResult({ tone: 'success', text: a?.login ? `Connected as ${a.login}.` : 'Connected.' });
              void onDone();
            } else setResult({ tone: o === 'cancelled' ? 'warning' : 'error', text: a?.message ?? FLOW_TEXT[o] });
          }}
        />
      ) : (
        <div className="row">
          {info.auth_url && (
            <a className="btn btn-primary" href="/_ui/api/providers/assistant_vendor/auth">
              Sign in with the code host
            </a>
          )}
          <Button variant={info.auth_url ? 'secondary' : 'primary'} busy={busy} onClick={() => void start()}>
            Connect with a device code
          </Button>
        </div>
      )}
    </div>
  );
}

function ConnectPanel({ provider, onDone }: { provider: ProviderId; onDone: () => Promise<unknown> }) {
  const info = useQuery({
    queryKey: ['connect', provider],
    queryFn: () => api<ConnectInfo>(`/providers/${provider}/connect`),
    staleTime: 60_000,
  });
  return (
    <QueryView query={info} loadingLabel="Loading how to connect…">
      {(i) => {
        switch (i.auth_kind) {
          case 'api_key':
            return <ApiKeyConnect info={i} onDone={onDone} />;
          case 'oauth_pkce':
            return <RelayConnect provider={provider} onDone={onDone} />;
          case 'oauth_code_host':
            return <CodeHostConnect info={i} onDone={onDone} />;
          default:
            return <p className="muted">Connect this provider with the device flow above.</p>;
        }
      }}
    </QueryView>
  );
}

function ProviderCard({ provider, state }: { provider: RegistryProvider; state?: ProviderStatusList['providers'][number] }) {
  const queryClient = useQueryClient();
  const [connecting, setConnecting] = useState(false);
  const accounts = useQuery({
    queryKey: ['accounts', provider.id],
    queryFn: () => api<AccountList>(`/providers/${provider.id}/accounts`),
    refetchInterval: (q) =>
      q.state.data?.accounts.some((a) => a.status === 'cooldown') ? pollEvery(10_000) : false,
  });
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ['accounts', provider.id] }),
      queryClient.invalidateQueries({ queryKey: ['providers-status'] }),
    ]);
  const own = accounts.data?.accounts.filter((a) => a.source === 'user') ?? [];
  return (
    <Section
      title={provider.display_name || PROVIDER_NAMES[provider.id] || provider.id}
      actions={
        <>
          {!provider.enabled ? (
            <Badge tone="neutral">disabled by an admin</Badge>
          ) : state?.connected ? (
            <Badge tone="good">connected</Badge>
          ) : state?.pool_available ? (
            <Badge tone="info">shared pool available</Badge>
          ) : (
            <Badge tone="neutral">not connected</Badge>
          )}
          {own.length > 1 && (
            <ConfirmButton
              label="Disconnect all"
              title={`Disconnect every ${provider.display_name} account?`}
              message={`All ${own.length} of your accounts for this provider are deleted.`}
              confirmLabel="Disconnect all"
              onConfirm={async () => {
                await api(`/providers/${provider.id}`, { method: 'DELETE' });
                await refresh();
              }}
            />
          )}
        </>
      }
    >
      {accounts.isPending && <Loading />}
      {accounts.isError && <ErrorNotice error={accounts.error} onRetry={() => void accounts.refetch()} />}
      {accounts.data && <AccountsTable provider={provider.id} accounts={accounts.data.accounts} onChanged={refresh} />}
      {provider.enabled && (
        <div className="connect">
          {connecting ? (
            <>
              <div className="row-between">
                <h3>Connect {own.length ? 'another' : 'an'} account</h3>
                <Button small variant="ghost" onClick={() => setConnecting(false)}>
                  Close
                </Button>
              </div>
              <ConnectPanel
                provider={provider.id}
                onDone={async () => {
                  await refresh();
                }}
              />
            </>
          ) : (
            <Button onClick={() => setConnecting(true)}>{own.length ? 'Add an account' : 'Connect'}</Button>
          )}
        </div>
      )}
    </Section>
  );
}

function RateLimits() {
  const limits = useQuery({
    queryKey: ['rate-limits'],
    queryFn: () => api<RateLimitList>('/providers/rate-limits'),
    refetchInterval: pollEvery(30_000),
    retry: false,
  });
  if (limits.isError && isNotFound(limits.error)) return null;
  return (
    <Section title="Rate limits (as the providers last reported)">
      <QueryView query={limits}>
        {(d) =>
          d.accounts.length === 0 ? (
            <Empty title="Nothing reported yet">Figures appear after requests through a provider that sends rate-limit headers.</Empty>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Provider</th>
                    <th scope="col">Account</th>
                    <th scope="col">Requests left</th>
                    <th scope="col">Tokens left</th>
                    <th scope="col">Cooldown</th>
                    <th scope="col">Recent 429s</th>
                  </tr>
                </thead>
                <tbody>
                  {d.accounts.map((r) => (
                    <tr key={r.account_id}>
                      <td>{PROVIDER_NAMES[r.provider] ?? r.provider}</td>
                      <td className="mono small">
                        {r.account_id.slice(0, 8)}
                        {r.source === 'pool' && ' (pool)'}
                      </td>
                      <td>
                        {r.remaining_requests ?? '—'} / {r.limit_requests ?? '—'}
                        {r.reset_requests_at && <span className="muted small"> · resets {fmtRelative(r.reset_requests_at)}</span>}
                      </td>
                      <td>
                        {r.remaining_tokens ?? '—'} / {r.limit_tokens ?? '—'}
                        {r.reset_tokens_at && <span className="muted small"> · resets {fmtRelative(r.reset_tokens_at)}</span>}
                      </td>
                      <td>{r.cooldown_until && Date.parse(r.cooldown_until) > Date.now() ? <Badge tone="warn">until {fmtDateTime(r.cooldown_until)}</Badge> : '—'}</td>
                      <td>{r.recent_429 ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryView>
    </Section>
  );
}

const CALLBACK_ERRORS: Record<string, string> = {
  access_denied: 'The code host refused the authorization.',
};

export default function Providers() {
  const [params, setParams] = useSearchParams();
  const registry = useQuery({
    queryKey: ['providers-registry'],
    queryFn: () => api<ProviderRegistry>('/providers/registry'),
    staleTime: 60_000,
    retry: false,
  });
  const status = useQuery({
    queryKey: ['providers-status'],
    queryFn: () => api<ProviderStatusList>('/providers/status'),
    retry: false,
  });
  const connected = params.get('connected');
  const callbackError = params.get('error');
  const others = registry.data?.providers.filter((p) => p.id !== 'primary') ?? [];
  const unavailable = registry.isError && isNotFound(registry.error);

  return (
    <Page
      title="Providers"
      description="Connect your own accounts for each upstream provider. Requests use your accounts in the order below; a provider in cooldown is skipped."
    >
      {(connected || callbackError) && (
        <Notice tone={connected ? 'success' : 'error'}>
          {connected
            ? `${PROVIDER_NAMES[connected] ?? connected} is connected.`
            : CALLBACK_ERRORS[callbackError ?? ''] ?? `Connecting failed (${callbackError}).`}{' '}
          <button type="button" className="linklike" onClick={() => setParams({}, { replace: true })}>
            Dismiss
          </button>
        </Notice>
      )}
      <PrimaryCard />
      {registry.isPending && <Loading label="Loading providers…" />}
      {unavailable && (
        <Notice tone="info">
          This gateway offers only the primary provider to signed-in users (its providers API is not available).
        </Notice>
      )}
      {registry.isError && !unavailable && <ErrorNotice error={registry.error} onRetry={() => void registry.refetch()} />}
      {registry.data && (
        <>
          <PriorityEditor registry={registry.data.providers} />
          {others.map((p) => (
            <ProviderCard key={p.id} provider={p} state={status.data?.providers.find((s) => s.id === p.id)} />
          ))}
          <RateLimits />
        </>
      )}
    </Page>
  );
}
