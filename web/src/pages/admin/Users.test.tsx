import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderAt } from '../../test/utils';
import Domains, { domainProblem } from './Domains';
import Users from './Users';

const ME = { user_id: 'me', email: 'admin@example.com', role: 'Admin', auth_method: 'password', totp_enabled: true, must_change_password: false };
const U = (id: string, email: string, extra = {}) => ({
  id,
  email,
  role: 'User',
  auth_method: 'password',
  totp_enabled: true,
  must_change_password: false,
  sso_linked: false,
  created_at: '2026-11-01T00:00:00Z',
  last_login_at: null,
  ...extra,
});

describe('users', () => {
  it('lists users with their state; the admin cannot delete themselves', async () => {
    mockFetch({
      'GET /_ui/api/auth/me': { body: ME },
      'GET /_ui/api/users': { body: { users: [U('me', 'admin@example.com', { role: 'Admin' }), U('b', 'bob@example.com', { totp_enabled: false, must_change_password: true })], count: 2 } },
    });
    renderAt(<Users />, '/admin/users');
    expect(await screen.findByText('2FA pending')).toBeInTheDocument();
    expect(screen.getByText('must change password')).toBeInTheDocument();
    await waitFor(() => expect(screen.getByRole('button', { name: 'Delete admin@example.com' })).toBeDisabled());
    expect(screen.getByRole('button', { name: 'Delete bob@example.com' })).toBeEnabled();
  });

  it('creates a user after checking the form', async () => {
    const { calls } = mockFetch({
      'GET /_ui/api/auth/me': { body: ME },
      'GET /_ui/api/users': { body: { users: [], count: 0 } },
      'POST /_ui/api/admin/users/create': { body: { ok: true, user_id: 'n' } },
    });
    renderAt(<Users />, '/admin/users');
    await userEvent.click(await screen.findByRole('button', { name: 'Create user' }));
    const dialog = screen.getByRole('dialog', { name: 'Create a user' });
    await userEvent.click(within(dialog).getByRole('button', { name: 'Create user' }));
    expect(within(dialog).getByText('Enter an email address.')).toBeInTheDocument();
    expect(within(dialog).getByText('Use at least 12 characters.')).toBeInTheDocument();
    await userEvent.type(within(dialog).getByLabelText('Email'), 'carol@example.com');
    await userEvent.type(within(dialog).getByLabelText('Temporary password'), 'a temporary one');
    await userEvent.selectOptions(within(dialog).getByLabelText('Role'), 'Admin');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Create user' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(calls.find((c) => c.method === 'POST')!.body).toEqual({ email: 'carol@example.com', password: 'a temporary one', role: 'Admin' });
  });

  it('changes a role and resets a password only after confirming', async () => {
    const { calls } = mockFetch({
      'GET /_ui/api/auth/me': { body: ME },
      'GET /_ui/api/users': { body: { users: [U('b', 'bob@example.com')], count: 1 } },
      'PUT /_ui/api/users/b/role': { body: U('b', 'bob@example.com', { role: 'Admin' }) },
      'POST /_ui/api/admin/users/b/reset-password': { body: { ok: true } },
    });
    renderAt(<Users />, '/admin/users');
    await userEvent.selectOptions(await screen.findByLabelText('Role of bob@example.com'), 'Admin');
    expect(calls.some((c) => c.method === 'PUT')).toBe(false);
    await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Make Admin' }));
    await waitFor(() => expect(calls.find((c) => c.method === 'PUT')?.body).toEqual({ role: 'Admin' }));
    await userEvent.click(screen.getByRole('button', { name: 'Reset the password of bob@example.com' }));
    const dialog = screen.getByRole('dialog');
    await userEvent.type(within(dialog).getByLabelText('Temporary password'), 'bob@example.com');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Reset password' }));
    expect(within(dialog).getByText('The password must not be the email address.')).toBeInTheDocument();
    await userEvent.clear(within(dialog).getByLabelText('Temporary password'));
    await userEvent.type(within(dialog).getByLabelText('Temporary password'), 'new temporary pw');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Reset password' }));
    expect(await within(dialog).findByText(/must choose a new password/)).toBeInTheDocument();
    expect(calls.find((c) => c.path.endsWith('reset-password'))!.body).toEqual({ new_password: 'new temporary pw' });
  });
});

describe('domains', () => {
  it('validates a domain', () => {
    expect(domainProblem('')).toMatch(/Enter a domain/);
    expect(domainProblem('https://example.com')).toMatch(/no scheme/);
    expect(domainProblem('@Example.COM')).toBeNull();
    expect(domainProblem('sub.example.co.uk')).toBeNull();
  });

  it('adds and removes domains (removal confirmed), empty state first', async () => {
    let domains: { domain: string; added_by: string | null; created_at: string }[] = [];
    const { calls } = mockFetch({
      'GET /_ui/api/domains': () => new Response(JSON.stringify({ domains, count: domains.length })),
      'POST /_ui/api/domains': () => {
        domains = [{ domain: 'example.com', added_by: 'me', created_at: '2026-11-24T00:00:00Z' }];
        return new Response(JSON.stringify({ ok: true, domain: 'example.com' }));
      },
      'DELETE /_ui/api/domains/example.com': () => {
        domains = [];
        return new Response(JSON.stringify({ ok: true }));
      },
    });
    renderAt(<Domains />, '/admin/domains');
    expect(await screen.findByText('No domain allowed')).toBeInTheDocument();
    await userEvent.type(screen.getByLabelText('Domain'), '@example.com');
    await userEvent.click(screen.getByRole('button', { name: 'Add' }));
    expect(await screen.findByText('example.com', { selector: 'td' })).toBeInTheDocument();
    expect(calls.find((c) => c.method === 'POST')!.body).toEqual({ domain: 'example.com' });
    await userEvent.click(screen.getByRole('button', { name: 'Remove example.com' }));
    await userEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Remove' }));
    expect(await screen.findByText('No domain allowed')).toBeInTheDocument();
  });
});
