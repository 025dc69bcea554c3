// API keys: create with a label (the key shown once, with copy), the list
// with prefix and last use, revoke with confirmation.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api/client';
import type { ApiKeyList, CreatedKey } from '../api/types';
import {
  Button,
  ConfirmButton,
  Dialog,
  Empty,
  Notice,
  Page,
  QueryView,
  SecretBox,
  Section,
  TextField,
} from '../components/ui';
import { fmtDateTime, fmtRelative } from '../lib/format';

export const keysKey = ['keys'] as const;
export const LABEL_MAX = 100;

export function labelProblem(label: string): string | null {
  if (label.trim().length > LABEL_MAX) return `At most ${LABEL_MAX} characters.`;
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(label)) return 'No control characters.';
  return null;
}

export function useKeys() {
  return useQuery({ queryKey: keysKey, queryFn: () => api<ApiKeyList>('/keys') });
}

export function CreateKeyForm({ onCreated, defaultLabel = '' }: { onCreated: (k: CreatedKey) => void; defaultLabel?: string }) {
  const queryClient = useQueryClient();
  const [label, setLabel] = useState(defaultLabel);
  const [labelError, setLabelError] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: (l: string) => api<CreatedKey>('/keys', { method: 'POST', body: { label: l } }),
    onSuccess: async (k) => {
      setLabel('');
      onCreated(k);
      await queryClient.invalidateQueries({ queryKey: keysKey });
    },
  });
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    const p = labelProblem(label);
    setLabelError(p);
    if (!p) create.mutate(label.trim());
  };
  return (
    <form onSubmit={submit} noValidate className="inline-form">
      <TextField
        label="Label"
        placeholder="e.g. laptop, CI, editor"
        value={label}
        onChange={(e) => setLabel(e.target.value)}
        maxLength={LABEL_MAX + 20}
        error={labelError}
        hint="Optional: helps you tell keys apart."
      />
      <Button type="submit" variant="primary" busy={create.isPending}>
        Create key
      </Button>
      {create.isError && <Notice tone="error">{create.error.message}</Notice>}
    </form>
  );
}

export default function Keys() {
  const queryClient = useQueryClient();
  const keys = useKeys();
  const [created, setCreated] = useState<CreatedKey | null>(null);

  const revoke = async (id: string) => {
    await api(`/keys/${encodeURIComponent(id)}`, { method: 'DELETE' });
    await queryClient.invalidateQueries({ queryKey: keysKey });
  };

  return (
    <Page
      title="API keys"
      description={
        <>
          Keys authenticate your clients on <code>/v1</code> (<code>Authorization: Bearer sk-…</code> or{' '}
          <code>x-api-key</code>). A key is shown once, when it is created.
        </>
      }
    >
      <Section title="New key">
        <CreateKeyForm onCreated={setCreated} />
      </Section>
      {created && (
        <Dialog
          title="Your new API key"
          onClose={() => setCreated(null)}
          footer={
            <Button variant="primary" onClick={() => setCreated(null)}>
              I have copied it
            </Button>
          }
        >
          <p>
            Copy the key now: the gateway stores only its hash and <strong>cannot show it again</strong>.
          </p>
          <SecretBox value={created.key} label="New API key" />
          {created.label && <p className="muted">Label: {created.label}</p>}
        </Dialog>
      )}
      <Section title="Your keys">
        <QueryView query={keys} loadingLabel="Loading keys…">
          {(data) =>
            data.keys.length === 0 ? (
              <Empty title="No keys yet">Create one above to call the gateway from your tools.</Empty>
            ) : (
              <div className="table-wrap">
                <table>
                  <caption className="sr-only">API keys</caption>
                  <thead>
                    <tr>
                      <th scope="col">Label</th>
                      <th scope="col">Key</th>
                      <th scope="col">Created</th>
                      <th scope="col">Last used</th>
                      <th scope="col">
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.keys.map((k) => (
                      <tr key={k.id}>
                        <td>{k.label || <span className="muted">no label</span>}</td>
                        <td>
                          <code>{k.key_prefix}…</code>
                        </td>
                        <td>{fmtDateTime(k.created_at)}</td>
                        <td title={k.last_used ?? undefined}>
                          {k.last_used ? fmtRelative(k.last_used) : <span className="muted">never</span>}
                        </td>
                        <td className="actions">
                          <ConfirmButton
                            label="Revoke"
                            aria-label={`Revoke key ${k.label || k.key_prefix}`}
                            title="Revoke this key?"
                            message={
                              <p>
                                Clients using <code>{k.key_prefix}…</code>
                                {k.label ? ` (${k.label})` : ''} are refused at once. This cannot be undone.
                              </p>
                            }
                            confirmLabel="Revoke key"
                            onConfirm={() => revoke(k.id)}
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
