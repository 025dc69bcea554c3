import { act, fireEvent, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { json, mockFetch, renderAt } from '../../test/utils';
import { Login } from './Login';

const STATUS = { setup_complete: true, mode: 'full', version: '1', auth_google_enabled: false, auth_password_enabled: true };
const OK = { ok: true, user_id: 'u', email: 'a@example.com', role: 'Admin', must_change_password: false, needs_2fa_setup: false };

afterEach(() => vi.useRealTimers());

describe('sign-in', () => {
  it('says what is missing before sending anything', async () => {
    const { calls } = mockFetch({ 'GET /_ui/api/status': { body: STATUS } });
    renderAt(<Login />, '/login');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(screen.getByText('Enter an email address.')).toBeInTheDocument();
    expect(screen.getByText('Enter your password.')).toBeInTheDocument();
    expect(screen.getByLabelText('Email')).toHaveAttribute('aria-invalid', 'true');
    expect(calls.filter((c) => c.method === 'POST')).toHaveLength(0);
  });

  it('shows a wrong password without leaving the page', async () => {
    mockFetch({
      'GET /_ui/api/status': { body: STATUS },
      'POST /_ui/api/auth/login': { status: 401, body: { error: { message: 'invalid credentials', type: 'auth_error' } } },
    });
    renderAt(<Login />, '/login');
    await userEvent.type(screen.getByLabelText('Email'), 'a@example.com');
    await userEvent.type(screen.getByLabelText('Password'), 'nope');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Wrong email or password.')).toBeInTheDocument();
    expect(screen.queryByTestId('where')).toBeNull();
  });

  it('asks for the TOTP code, then goes where the user was', async () => {
    const { calls } = mockFetch({
      'GET /_ui/api/status': { body: STATUS },
      'POST /_ui/api/auth/login': { body: { needs_2fa: true, login_token: 'tok-1' } },
      'POST /_ui/api/auth/login/2fa': { body: OK },
    });
    renderAt(<Login />, '/login?next=%2Fusage%3Ffrom%3D2026-01-01', '/login');
    await userEvent.type(screen.getByLabelText('Email'), 'a@example.com');
    await userEvent.type(screen.getByLabelText('Password'), 'right password');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    const code = await screen.findByLabelText('Authentication code');
    await userEvent.click(screen.getByRole('button', { name: 'Verify' }));
    expect(screen.getByText('Enter the 6-digit code from your authenticator app.')).toBeInTheDocument();
    await userEvent.type(code, '123 456');
    await userEvent.click(screen.getByRole('button', { name: 'Verify' }));
    expect(await screen.findByTestId('where')).toHaveTextContent('/usage?from=2026-01-01');
    expect(calls.find((c) => c.path === '/_ui/api/auth/login/2fa')!.body).toEqual({ login_token: 'tok-1', code: '123456' });
  });

  it('accepts a recovery code instead', async () => {
    const { calls } = mockFetch({
      'GET /_ui/api/status': { body: STATUS },
      'POST /_ui/api/auth/login': { body: { needs_2fa: true, login_token: 't' } },
      'POST /_ui/api/auth/login/2fa': { body: OK },
    });
    renderAt(<Login />, '/login');
    await userEvent.type(screen.getByLabelText('Email'), 'a@example.com');
    await userEvent.type(screen.getByLabelText('Password'), 'pw');
    await userEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await userEvent.click(await screen.findByRole('button', { name: 'Use a recovery code instead' }));
    await userEvent.type(screen.getByLabelText('Recovery code'), 'ABCD2345EF');
    await userEvent.click(screen.getByRole('button', { name: 'Verify' }));
    await screen.findByTestId('where');
    expect(calls.find((c) => c.path === '/_ui/api/auth/login/2fa')!.body).toEqual({ login_token: 't', code: 'ABCD2345EF' });
  });

  it('shows the lockout with a live countdown and blocks sign-in until it ends', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    mockFetch({
      'GET /_ui/api/status': { body: STATUS },
      'POST /_ui/api/auth/login': () =>
        json(423, { error: { message: 'too many failed sign-in attempts', type: 'account_locked' }, retry_after_secs: 65 }),
    });
    renderAt(<Login />, '/login');
    fireEvent.change(screen.getByLabelText('Email'), { target: { value: 'a@example.com' } });
    fireEvent.change(screen.getByLabelText('Password'), { target: { value: 'x' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByText('Sign-in is locked for this email')).toBeInTheDocument();
    expect(screen.getByText('1 min 05 s')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeDisabled();
    await act(() => vi.advanceTimersByTimeAsync(6000));
    expect(screen.getByText('59 s')).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(60_000));
    await waitFor(() => expect(screen.queryByText('Sign-in is locked for this email')).toBeNull());
    expect(screen.getByRole('button', { name: 'Sign in' })).toBeEnabled();
  });

  it('offers single sign-on only when the gateway has it', async () => {
    mockFetch({ 'GET /_ui/api/status': { body: { ...STATUS, auth_google_enabled: true } } });
    renderAt(<Login />, '/login?error=sso_domain_not_allowed', '/login');
    expect(await screen.findByRole('link', { name: 'Sign in with single sign-on' })).toHaveAttribute('href', '/_ui/api/auth/google');
    expect(screen.getByText(/not on the allowlist/)).toBeInTheDocument();
  });

  it('sends a fresh gateway to setup', async () => {
    mockFetch({ 'GET /_ui/api/status': { body: { ...STATUS, setup_complete: false } } });
    renderAt(<Login />, '/login');
    expect(await screen.findByTestId('where')).toHaveTextContent('/setup');
  });

  it('sends an already signed-in user on', async () => {
    mockFetch({
      'GET /_ui/api/status': { body: STATUS },
      'GET /_ui/api/auth/me': { body: { user_id: 'u', email: 'a@example.com', role: 'User', auth_method: 'password', totp_enabled: true, must_change_password: false } },
    });
    renderAt(<Login />, '/login?next=%2Fkeys', '/login');
    expect(await screen.findByTestId('where')).toHaveTextContent('/keys');
  });
});
