// Admin: the SSO domain allowlist (who may create an account by SSO).

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api, errorMessage } from '../../api/client';
import type { DomainList } from '../../api/types';
import { Button, ConfirmButton, Empty, Notice, Page, QueryView, Section, TextField } from '../../components/ui';
import { fmtDateTime } from '../../lib/format';

export function domainProblem(d: string): string | null {
  const v = d.trim().toLowerCase().replace(/^@/, '');
  if (!v) return 'Enter a domain, like example.com.';
  if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(v)) return 'Enter a domain name, like example.com (no scheme, no path).';
  return null;
}

export default function Domains() {
  const queryClient = useQueryClient();
  const domains = useQuery({ queryKey: ['domains'], queryFn: () => api<DomainList>('/domains') });
  const [domain, setDomain] = useState('');
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const add = async (ev: FormEvent) => {
    ev.preventDefault();
    const p = domainProblem(domain);
    setFieldError(p);
    if (p) return;
    setBusy(true);
    setError(null);
    try {
      await api('/domains', { method: 'POST', body: { domain: domain.trim().replace(/^@/, '') } });
      setDomain('');
      await queryClient.invalidateQueries({ queryKey: ['domains'] });
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Page
      title="Domains"
      description="Single sign-on creates an account only for an email whose domain is listed here. Existing accounts sign in whatever their domain."
    >
      <Section title="Add a domain">
        <form onSubmit={add} noValidate className="inline-form">
          <TextField label="Domain" placeholder="example.com" value={domain} onChange={(e) => setDomain(e.target.value)} error={fieldError} />
          <Button type="submit" variant="primary" busy={busy}>
            Add
          </Button>
        </form>
        {error && <Notice tone="error">{error}</Notice>}
      </Section>
      <Section title="Allowed domains">
        <QueryView query={domains}>
          {(d) =>
            d.domains.length === 0 ? (
              <Empty title="No domain allowed">Nobody can create an account by SSO until a domain is added.</Empty>
            ) : (
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Domain</th>
                      <th scope="col">Added</th>
                      <th scope="col">
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.domains.map((x) => (
                      <tr key={x.domain}>
                        <td className="mono">{x.domain}</td>
                        <td>{fmtDateTime(x.created_at)}</td>
                        <td className="actions">
                          <ConfirmButton
                            label="Remove"
                            aria-label={`Remove ${x.domain}`}
                            title={`Remove ${x.domain}?`}
                            message="New accounts with this domain can no longer be created by SSO. Existing accounts are not affected."
                            confirmLabel="Remove"
                            onConfirm={async () => {
                              await api(`/domains/${encodeURIComponent(x.domain)}`, { method: 'DELETE' });
                              await queryClient.invalidateQueries({ queryKey: ['domains'] });
                            }}
                          />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )
          }
        </QueryView>
      </Section>
    </Page>
  );
}
