// Forced 2FA enrollment for password accounts (/setup-2fa): the QR code and
// secret, a code to verify, then the eight recovery codes shown this once
// (copy and download) before going on.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import { api, errorMessage } from '../../api/client';
import { meKey, useMe } from '../../api/session';
import type { TwoFactorSetup as Enrollment, TwoFactorVerified } from '../../api/types';
import { AuthFrame } from '../../components/AuthFrame';
import { Button, Checkbox, CopyButton, ErrorNotice, Loading, Notice, TextField } from '../../components/ui';
import { downloadText } from '../../lib/download';
import { totpProblem } from '../../lib/validate';

function groupSecret(secret: string): string {
  return secret.replace(/(.{4})/g, '$1 ').trim();
}

export function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const [saved, setSaved] = useState(false);
  const text = codes.join('\n');
  return (
    <div className="stack">
      <Notice tone="success">Two-factor authentication is on.</Notice>
      <p>
        These are your <strong>recovery codes</strong>. Each one signs you in once if you lose your authenticator.
        They are shown <strong>only now</strong>: save them somewhere safe.
      </p>
      <ol className="codes" aria-label="Recovery codes">
        {codes.map((c) => (
          <li key={c} className="mono">
            {c}
          </li>
        ))}
      </ol>
      <div className="row">
        <CopyButton text={text} label="Copy all" small={false} />
        <Button onClick={() => downloadText('gateway-recovery-codes.txt', `${text}\n`)}>Download .txt</Button>
      </div>
      <Checkbox label="I have saved my recovery codes" checked={saved} onChange={(e) => setSaved(e.target.checked)} />
      <Button variant="primary" disabled={!saved} onClick={onDone}>
        Continue to the console
      </Button>
    </div>
  );
}

export default function TwoFactorSetup() {
  const me = useMe();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const [codes, setCodes] = useState<string[] | null>(null);
  const [code, setCode] = useState('');
  const [codeError, setCodeError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const alreadyOn = me.data?.totp_enabled === true && codes === null;

  // Each GET makes a new secret: fetch once, never in the background.
  const enrollment = useQuery({
    queryKey: ['2fa-setup'],
    queryFn: () => api<Enrollment>('/auth/2fa/setup'),
    enabled: !alreadyOn,
    staleTime: Infinity,
    gcTime: 0,
    refetchOnWindowFocus: false,
    refetchOnReconnect: false,
    retry: false,
  });

  const done = async () => {
    await queryClient.invalidateQueries({ queryKey: meKey });
    navigate('/', { replace: true });
  };

  if (codes) {
    return (
      <AuthFrame title="Save your recovery codes">
        <RecoveryCodes codes={codes} onDone={() => void done()} />
      </AuthFrame>
    );
  }
  if (alreadyOn) {
    return (
      <AuthFrame title="Two-factor authentication">
        <Notice tone="info">Two-factor authentication is already on for this account.</Notice>
        <Button variant="primary" onClick={() => navigate('/')}>
          Go to the console
        </Button>
      </AuthFrame>
    );
  }

  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    const problem = totpProblem(code);
    setCodeError(problem);
    if (problem) return;
    setBusy(true);
    setError(null);
    try {
      const r = await api<TwoFactorVerified>('/auth/2fa/verify', {
        method: 'POST',
        body: { code: code.replace(/\s/g, '') },
      });
      setCodes(r.recovery_codes);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <AuthFrame title="Set up two-factor authentication" wide>
      <p className="muted">
        Password accounts on this gateway need a second factor. Scan the QR code with an authenticator app (or enter
        the secret by hand), then type the 6-digit code it shows.
      </p>
      {enrollment.isPending && <Loading label="Creating your secret…" />}
      {enrollment.isError && (
        <ErrorNotice error={enrollment.error} onRetry={() => void enrollment.refetch()} />
      )}
      {enrollment.data && (
        <div className="enroll">
          <img
            className="qr"
            src={enrollment.data.qr_code_data_url}
            alt="QR code for your authenticator app"
            width={200}
            height={200}
          />
          <div className="stack">
            <div>
              <div className="label">Secret (for manual entry)</div>
              <div className="secret-box">
                <code aria-label="TOTP secret">{groupSecret(enrollment.data.secret)}</code>
                <CopyButton text={enrollment.data.secret} />
              </div>
              <p className="field-hint">Time-based, 6 digits, 30 seconds, SHA-1.</p>
            </div>
            {error && <Notice tone="error">{error}</Notice>}
            <form onSubmit={submit} noValidate className="stack">
              <TextField
                label="Code from the app"
                name="code"
                inputMode="numeric"
                autoComplete="one-time-code"
                value={code}
                onChange={(e) => setCode(e.target.value)}
                error={codeError}
                autoFocus
              />
              <Button type="submit" variant="primary" busy={busy}>
                Verify and turn on
              </Button>
            </form>
          </div>
        </div>
      )}
      {me.data && <p className="muted small">Signed in as {me.data.email}</p>}
    </AuthFrame>
  );
}
