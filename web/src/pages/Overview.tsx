// Overview: requests, tokens, errors and latency over the last 14 days (the
// user's own, or everyone's for admins), and the health of the providers
// and upstream credentials. Refreshed every 30 s while visible.

import { useQuery } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api, isNotFound } from '../api/client';
import { isAdmin, useMe } from '../api/session';
import type { ProviderStatusList, UpstreamStatus, UsageAnswer } from '../api/types';
import { TimeChart } from '../components/TimeChart';
import { Badge, Empty, ErrorNotice, Loading, Notice, Page, QueryView, Section } from '../components/ui';
import { fmtCompact, fmtInt, fmtMs, fmtRelative, fmtUsd, utcDate } from '../lib/format';
import { pollEvery } from '../lib/visibility';
import { PROVIDER_NAMES } from './providers/names';

const DAYS = 14;

/** Fill missing days with zeros so the chart's time axis is continuous. */
export function dailySeries(answer: UsageAnswer, days: number, today: Date = new Date()) {
  const byDay = new Map(answer.rows.map((r) => [r.group ?? '', r]));
  const x: number[] = [];
  const requests: number[] = [];
  const errors: number[] = [];
  const tokens: number[] = [];
  const latency: (number | null)[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const day = utcDate(-i, today);
    x.push(Date.parse(`${day}T00:00:00Z`) / 1000);
    const r = byDay.get(day);
    requests.push(r?.requests ?? 0);
    errors.push(r?.errors ?? 0);
    tokens.push(r?.total_tokens ?? 0);
    latency.push(r?.avg_latency_ms ?? null);
  }
  return { x, requests, errors, tokens, latency };
}

function Stat({ label, value, sub }: { label: string; value: string; sub?: string }) {
  return (
    <div className="stat">
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
      {sub && <div className="stat-sub">{sub}</div>}
    </div>
  );
}

function UsagePanel({ everyone }: { everyone: boolean }) {
  const from = utcDate(-(DAYS - 1));
  const usage = useQuery({
    queryKey: ['usage', everyone ? 'all' : 'own', 'day', from, ''],
    queryFn: () => api<UsageAnswer>(everyone ? '/admin/usage' : '/usage', { query: { from, group_by: 'day' } }),
    refetchInterval: pollEvery(30_000),
  });
  return (
    <QueryView query={usage} loadingLabel="Loading usage…">
      {(data) => {
        const s = dailySeries(data, DAYS);
        const t = data.totals;
        const errRate = t.requests ? (100 * t.errors) / t.requests : 0;
        return (
          <>
            <div className="stats">
              <Stat label="Requests" value={fmtInt(t.requests)} sub={`last ${DAYS} days`} />
              <Stat label="Tokens" value={fmtCompact(t.total_tokens)} sub={`${fmtCompact(t.input_tokens)} in · ${fmtCompact(t.output_tokens)} out`} />
              <Stat label="Errors" value={fmtInt(t.errors)} sub={t.requests ? `${errRate.toFixed(1)} % of requests` : undefined} />
              <Stat label="Avg latency" value={t.requests ? fmtMs(t.avg_latency_ms) : '—'} />
              <Stat label="Cost" value={fmtUsd(t.cost_usd)} sub="at the registry's prices" />
            </div>
            {t.requests === 0 ? (
              <Empty title="No requests in the last 14 days">
                Create an <Link to="/keys">API key</Link> and send a request, or try the{' '}
                <Link to="/playground">playground</Link>.
              </Empty>
            ) : (
              <div className="chart-grid">
                <div>
                  <h3 className="chart-title">Requests and errors per day</h3>
                  <TimeChart
                    label={`Requests and errors per day over the last ${DAYS} days`}
                    x={s.x}
                    series={[
                      { label: 'Requests', values: s.requests, colorVar: '--chart-1' },
                      { label: 'Errors', values: s.errors, colorVar: '--chart-bad' },
                    ]}
                  />
                </div>
                <div>
                  <h3 className="chart-title">Tokens and latency per day</h3>
                  <TimeChart
                    label={`Tokens and average latency per day over the last ${DAYS} days`}
                    x={s.x}
                    series={[
                      { label: 'Tokens', values: s.tokens, colorVar: '--chart-2' },
                      { label: 'Avg latency', values: s.latency, colorVar: '--chart-3', right: true, unit: 'ms' },
                    ]}
                  />
                </div>
              </div>
            )}
          </>
        );
      }}
    </QueryView>
  );
}

/** Requests, error rate and latency per provider over the same days. */
function ProviderTraffic({ everyone }: { everyone: boolean }) {
  const from = utcDate(-(DAYS - 1));
  const usage = useQuery({
    queryKey: ['usage', everyone ? 'all' : 'own', 'provider', from, ''],
    queryFn: () => api<UsageAnswer>(everyone ? '/admin/usage' : '/usage', { query: { from, group_by: 'provider' } }),
    refetchInterval: pollEvery(30_000),
  });
  const rows = (usage.data?.rows ?? []).filter((r) => r.requests > 0);
  if (rows.length === 0) return null;
  return (
    <div className="table-wrap">
    <table className="numeric compact">
      <caption className="chart-title">Traffic by provider, last {DAYS} days</caption>
      <thead>
        <tr>
          <th scope="col">Provider</th>
          <th scope="col">Req.</th>
          <th scope="col">Errors</th>
          <th scope="col">Avg</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => {
          const rate = (100 * r.errors) / r.requests;
          return (
            <tr key={r.group ?? ''}>
              <th scope="row">{r.group ? (PROVIDER_NAMES[r.group] ?? r.group) : '(refused)'}</th>
              <td>{fmtInt(r.requests)}</td>
              <td className={rate >= 5 ? 'error-text' : undefined}>{rate.toFixed(rate < 10 ? 1 : 0)} %</td>
              <td>{fmtMs(r.avg_latency_ms)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
    </div>
  );
}

function ProviderHealth() {
  const upstream = useQuery({
    queryKey: ['upstream-status'],
    queryFn: () => api<UpstreamStatus>('/upstream/status'),
    refetchInterval: pollEvery(30_000),
  });
  const providers = useQuery({
    queryKey: ['providers-status'],
    queryFn: () => api<ProviderStatusList>('/providers/status'),
    refetchInterval: pollEvery(30_000),
    retry: false,
  });
  if (upstream.isPending) return <Loading />;
  const rows: { id: string; name: string; tone: 'good' | 'warn' | 'bad' | 'neutral'; state: string; detail?: string }[] = [];
  if (providers.data) {
    for (const p of providers.data.providers) {
      if (p.id === 'primary') continue;
      const name = PROVIDER_NAMES[p.id] ?? p.id;
      if (!p.enabled) rows.push({ id: p.id, name, tone: 'neutral', state: 'disabled by an admin' });
      else if (p.connected)
        rows.push({
          id: p.id,
          name,
          tone: 'good',
          state: `connected (${p.accounts} account${p.accounts === 1 ? '' : 's'})`,
          detail: p.expires_at ? `expires ${fmtRelative(p.expires_at)}` : undefined,
        });
      else if (p.pool_available) rows.push({ id: p.id, name, tone: 'good', state: 'shared pool account' });
      else rows.push({ id: p.id, name, tone: 'neutral', state: 'not connected' });
    }
  }
  const u = upstream.data;
  return (
    <ul className="health">
      <li>
        <span>{PROVIDER_NAMES.primary}</span>
        {upstream.isError ? (
          <Badge tone="bad">status unavailable</Badge>
        ) : !u?.has_token ? (
          <Badge tone="warn">not connected</Badge>
        ) : u.expired ? (
          <Badge tone="bad">credentials refused: reconnect</Badge>
        ) : (
          <Badge tone="good">connected</Badge>
        )}
        {(!u?.has_token || u.expired) && <Link to="/providers">Connect</Link>}
      </li>
      {rows.map((r) => (
        <li key={r.id}>
          <span>{r.name}</span>
          <Badge tone={r.tone}>{r.state}</Badge>
          {r.detail && <span className="muted small">{r.detail}</span>}
        </li>
      ))}
      {providers.isError && !isNotFound(providers.error) && (
        <li>
          <ErrorNotice error={providers.error} title="Provider status unavailable" />
        </li>
      )}
    </ul>
  );
}

export default function Overview() {
  const me = useMe();
  const everyone = isAdmin(me.data);
  const [params] = useSearchParams();
  return (
    <Page
      title="Overview"
      description={everyone ? 'Traffic of every user of this gateway, last 14 days (UTC).' : 'Your traffic through this gateway, last 14 days (UTC).'}
    >
      {params.get('sso') === 'linked' && <Notice tone="success">Single sign-on is linked to your account.</Notice>}
      <div className="overview">
        <Section title={everyone ? 'All users' : 'Your requests'}>
          <UsagePanel everyone={everyone} />
        </Section>
        <Section title="Provider health" actions={<Link to="/providers">Manage</Link>}>
          <ProviderHealth />
          <ProviderTraffic everyone={everyone} />
        </Section>
      </div>
    </Page>
  );
}
