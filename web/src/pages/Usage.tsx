// Usage: a date range, grouped by day, model or provider (and by user, for
// admins), as a chart and a table, with CSV export of what is shown.

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api } from '../api/client';
import { isAdmin, useMe } from '../api/session';
import type { UsageAnswer, UsageRow } from '../api/types';
import { TimeChart } from '../components/TimeChart';
import { Button, Empty, Page, QueryView, Section, SelectField, TextField } from '../components/ui';
import { downloadText, toCsv } from '../lib/download';
import { fmtInt, fmtMs, fmtUsd, utcDate } from '../lib/format';

export type GroupBy = 'day' | 'model' | 'provider' | 'user';
type Scope = 'own' | 'all';

const COLUMNS: { key: keyof UsageRow; label: string; ms?: boolean; usd?: boolean }[] = [
  { key: 'requests', label: 'Requests' },
  { key: 'errors', label: 'Errors' },
  { key: 'input_tokens', label: 'Input tokens' },
  { key: 'output_tokens', label: 'Output tokens' },
  { key: 'cache_read_tokens', label: 'Cache read' },
  { key: 'cache_write_tokens', label: 'Cache write' },
  { key: 'total_tokens', label: 'Total tokens' },
  { key: 'avg_latency_ms', label: 'Avg latency', ms: true },
  { key: 'cost_usd', label: 'Cost', usd: true },
];

/** One figure of a usage row as the table shows it. */
function cell(c: (typeof COLUMNS)[number], value: unknown): string {
  if (c.ms) return fmtMs(value as number | null);
  if (c.usd) return fmtUsd(value as number | null);
  return fmtInt(value as number);
}

export function usageRequest(scope: Scope, groupBy: GroupBy, from: string, to: string) {
  const query: Record<string, string> = { from };
  if (to) query.to = to;
  if (groupBy === 'user') return { path: '/admin/usage/users', query };
  query.group_by = groupBy;
  return { path: scope === 'all' ? '/admin/usage' : '/usage', query };
}

export function rowName(r: UsageRow, groupBy: GroupBy): string {
  if (groupBy === 'user') return r.email ?? (r.user_id ? `deleted user ${r.user_id.slice(0, 8)}` : 'unknown');
  if (!r.group) return groupBy === 'day' ? '—' : '(refused before routing)';
  return r.group;
}

export function usageCsv(rows: UsageRow[], groupBy: GroupBy): string {
  const header = [groupBy === 'user' ? 'email' : groupBy, ...(groupBy === 'user' ? ['user_id'] : []), ...COLUMNS.map((c) => c.key)];
  return toCsv(
    header,
    rows.map((r) => [
      groupBy === 'user' ? (r.email ?? '') : (r.group ?? ''),
      ...(groupBy === 'user' ? [r.user_id ?? ''] : []),
      ...COLUMNS.map((c) => r[c.key] ?? ''),
    ]),
  );
}

function daysBetween(from: string, to: string): string[] {
  const out: string[] = [];
  const start = Date.parse(`${from}T00:00:00Z`);
  const end = Date.parse(`${to}T00:00:00Z`);
  if (Number.isNaN(start) || Number.isNaN(end) || end < start) return out;
  for (let t = start; t <= end && out.length < 400; t += 86_400_000) out.push(new Date(t).toISOString().slice(0, 10));
  return out;
}

function DayChart({ rows, from, to }: { rows: UsageRow[]; from: string; to: string }) {
  const days = daysBetween(from, to || utcDate(0));
  const byDay = new Map(rows.map((r) => [r.group, r]));
  const x = days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
  return (
    <TimeChart
      label={`Tokens and requests per day from ${from} to ${to || 'today'}`}
      x={x}
      series={[
        { label: 'Input tokens', values: days.map((d) => byDay.get(d)?.input_tokens ?? 0), colorVar: '--chart-1' },
        { label: 'Output tokens', values: days.map((d) => byDay.get(d)?.output_tokens ?? 0), colorVar: '--chart-2' },
        { label: 'Requests', values: days.map((d) => byDay.get(d)?.requests ?? 0), colorVar: '--chart-3', right: true },
      ]}
    />
  );
}

function Bars({ rows, groupBy }: { rows: UsageRow[]; groupBy: GroupBy }) {
  const top = rows.slice(0, 12);
  const max = Math.max(1, ...top.map((r) => r.total_tokens));
  return (
    <ul className="bars" aria-label={`Total tokens by ${groupBy}`}>
      {top.map((r, i) => (
        <li key={`${rowName(r, groupBy)}-${i}`}>
          <span className="bar-label" title={rowName(r, groupBy)}>
            {rowName(r, groupBy)}
          </span>
          <span className="bar-track">
            <span className="bar-fill" style={{ width: `${(100 * r.total_tokens) / max}%` }} />
          </span>
          <span className="bar-value">{fmtInt(r.total_tokens)}</span>
        </li>
      ))}
    </ul>
  );
}

export default function Usage() {
  const me = useMe();
  const admin = isAdmin(me.data);
  const [from, setFrom] = useState(utcDate(-29));
  const [to, setTo] = useState('');
  const [groupBy, setGroupBy] = useState<GroupBy>('day');
  const [scope, setScope] = useState<Scope>(admin ? 'all' : 'own');
  const rangeError = !from ? 'Choose a start date.' : to && to < from ? 'The end is before the start.' : null;
  const req = usageRequest(admin ? scope : 'own', groupBy, from, to);
  const usage = useQuery({
    queryKey: ['usage-page', req.path, req.query],
    queryFn: () => api<UsageAnswer>(req.path, { query: req.query }),
    enabled: !rangeError,
  });

  return (
    <Page
      title="Usage"
      description="Requests and tokens recorded for chat calls on /v1 (UTC days). New requests appear within a few seconds."
      actions={
        usage.data && usage.data.rows.length > 0 ? (
          <Button onClick={() => downloadText(`usage-${groupBy}-${from}${to ? `-${to}` : ''}.csv`, usageCsv(usage.data.rows, groupBy), 'text/csv')}>
            Export CSV
          </Button>
        ) : undefined
      }
    >
      <Section>
        <form className="filters" onSubmit={(e) => e.preventDefault()} aria-label="Usage filters">
          <TextField label="From" type="date" value={from} max={to || undefined} onChange={(e) => setFrom(e.target.value)} error={rangeError} />
          <TextField label="To (inclusive)" type="date" value={to} min={from} onChange={(e) => setTo(e.target.value)} hint="Empty: up to now" />
          <SelectField label="Group by" value={groupBy} onChange={(e) => setGroupBy(e.target.value as GroupBy)}>
            <option value="day">Day</option>
            <option value="model">Model</option>
            <option value="provider">Provider</option>
            {admin && <option value="user">User</option>}
          </SelectField>
          {admin && groupBy !== 'user' && (
            <SelectField label="Whose" value={scope} onChange={(e) => setScope(e.target.value as Scope)}>
              <option value="all">Everyone</option>
              <option value="own">Mine</option>
            </SelectField>
          )}
          <div className="filter-presets" role="group" aria-label="Quick ranges">
            {[7, 30, 90].map((d) => (
              <Button
                key={d}
                small
                variant="ghost"
                onClick={() => {
                  setFrom(utcDate(-(d - 1)));
                  setTo('');
                }}
              >
                Last {d} days
              </Button>
            ))}
          </div>
        </form>
      </Section>
      {!rangeError && (
        <QueryView query={usage} loadingLabel="Loading usage…">
          {(d) =>
            d.rows.length === 0 ? (
              <Section>
                <Empty title="No usage in this range">Requests made with your API keys show up here.</Empty>
              </Section>
            ) : (
              <>
                <Section title={groupBy === 'day' ? 'Per day' : `Total tokens by ${groupBy}`}>
                  {groupBy === 'day' ? <DayChart rows={d.rows} from={from} to={to} /> : <Bars rows={d.rows} groupBy={groupBy} />}
                </Section>
                <Section title="Table">
                  <div className="table-wrap">
                    <table className="numeric">
                      <thead>
                        <tr>
                          <th scope="col">{groupBy === 'day' ? 'Day' : groupBy[0]!.toUpperCase() + groupBy.slice(1)}</th>
                          {COLUMNS.map((c) => (
                            <th scope="col" key={c.key}>
                              {c.label}
                            </th>
                          ))}
                        </tr>
                      </thead>
                      <tbody>
                        {d.rows.map((r, i) => (
                          <tr key={`${rowName(r, groupBy)}-${i}`}>
                            <th scope="row">{rowName(r, groupBy)}</th>
                            {COLUMNS.map((c) => (
                              <td key={c.key}>{cell(c, r[c.key])}</td>
                            ))}
                          </tr>
                        ))}
                      </tbody>
                      <tfoot>
                        <tr>
                          <th scope="row">Total</th>
                          {COLUMNS.map((c) => (
                            <td key={c.key}>
                              {cell(c, d.totals[c.key as keyof typeof d.totals])}
                            </td>
                          ))}
                        </tr>
                      </tfoot>
                    </table>
                  </div>
                </Section>
              </>
            )
          }
        </QueryView>
      )}
    </Page>
  );
}
