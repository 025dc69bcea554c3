// First-run setup: the setup code from the gateway's log, and the first
// admin's email and password (POST /_ui/api/setup). Afterwards the new admin
// is signed in and goes on to enroll 2FA.

import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, errorMessage } from '../../api/client';
import { meKey, statusKey, useStatus } from '../../api/session';
import type { SignedIn } from '../../api/types';
import { AuthFrame } from '../../components/AuthFrame';
import { Button, ErrorNotice, Loading, Notice, TextField } from '../../components/ui';
import { emailProblem, passwordProblem, PASSWORD_MIN } from '../../lib/validate';

interface Errors {
  code?: string;
  email?: string;
  password?: string;
  confirm?: string;
}

export function validateSetup(v: { code: string; email: string; password: string; confirm: string }): Errors {
  const e: Errors = {};
  if (!v.code.trim()) e.code = 'Enter the setup code printed in the gateway’s log.';
  const em = emailProblem(v.email);
  if (em) e.email = em;
  const pw = passwordProblem(v.password, v.email);
  if (pw) e.password = pw;
  if (!e.password && v.confirm !== v.password) e.confirm = 'The two passwords differ.';
  return e;
}

export function Setup() {
  const status = useStatus();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [code, setCode] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [errors, setErrors] = useState<Errors>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (status.isPending) {
    return (
      <AuthFrame title="Set up the gateway">
        <Loading />
      </AuthFrame>
    );
  }
  if (status.isError) {
    return (
      <AuthFrame title="Set up the gateway">
        <ErrorNotice error={status.error} onRetry={() => void status.refetch()} />
      </AuthFrame>
    );
  }
  if (status.data.setup_complete) {
    return (
      <AuthFrame title="Set up the gateway">
        <Notice tone="info">This gateway is already set up: an administrator exists.</Notice>
        <p>
          <Link to="/login">Sign in</Link>
        </p>
      </AuthFrame>
    );
  }

  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    const e = validateSetup({ code, email, password, confirm });
    setErrors(e);
    if (Object.keys(e).length) return;
    setBusy(true);
    setError(null);
    try {
      await api<SignedIn>('/setup', {
        method: 'POST',
        body: { setup_code: code.trim(), email: email.trim(), password },
      });
      queryClient.removeQueries({ queryKey: meKey });
      await queryClient.invalidateQueries({ queryKey: statusKey });
      navigate('/', { replace: true });
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <AuthFrame title="Set up the gateway">
      <p className="muted">
        Create the first administrator. The one-time setup code is printed in the gateway’s log at start-up
        (the line that begins with “setup required”).
      </p>
      {error && <Notice tone="error">{error}</Notice>}
      <form onSubmit={submit} noValidate className="stack">
        <TextField
          label="Setup code"
          name="setup_code"
          value={code}
          onChange={(e) => setCode(e.target.value)}
          autoComplete="off"
          spellCheck={false}
          className="mono"
          error={errors.code}
          autoFocus
        />
        <TextField
          label="Administrator email"
          type="email"
          name="email"
          autoComplete="username"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          error={errors.email}
        />
        <TextField
          label="Password"
          type="password"
          name="password"
          autoComplete="new-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          hint={`At least ${PASSWORD_MIN} characters, not the email address.`}
          error={errors.password}
        />
        <TextField
          label="Repeat the password"
          type="password"
          name="confirm"
          autoComplete="new-password"
          value={confirm}
          onChange={(e) => setConfirm(e.target.value)}
          error={errors.confirm}
        />
        <Button type="submit" variant="primary" busy={busy}>
          Create administrator
        </Button>
      </form>
      <p className="muted small">Next you will set up two-factor authentication with an authenticator app.</p>
    </AuthFrame>
  );
}
