// Sign-in: password, then a TOTP or recovery code when 2FA is on; the SSO
// button when an identity provider is configured; a live countdown while
// the email is locked after repeated failures (423 retry_after_secs).

import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Navigate, useNavigate, useSearchParams } from 'react-router';
import { api, ApiError, errorMessage } from '../../api/client';
import { meKey, safeNext, useMe, useStatus } from '../../api/session';
import type { LoginAnswer, SignedIn } from '../../api/types';
import { AuthFrame } from '../../components/AuthFrame';
import { Button, Notice, TextField } from '../../components/ui';
import { useCountdown } from '../../lib/countdown';
import { fmtDuration } from '../../lib/format';
import { emailProblem } from '../../lib/validate';

const SSO_ERRORS: Record<string, string> = {
  sso_not_configured: 'Single sign-on is not configured on this gateway.',
  sso_bad_request: 'The identity provider sent an answer the gateway could not use. Try again.',
  sso_unavailable: 'The identity provider could not be reached. Try again in a moment.',
  sso_denied: 'The identity provider refused the sign-in.',
  sso_state_invalid: 'The sign-in took too long or was started in another browser. Try again.',
  sso_exchange_failed: 'The identity provider refused the sign-in code. Try again.',
  sso_token_invalid: 'The identity provider sent a token the gateway could not verify.',
  sso_email_unverified: 'The identity provider has not verified your email address.',
  sso_domain_not_allowed: 'Your email domain is not on the allowlist of this gateway. Ask an administrator to add it.',
  sso_link_refused: 'That identity cannot be linked to this account.',
  sso_internal_error: 'The gateway failed while signing you in. Try again; the server log has the details.',
};

function ssoErrorText(code: string): string {
  return SSO_ERRORS[code] ?? `Single sign-on failed (${code.replace(/_/g, ' ')}). Try again or use your password.`;
}

export function Login() {
  const [params] = useSearchParams();
  const next = safeNext(params.get('next'));
  const ssoError = params.get('error');
  const status = useStatus();
  const me = useMe();
  const navigate = useNavigate();
  const queryClient = useQueryClient();

  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [loginToken, setLoginToken] = useState<string | null>(null);
  const [code, setCode] = useState('');
  const [useRecovery, setUseRecovery] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [fieldErrors, setFieldErrors] = useState<{ email?: string; password?: string; code?: string }>({});
  const [lockedUntil, setLockedUntil] = useState<number | null>(null);
  const lockLeft = useCountdown(lockedUntil);
  const locked = lockLeft !== null && lockLeft > 0;

  if (status.data && !status.data.setup_complete) return <Navigate to="/setup" replace />;
  // Already signed in (e.g. the back button): go on instead of asking again.
  if (me.data && !loginToken) return <Navigate to={next} replace />;

  const finish = async (answer: SignedIn) => {
    queryClient.removeQueries({ queryKey: meKey });
    await queryClient.invalidateQueries({ queryKey: ['status'] });
    void answer;
    navigate(next, { replace: true });
  };

  const handleError = (e: unknown) => {
    if (e instanceof ApiError && e.status === 423) {
      const secs = Number((e.body as { retry_after_secs?: unknown } | null)?.retry_after_secs);
      setLockedUntil(Date.now() + (Number.isFinite(secs) && secs > 0 ? secs : 900) * 1000);
      setError(null);
      return;
    }
    if (e instanceof ApiError && e.status === 401) {
      setError(loginToken ? 'That code is not valid. Check it and try again.' : 'Wrong email or password.');
      return;
    }
    setError(errorMessage(e));
  };

  const submitPassword = async (ev: FormEvent) => {
    ev.preventDefault();
    const errs = {
      email: emailProblem(email) ?? undefined,
      password: password ? undefined : 'Enter your password.',
    };
    setFieldErrors(errs);
    if (errs.email || errs.password) return;
    setBusy(true);
    setError(null);
    try {
      const answer = await api<LoginAnswer>('/auth/login', {
        method: 'POST',
        body: { email: email.trim(), password },
        allow401: true,
      });
      if ('needs_2fa' in answer) {
        setLoginToken(answer.login_token);
        setPassword('');
      } else {
        await finish(answer);
      }
    } catch (e) {
      handleError(e);
    } finally {
      setBusy(false);
    }
  };

  const submitCode = async (ev: FormEvent) => {
    ev.preventDefault();
    const c = code.trim().replace(/\s/g, useRecovery ? '' : '');
    const problem = !c
      ? useRecovery
        ? 'Enter one of your recovery codes.'
        : 'Enter the 6-digit code from your authenticator app.'
      : !useRecovery && !/^\d{6}$/.test(c.replace(/\s/g, ''))
        ? 'The code has 6 digits.'
        : null;
    setFieldErrors({ code: problem ?? undefined });
    if (problem) return;
    setBusy(true);
    setError(null);
    try {
      const answer = await api<SignedIn>('/auth/login/2fa', {
        method: 'POST',
        body: { login_token: loginToken, code: useRecovery ? c : c.replace(/\s/g, '') },
        allow401: true,
      });
      await finish(answer);
    } catch (e) {
      handleError(e);
    } finally {
      setBusy(false);
    }
  };

  const lockNotice = locked && (
    <Notice tone="warning" role="alert">
      <strong>Sign-in is locked for this email</strong>
      <p>
        Too many failed attempts. Try again in <span className="mono">{fmtDuration(lockLeft)}</span>.
      </p>
    </Notice>
  );

  if (loginToken) {
    return (
      <AuthFrame title="Two-factor authentication">
        <form onSubmit={submitCode} noValidate className="stack">
          <p className="muted">
            {useRecovery
              ? 'Enter one of the recovery codes you saved when you set up two-factor authentication. Each code works once.'
              : 'Enter the 6-digit code your authenticator app shows for this gateway.'}
          </p>
          {lockNotice}
          {error && <Notice tone="error">{error}</Notice>}
          <TextField
            label={useRecovery ? 'Recovery code' : 'Authentication code'}
            name="code"
            value={code}
            onChange={(e) => setCode(e.target.value)}
            autoComplete="one-time-code"
            inputMode={useRecovery ? 'text' : 'numeric'}
            autoFocus
            error={fieldErrors.code}
          />
          <Button type="submit" variant="primary" busy={busy} disabled={locked}>
            Verify
          </Button>
          <div className="row-between">
            <button
              type="button"
              className="linklike"
              onClick={() => {
                setUseRecovery((r) => !r);
                setCode('');
                setFieldErrors({});
              }}
            >
              {useRecovery ? 'Use the authenticator app instead' : 'Use a recovery code instead'}
            </button>
            <button
              type="button"
              className="linklike"
              onClick={() => {
                setLoginToken(null);
                setCode('');
                setError(null);
              }}
            >
              Start over
            </button>
          </div>
        </form>
      </AuthFrame>
    );
  }

  return (
    <AuthFrame title="Sign in">
      {ssoError && <Notice tone="error">{ssoErrorText(ssoError)}</Notice>}
      {lockNotice}
      {error && <Notice tone="error">{error}</Notice>}
      <form onSubmit={submitPassword} noValidate className="stack">
        <TextField
          label="Email"
          type="email"
          name="email"
          autoComplete="username"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={fieldErrors.email}
          autoFocus
        />
        <TextField
          label="Password"
          type="password"
          name="password"
          autoComplete="current-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          error={fieldErrors.password}
        />
        <Button type="submit" variant="primary" busy={busy} disabled={locked}>
          Sign in
        </Button>
      </form>
      {status.data?.auth_google_enabled && (
        <>
          <div className="divider">
            <span>or</span>
          </div>
          <a className="btn btn-secondary btn-block" href="/_ui/api/auth/google">
            Sign in with single sign-on
          </a>
        </>
      )}
    </AuthFrame>
  );
}
