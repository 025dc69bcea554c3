import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderRoutes } from '../test/utils';
import { Gate, RequireAdmin } from './Gate';
import { Shell } from './Shell';

const STATUS = { setup_complete: true, mode: 'full', version: '1.2.3', auth_google_enabled: false, auth_password_enabled: true };
const USER = { user_id: 'u', email: 'bob@example.com', role: 'User', auth_method: 'password', totp_enabled: true, must_change_password: false };

function app(path: string) {
  return renderRoutes(
    [
      { path: '/login', element: <p>login page</p> },
      { path: '/setup', element: <p>setup page</p> },
      {
        element: <Gate />,
        children: [
          { path: '/setup-2fa', element: <p>2fa page</p> },
          { path: '/change-password', element: <p>password page</p> },
          {
            element: <Shell />,
            children: [
              { index: true, element: <p>overview page</p> },
              { path: 'admin', element: <RequireAdmin />, children: [{ path: 'users', element: <p>users page</p> }] },
            ],
          },
        ],
      },
    ],
    path,
  );
}

describe('gate', () => {
  it('sends a signed-out visitor to sign-in with the way back', async () => {
    mockFetch({
      'GET /_ui/api/status': { body: STATUS },
      'GET /_ui/api/auth/me': { status: 401, body: { error: { message: 'no session', type: 'auth_error' } } },
    });
    const { router } = app('/admin/users?x=1');
    expect(await screen.findByText('login page')).toBeInTheDocument();
    expect(router.state.location.search).toBe('?next=%2Fadmin%2Fusers%3Fx%3D1');
  });

  it('sends a fresh gateway to setup', async () => {
    mockFetch({
      'GET /_ui/api/status': { body: { ...STATUS, setup_complete: false } },
      'GET /_ui/api/auth/me': { status: 401, body: { error: { message: 'no session', type: 'auth_error' } } },
    });
    app('/');
    expect(await screen.findByText('setup page')).toBeInTheDocument();
  });

  it('forces the password change first, then 2FA enrolment', async () => {
    mockFetch({ 'GET /_ui/api/status': { body: STATUS }, 'GET /_ui/api/auth/me': { body: { ...USER, must_change_password: true, totp_enabled: false } } });
    app('/');
    expect(await screen.findByText('password page')).toBeInTheDocument();
  });

  it('forces 2FA enrolment for a password account without it', async () => {
    mockFetch({ 'GET /_ui/api/status': { body: STATUS }, 'GET /_ui/api/auth/me': { body: { ...USER, totp_enabled: false } } });
    app('/admin/users');
    expect(await screen.findByText('2fa page')).toBeInTheDocument();
  });

  it('never shows admin navigation to a user, and says "not allowed" on admin pages', async () => {
    mockFetch({ 'GET /_ui/api/status': { body: STATUS }, 'GET /_ui/api/auth/me': { body: USER } });
    app('/admin/users');
    expect(await screen.findByText('Not allowed')).toBeInTheDocument();
    expect(screen.queryByText('users page')).toBeNull();
    expect(screen.queryByText('Administration')).toBeNull();
    expect(screen.queryByRole('link', { name: 'Users' })).toBeNull();
    expect(screen.getByRole('link', { name: 'API keys' })).toBeInTheDocument();
  });

  it('shows admin navigation and pages to an admin', async () => {
    mockFetch({ 'GET /_ui/api/status': { body: STATUS }, 'GET /_ui/api/auth/me': { body: { ...USER, role: 'Admin' } } });
    app('/admin/users');
    expect(await screen.findByText('users page')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Configuration' })).toBeInTheDocument();
  });
});
