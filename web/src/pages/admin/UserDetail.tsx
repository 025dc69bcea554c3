// Admin: one user's account, their usage over 30 days, and the actions.

import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams } from 'react-router';
import { api } from '../../api/client';
import { useMe } from '../../api/session';
import type { UsageAnswer, User } from '../../api/types';
import { Badge, Page, QueryView, Section } from '../../components/ui';
import { fmtDateTime, fmtInt, fmtMs, utcDate } from '../../lib/format';
import { DeleteUserButton, ResetPasswordButton, RoleSelect } from './userActions';
import { UserLimitsForm } from './UserLimits';

export default function UserDetail() {
  const { id = '' } = useParams();
  const me = useMe();
  const navigate = useNavigate();
  const user = useQuery({ queryKey: ['user', id], queryFn: () => api<User>(`/users/${encodeURIComponent(id)}`) });
  const usage = useQuery({
    queryKey: ['usage', 'user', id],
    queryFn: () => api<UsageAnswer>('/admin/usage', { query: { user_id: id, from: utcDate(-29), group_by: 'model' } }),
  });
  return (
    <Page title={user.data?.email ?? 'User'} description={<Link to="/admin/users">← All users</Link>}>
      <QueryView query={user} loadingLabel="Loading the user…">
        {(u) => (
          <>
            <Section
              title="Account"
              actions={
                <>
                  <ResetPasswordButton user={u} />
                  <DeleteUserButton user={u} selfId={me.data?.user_id} onDeleted={() => navigate('/admin/users')} />
                </>
              }
            >
              <dl className="kv">
                <dt>Email</dt>
                <dd>{u.email}</dd>
                <dt>Role</dt>
                <dd>
                  <RoleSelect user={u} selfId={me.data?.user_id} />
                </dd>
                <dt>Sign-in</dt>
                <dd>
                  {u.auth_method === 'sso' ? 'Single sign-on' : 'Password'}
                  {u.sso_linked ? ' · SSO identity linked' : ''}
                </dd>
                <dt>Two-factor</dt>
                <dd>{u.auth_method === 'sso' ? 'by the identity provider' : u.totp_enabled ? <Badge tone="good">on</Badge> : <Badge tone="warn">not yet enrolled</Badge>}</dd>
                <dt>Password</dt>
                <dd>{u.must_change_password ? <Badge tone="warn">must be changed at next sign-in</Badge> : '—'}</dd>
                <dt>Created</dt>
                <dd>{fmtDateTime(u.created_at)}</dd>
                <dt>Last sign-in</dt>
                <dd>{fmtDateTime(u.last_login_at)}</dd>
                <dt>Id</dt>
                <dd className="mono small">{u.id}</dd>
              </dl>
            </Section>
            <Section title="Limits">
              <p className="muted">A budget and rate limits for all of this user&apos;s keys together; each key may have its own besides.</p>
              <UserLimitsForm userId={u.id} />
            </Section>
            <Section title="Usage, last 30 days, by model">
              <QueryView query={usage}>
                {(d) =>
                  d.rows.length === 0 ? (
                    <p className="muted">No requests in the last 30 days.</p>
                  ) : (
                    <div className="table-wrap">
                      <table className="numeric">
                        <thead>
                          <tr>
                            <th scope="col">Model</th>
                            <th scope="col">Requests</th>
                            <th scope="col">Errors</th>
                            <th scope="col">Tokens</th>
                            <th scope="col">Avg latency</th>
                          </tr>
                        </thead>
                        <tbody>
                          {d.rows.map((r, i) => (
                            <tr key={i}>
                              <th scope="row">{r.group || '(refused before routing)'}</th>
                              <td>{fmtInt(r.requests)}</td>
                              <td>{fmtInt(r.errors)}</td>
                              <td>{fmtInt(r.total_tokens)}</td>
                              <td>{fmtMs(r.avg_latency_ms)}</td>
                            </tr>
                          ))}
                        </tbody>
                      </table>
                    </div>
                  )
                }
              </QueryView>
            </Section>
          </>
        )}
      </QueryView>
    </Page>
  );
}
