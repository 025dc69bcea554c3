// Admin: the identity provider for single sign-on (issuer URL, client id,
// client secret), stored through the configuration API; the redirect URI
// to register with the provider.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { Link } from 'react-router';
import { api, errorMessage } from '../../api/client';
import type { ConfigAnswer } from '../../api/types';
import { Badge, Button, ConfirmButton, Notice, Page, QueryView, SecretBox, Section, TextField } from '../../components/ui';
import { configKey } from './Config';

const MASK = '********';

export default function Sso() {
  const queryClient = useQueryClient();
  const config = useQuery({ queryKey: configKey, queryFn: () => api<ConfigAnswer>('/config') });
  const [issuer, setIssuer] = useState('');
  const [clientId, setClientId] = useState('');
  const [secret, setSecret] = useState('');
  const [errors, setErrors] = useState<{ issuer?: string; clientId?: string; secret?: string }>({});
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const v = config.data?.values;
  useEffect(() => {
    if (!v) return;
    setIssuer(String(v.sso_issuer_url ?? ''));
    setClientId(String(v.sso_client_id ?? ''));
    setSecret('');
  }, [v]);
  const hasSecret = v?.sso_client_secret === MASK;
  const publicUrl = String(v?.public_url ?? '').replace(/\/$/, '');
  const redirect = `${publicUrl || window.location.origin}/_ui/api/auth/google/callback`;

  const save = async (ev: FormEvent) => {
    ev.preventDefault();
    const e: typeof errors = {};
    if (!/^https?:\/\/\S+$/.test(issuer.trim())) e.issuer = 'Enter the issuer URL, e.g. https://accounts.google.com';
    if (!clientId.trim()) e.clientId = 'Enter the client id.';
    if (!secret && !hasSecret) e.secret = 'Enter the client secret.';
    setErrors(e);
    if (Object.keys(e).length) return;
    setBusy(true);
    setMessage(null);
    try {
      const body: Record<string, string> = { sso_issuer_url: issuer.trim(), sso_client_id: clientId.trim() };
      if (secret) body.sso_client_secret = secret;
      await api('/config', { method: 'PUT', body });
      await queryClient.invalidateQueries({ queryKey: configKey });
      await queryClient.invalidateQueries({ queryKey: ['status'] });
      setMessage({ ok: true, text: 'Saved. The sign-in page offers single sign-on now.' });
    } catch (err) {
      setMessage({ ok: false, text: errorMessage(err) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page
      title="Single sign-on"
      description={
        <>
          Sign-in through an OpenID Connect identity provider. New accounts are limited to the <Link to="/admin/domains">allowed domains</Link>.
        </>
      }
    >
      <QueryView query={config}>
        {(c) => (
          <>
            <Section title="Status">
              <div className="row">
                {c.sso_enabled ? <Badge tone="good">enabled</Badge> : <Badge tone="neutral">not configured</Badge>}
                <span className="muted small">Enabled when the issuer URL, client id and client secret are all set.</span>
              </div>
              <div className="stack">
                <p>Register this redirect URI with the identity provider:</p>
                <SecretBox value={redirect} label="Redirect URI" />
                {!publicUrl && (
                  <p className="muted small">
                    Built from this page’s address. Set <code>public_url</code> in the <Link to="/admin/config">configuration</Link> when
                    the gateway is reached under another address.
                  </p>
                )}
              </div>
            </Section>
            <Section title="Identity provider">
              <form onSubmit={save} noValidate className="stack form-narrow">
                {message && <Notice tone={message.ok ? 'success' : 'error'}>{message.text}</Notice>}
                <TextField
                  label="Issuer URL"
                  type="url"
                  value={issuer}
                  onChange={(e) => setIssuer(e.target.value)}
                  hint="Its discovery document is read from {issuer}/.well-known/openid-configuration."
                  error={errors.issuer}
                />
                <TextField label="Client id" value={clientId} onChange={(e) => setClientId(e.target.value)} error={errors.clientId} autoComplete="off" />
                <TextField
                  label="Client secret"
                  type="password"
                  autoComplete="new-password"
                  value={secret}
                  onChange={(e) => setSecret(e.target.value)}
                  placeholder={hasSecret ? 'stored: leave empty to keep it' : ''}
                  hint="Stored encrypted, never shown again."
                  error={errors.secret}
                />
                <div className="row">
                  <Button type="submit" variant="primary" busy={busy}>
                    Save
                  </Button>
                  {c.sso_enabled && (
                    <ConfirmButton
                      small={false}
                      label="Turn off single sign-on"
                      title="Turn off single sign-on?"
                      message="The three settings are removed. Accounts created by SSO cannot sign in until it is configured again."
                      confirmLabel="Turn off"
                      onConfirm={async () => {
                        await api('/config', { method: 'PUT', body: { sso_issuer_url: null, sso_client_id: null, sso_client_secret: null } });
                        await queryClient.invalidateQueries({ queryKey: configKey });
                        await queryClient.invalidateQueries({ queryKey: ['status'] });
                      }}
                    />
                  )}
                </div>
              </form>
            </Section>
          </>
        )}
      </QueryView>
    </Page>
  );
}
