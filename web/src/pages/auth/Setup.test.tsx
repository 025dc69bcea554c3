import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderAt } from '../../test/utils';
import { Setup, validateSetup } from './Setup';

const STATUS = { setup_complete: false, mode: 'full', version: '1', auth_google_enabled: false, auth_password_enabled: true };

describe('first-run setup', () => {
  it('validates each field', () => {
    expect(validateSetup({ code: '', email: 'x', password: 'short', confirm: '' })).toEqual({
      code: expect.stringContaining('setup code'),
      email: expect.stringContaining('valid email'),
      password: 'Use at least 12 characters.',
    });
    expect(validateSetup({ code: 'c', email: 'a@b.co', password: 'a@b.co', confirm: 'a@b.co' }).password).toBe('Use at least 12 characters.');
    expect(validateSetup({ code: 'c', email: 'admin@example.com', password: 'admin@example.com', confirm: '' }).password).toBe(
      'The password must not be the email address.',
    );
    expect(validateSetup({ code: 'c', email: 'a@b.co', password: 'long enough pw', confirm: 'other' }).confirm).toBe('The two passwords differ.');
    expect(validateSetup({ code: 'c', email: 'a@b.co', password: 'long enough pw', confirm: 'long enough pw' })).toEqual({});
  });

  it('creates the first admin with the setup code and goes on', async () => {
    const { calls } = mockFetch({
      'GET /_ui/api/status': { body: STATUS },
      'POST /_ui/api/setup': { body: { ok: true, user_id: 'u', email: 'a@example.com', role: 'Admin', must_change_password: false, needs_2fa_setup: true } },
    });
    renderAt(<Setup />, '/setup');
    await userEvent.type(await screen.findByLabelText('Setup code'), ' code-from-log ');
    await userEvent.type(screen.getByLabelText('Administrator email'), 'a@example.com');
    await userEvent.type(screen.getByLabelText('Password'), 'a long password');
    await userEvent.type(screen.getByLabelText('Repeat the password'), 'a long password');
    await userEvent.click(screen.getByRole('button', { name: 'Create administrator' }));
    expect(await screen.findByTestId('where')).toHaveTextContent(/^\/$/);
    expect(calls.find((c) => c.method === 'POST')!.body).toEqual({ setup_code: 'code-from-log', email: 'a@example.com', password: 'a long password' });
  });

  it('shows the server refusing a wrong code', async () => {
    mockFetch({
      'GET /_ui/api/status': { body: STATUS },
      'POST /_ui/api/setup': { status: 403, body: { error: { message: "wrong setup code: it is printed in the gateway's log", type: 'forbidden' } } },
    });
    renderAt(<Setup />, '/setup');
    await userEvent.type(await screen.findByLabelText('Setup code'), 'bad');
    await userEvent.type(screen.getByLabelText('Administrator email'), 'a@example.com');
    await userEvent.type(screen.getByLabelText('Password'), 'a long password');
    await userEvent.type(screen.getByLabelText('Repeat the password'), 'a long password');
    await userEvent.click(screen.getByRole('button', { name: 'Create administrator' }));
    expect(await screen.findByText(/wrong setup code/)).toBeInTheDocument();
  });

  it('says so when setup is already done', async () => {
    mockFetch({ 'GET /_ui/api/status': { body: { ...STATUS, setup_complete: true } } });
    renderAt(<Setup />, '/setup');
    expect(await screen.findByText(/already set up/)).toBeInTheDocument();
  });
});
