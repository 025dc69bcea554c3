// Change the password: forced after an admin reset (must_change_password),
// and available from the console (/account) at any time.

import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { api, errorMessage } from '../../api/client';
import { meKey, useMe, useStatus } from '../../api/session';
import { AuthFrame } from '../../components/AuthFrame';
import { Button, Notice, Page, Section, TextField } from '../../components/ui';
import { passwordProblem, PASSWORD_MIN } from '../../lib/validate';

interface Errors {
  current?: string;
  next?: string;
  confirm?: string;
}

export function validatePasswordChange(v: { current: string; next: string; confirm: string }, email?: string): Errors {
  const e: Errors = {};
  if (!v.current) e.current = 'Enter your current password.';
  const p = passwordProblem(v.next, email);
  if (p) e.next = p;
  else if (v.next === v.current) e.next = 'The new password must differ from the current one.';
  if (!e.next && v.confirm !== v.next) e.confirm = 'The two passwords differ.';
  return e;
}

function PasswordForm({ forced }: { forced: boolean }) {
  const me = useMe();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [confirm, setConfirm] = useState('');
  const [errors, setErrors] = useState<Errors>({});
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);

  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    const e = validatePasswordChange({ current, next, confirm }, me.data?.email);
    setErrors(e);
    if (Object.keys(e).length) return;
    setBusy(true);
    setError(null);
    try {
      await api('/auth/password/change', {
        method: 'POST',
        body: { current_password: current, new_password: next },
      });
      setCurrent('');
      setNext('');
      setConfirm('');
      await queryClient.invalidateQueries({ queryKey: meKey });
      if (forced) navigate('/', { replace: true });
      else setDone(true);
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} noValidate className="stack form-narrow">
      {done && <Notice tone="success">Password changed. Your other sessions were signed out.</Notice>}
      {error && <Notice tone="error">{error}</Notice>}
      <TextField
        label={forced ? 'Temporary password' : 'Current password'}
        type="password"
        autoComplete="current-password"
        value={current}
        onChange={(e) => setCurrent(e.target.value)}
        error={errors.current}
        autoFocus={forced}
      />
      <TextField
        label="New password"
        type="password"
        autoComplete="new-password"
        value={next}
        onChange={(e) => setNext(e.target.value)}
        hint={`At least ${PASSWORD_MIN} characters, not your email address.`}
        error={errors.next}
      />
      <TextField
        label="Repeat the new password"
        type="password"
        autoComplete="new-password"
        value={confirm}
        onChange={(e) => setConfirm(e.target.value)}
        error={errors.confirm}
      />
      <Button type="submit" variant="primary" busy={busy}>
        Change password
      </Button>
    </form>
  );
}

export default function ChangePassword() {
  const location = useLocation();
  const status = useStatus();
  const me = useMe();
  const forced = location.pathname === '/change-password';
  if (forced) {
    return (
      <AuthFrame title="Choose a new password">
        <p className="muted">
          An administrator set a temporary password for your account. Choose your own before you continue.
        </p>
        <PasswordForm forced />
      </AuthFrame>
    );
  }
  return (
    <Page title="Account" description={me.data ? `Signed in as ${me.data.email}.` : undefined}>
      <Section title="Password">
        {me.data?.auth_method === 'sso' ? (
          <p className="muted">This session signed in by single sign-on; your identity provider manages your password.</p>
        ) : (
          <>
            <p className="muted small">Other sessions of your account are signed out when you change it.</p>
            <PasswordForm forced={false} />
          </>
        )}
      </Section>
      {status.data?.auth_google_enabled && (
        <Section title="Single sign-on">
          <p className="muted small">
            Link the identity provider’s account with the same email address, to sign in with single sign-on as well.
          </p>
          <a className="btn btn-secondary" href="/_ui/api/auth/google/link">
            Link single sign-on
          </a>
        </Section>
      )}
    </Page>
  );
}
