// Client-side checks that mirror the gateway's rules, so a form says what is
// wrong before sending (the server checks again and its message is shown).

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 128;

export function passwordProblem(password: string, email?: string): string | null {
  if (password.length < PASSWORD_MIN) return `Use at least ${PASSWORD_MIN} characters.`;
  if (password.length > PASSWORD_MAX) return `Use at most ${PASSWORD_MAX} characters.`;
  if (email && password.trim().toLowerCase() === email.trim().toLowerCase())
    return 'The password must not be the email address.';
  return null;
}

export function emailProblem(email: string): string | null {
  const e = email.trim();
  if (!e) return 'Enter an email address.';
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(e)) return 'Enter a valid email address, like name@example.com.';
  return null;
}

/** A TOTP code: six digits (spaces allowed while typing). */
export function totpProblem(code: string): string | null {
  const c = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(c)) return 'Enter the 6-digit code from your authenticator app.';
  return null;
}
