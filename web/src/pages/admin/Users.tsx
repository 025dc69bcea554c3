// Admin: the users of the gateway, with create, role change, password reset
// and delete; a row links to the user's detail.

import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link } from 'react-router';
import { api } from '../../api/client';
import { useMe } from '../../api/session';
import type { UserList } from '../../api/types';
import { Badge, Empty, Page, QueryView, Section } from '../../components/ui';
import { fmtDateTime, fmtRelative } from '../../lib/format';
import { CreateUserButton, DeleteUserButton, ResetPasswordButton, RoleSelect, usersKey } from './userActions';

export default function Users() {
  const me = useMe();
  const users = useQuery({ queryKey: usersKey, queryFn: () => api<UserList>('/users') });
  const [filter, setFilter] = useState('');
  return (
    <Page title="Users" description="Everyone who can sign in to this gateway." actions={<CreateUserButton />}>
      <Section>
        <QueryView query={users} loadingLabel="Loading users…">
          {(d) => {
            const rows = d.users.filter((u) => u.email.toLowerCase().includes(filter.trim().toLowerCase()));
            return (
              <>
                {d.users.length > 8 && (
                  <div className="toolbar">
                    <label className="sr-only" htmlFor="user-filter">
                      Filter by email
                    </label>
                    <input id="user-filter" type="search" placeholder="Filter by email" value={filter} onChange={(e) => setFilter(e.target.value)} />
                    <span className="muted small">
                      {rows.length} of {d.count}
                    </span>
                  </div>
                )}
                {rows.length === 0 ? (
                  <Empty title="No user matches" />
                ) : (
                  <div className="table-wrap">
                    <table>
                      <thead>
                        <tr>
                          <th scope="col">Email</th>
                          <th scope="col">Role</th>
                          <th scope="col">Sign-in</th>
                          <th scope="col">State</th>
                          <th scope="col">Last sign-in</th>
                          <th scope="col">
                            <span className="sr-only">Actions</span>
                          </th>
                        </tr>
                      </thead>
                      <tbody>
                        {rows.map((u) => (
                          <tr key={u.id}>
                            <td>
                              <Link to={`/admin/users/${u.id}`}>{u.email}</Link>
                              {u.id === me.data?.user_id && <span className="muted small"> (you)</span>}
                            </td>
                            <td>
                              <RoleSelect user={u} selfId={me.data?.user_id} />
                            </td>
                            <td>
                              {u.auth_method === 'sso' ? 'SSO' : 'Password'}
                              {u.sso_linked && u.auth_method !== 'sso' && <span className="muted small"> + SSO</span>}
                            </td>
                            <td className="badges">
                              {u.auth_method === 'password' &&
                                (u.totp_enabled ? <Badge tone="good">2FA on</Badge> : <Badge tone="warn">2FA pending</Badge>)}
                              {u.must_change_password && <Badge tone="warn">must change password</Badge>}
                            </td>
                            <td title={fmtDateTime(u.last_login_at)}>{u.last_login_at ? fmtRelative(u.last_login_at) : <span className="muted">never</span>}</td>
                            <td className="actions">
                              <ResetPasswordButton user={u} />
                              <DeleteUserButton user={u} selfId={me.data?.user_id} />
                            </td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                )}
              </>
            );
          }}
        </QueryView>
      </Section>
    </Page>
  );
}
