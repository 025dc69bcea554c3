import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderAt } from '../../test/utils';
import TwoFactorSetup from './TwoFactorSetup';

const ME = { user_id: 'u', email: 'a@example.com', role: 'Admin', auth_method: 'password', totp_enabled: false, must_change_password: false };
const CODES = ['AAAA1111BB', 'CCCC2222DD', 'EEEE3333FF', 'GGGG4444HH', 'JJJJ5555KK', 'LLLL6666MM', 'NNNN7777PP', 'QQQQ8888RR'];

describe('2FA enrolment', () => {
  it('shows the QR code and secret, verifies, then the 8 recovery codes once', async () => {
    const { calls } = mockFetch({
      'GET /_ui/api/auth/me': { body: ME },
      'GET /_ui/api/auth/2fa/setup': { body: { secret: 'JBSWY3DPEHPK3PXP', otpauth_uri: 'otpauth://totp/x', qr_code_data_url: 'data:image/svg+xml;base64,PHN2Zy8+' } },
      'POST /_ui/api/auth/2fa/verify': { body: { ok: true, recovery_codes: CODES } },
    });
    renderAt(<TwoFactorSetup />, '/setup-2fa');
    expect(await screen.findByRole('img', { name: 'QR code for your authenticator app' })).toHaveAttribute('src', 'data:image/svg+xml;base64,PHN2Zy8+');
    expect(screen.getByLabelText('TOTP secret')).toHaveTextContent('JBSW Y3DP EHPK 3PXP');
    await userEvent.type(screen.getByLabelText('Code from the app'), '12345');
    await userEvent.click(screen.getByRole('button', { name: 'Verify and turn on' }));
    expect(screen.getByText('Enter the 6-digit code from your authenticator app.')).toBeInTheDocument();
    await userEvent.type(screen.getByLabelText('Code from the app'), '6');
    await userEvent.click(screen.getByRole('button', { name: 'Verify and turn on' }));
    const list = await screen.findByRole('list', { name: 'Recovery codes' });
    expect(within(list).getAllByRole('listitem').map((li) => li.textContent)).toEqual(CODES);
    expect(screen.getByRole('button', { name: 'Copy all' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Download .txt' })).toBeInTheDocument();
    const go = screen.getByRole('button', { name: 'Continue to the console' });
    expect(go).toBeDisabled();
    await userEvent.click(screen.getByLabelText('I have saved my recovery codes'));
    await userEvent.click(go);
    expect(await screen.findByTestId('where')).toHaveTextContent(/^\/$/);
    expect(calls.filter((c) => c.path === '/_ui/api/auth/2fa/setup')).toHaveLength(1);
    expect(calls.find((c) => c.method === 'POST')!.body).toEqual({ code: '123456' });
  });

  it('shows the server refusing a wrong code', async () => {
    mockFetch({
      'GET /_ui/api/auth/me': { body: ME },
      'GET /_ui/api/auth/2fa/setup': { body: { secret: 'S', otpauth_uri: 'o', qr_code_data_url: 'data:,' } },
      'POST /_ui/api/auth/2fa/verify': { status: 400, body: { error: { message: 'code: not the current code of the authenticator', type: 'validation_error' } } },
    });
    renderAt(<TwoFactorSetup />, '/setup-2fa');
    await userEvent.type(await screen.findByLabelText('Code from the app'), '000000');
    await userEvent.click(screen.getByRole('button', { name: 'Verify and turn on' }));
    expect(await screen.findByText('code: not the current code of the authenticator')).toBeInTheDocument();
  });
});
