// Admin: what is running — version and build, mode, database, uptime,
// where limits are counted, guardrails, replicas, pending restarts. Refreshed every 30 s while visible.

import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api } from '../../api/client';
import type { SystemInfo } from '../../api/types';
import { Badge, Page, QueryView, Section } from '../../components/ui';
import { fmtDateTime, fmtDuration, fmtRelative } from '../../lib/format';
import { pollEvery } from '../../lib/visibility';

export default function System() {
  const system = useQuery({ queryKey: ['system'], queryFn: () => api<SystemInfo>('/system'), refetchInterval: pollEvery(30_000) });
  return (
    <Page title="System" description="The gateway process answering this console.">
      <QueryView query={system}>
        {(s) => {
          const db = s.database;
          return (
            <>
              <Section title="Running">
                <dl className="kv">
                  <dt>Version</dt>
                  <dd className="mono">{s.version}</dd>
                  {s.build && (
                    <>
                      <dt>Build</dt>
                      <dd className="mono">
                        {s.build.commit ?? 'unknown commit'}
                        {s.build.built_at && <> · {fmtDateTime(s.build.built_at)}</>}
                      </dd>
                    </>
                  )}
                  <dt>Mode</dt>
                  <dd>{s.mode === 'full' ? 'Full deployment' : s.mode}</dd>
                  <dt>Database</dt>
                  <dd>
                    {db ? (db.kind === 'postgres' ? 'PostgreSQL' : db.kind === 'sqlite' ? 'SQLite' : db.kind) : '—'}
                    {db?.schema_version != null && <span className="muted"> · schema version {db.schema_version}</span>}
                  </dd>
                  <dt>Up for</dt>
                  <dd>
                    {s.uptime_secs !== undefined ? fmtDuration(s.uptime_secs) : '—'}
                    {s.started_at && <span className="muted"> · since {fmtDateTime(s.started_at)}</span>}
                  </dd>
                  {s.limits && (
                    <>
                      <dt>Rate limits and budgets</dt>
                      <dd>
                        {s.limits.counted_in === 'redis' ? 'counted in Redis, shared by every replica' : 'counted in this process (REDIS_URL is not set)'}
                        {s.limits.counted_in === 'redis' && <span className="muted"> · {s.limits.redis_round_trips} round trips</span>}
                        {s.limits.failures > 0 && (
                          <>
                            {' '}
                            <Badge tone="warn">{s.limits.failures} counter failures: requests went through unlimited</Badge>
                          </>
                        )}
                      </dd>
                    </>
                  )}
                  {s.guardrails && (
                    <>
                      <dt>Guardrails</dt>
                      <dd>
                        {s.guardrails.enabled ? 'on' : 'off'}
                        <span className="muted">
                          {' '}
                          · {s.guardrails.active_rules} {s.guardrails.active_rules === 1 ? 'rule' : 'rules'} · {s.guardrails.blocked} blocked ·{' '}
                          {s.guardrails.redacted} masked
                        </span>
                        {s.guardrails.fail_opens > 0 && (
                          <>
                            {' '}
                            <Badge tone="warn">{s.guardrails.fail_opens} checks failed open</Badge>
                          </>
                        )}
                      </dd>
                    </>
                  )}
                  <dt>Restart pending</dt>
                  <dd>
                    {s.pending_restart && s.pending_restart.length > 0 ? (
                      <>
                        <Badge tone="warn">{s.pending_restart.join(', ')}</Badge> <Link to="/admin/config">configuration</Link>
                      </>
                    ) : (
                      <span className="muted">none</span>
                    )}
                  </dd>
                </dl>
              </Section>
              {s.replicas && (
                <Section title={`Replicas (${s.replicas.length})`}>
                  <div className="table-wrap">
                    <table>
                      <thead>
                        <tr>
                          <th scope="col">Host</th>
                          <th scope="col">Version</th>
                          <th scope="col">Last seen</th>
                        </tr>
                      </thead>
                      <tbody>
                        {s.replicas.map((r) => {
                          const stale = Date.now() - Date.parse(r.last_seen) > 60_000;
                          return (
                            <tr key={r.id}>
                              <td>{r.hostname}</td>
                              <td className="mono">
                                {r.version} {r.version !== s.version && <Badge tone="warn">differs</Badge>}
                              </td>
                              <td>
                                {fmtRelative(r.last_seen)} {stale && <Badge tone="bad">not heard from</Badge>}
                              </td>
                            </tr>
                          );
                        })}
                      </tbody>
                    </table>
                  </div>
                </Section>
              )}
            </>
          );
        }}
      </QueryView>
    </Page>
  );
}
