// API keys: create with a label (the key shown once, with copy) and
// optional rules (expiry, models, budget, rate limits), the list with
// prefix, last use, rules and spend, revoke with confirmation.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { api } from '../api/client';
import type { ApiKey, ApiKeyList, BudgetPeriod, CreatedKey } from '../api/types';
import { useLimitFields } from '../components/LimitFields';
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
import { fmtDateTime, fmtInt, fmtRelative, fmtUsd } from '../lib/format';

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

/** The model names of a comma-separated list (none: `null`, any model). */
export function modelList(text: string): string[] | null {
  const names = [...new Set(text.split(',').map((m) => m.trim()).filter(Boolean))];
  return names.length ? names : null;
}

/** The end of a date (UTC) as RFC 3339, for `expires_at`. */
export function endOfDay(date: string): string | null {
  return /^\d{4}-\d{2}-\d{2}$/.test(date) ? `${date}T23:59:59Z` : null;
}

export function CreateKeyForm({
  onCreated,
  defaultLabel = '',
  rules = false,
}: {
  onCreated: (k: CreatedKey) => void;
  defaultLabel?: string;
  /** Also offer an expiry date and a model restriction. */
  rules?: boolean;
}) {
  const queryClient = useQueryClient();
  const [label, setLabel] = useState(defaultLabel);
  const [labelError, setLabelError] = useState<string | null>(null);
  const [expires, setExpires] = useState('');
  const [models, setModels] = useState('');
  const limits = useLimitFields('Optional.');
  const create = useMutation({
    mutationFn: (body: Record<string, unknown>) => api<CreatedKey>('/keys', { method: 'POST', body }),
    onSuccess: async (k) => {
      setLabel('');
      setExpires('');
      setModels('');
      limits.reset();
      onCreated(k);
      await queryClient.invalidateQueries({ queryKey: keysKey });
    },
  });
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    const p = labelProblem(label);
    setLabelError(p);
    const limitBody = rules ? limits.check() : {};
    if (p || !limitBody) return;
    const body: Record<string, unknown> = { label: label.trim() };
    if (rules && expires) body.expires_at = endOfDay(expires);
    if (rules && modelList(models)) body.allowed_models = modelList(models);
    // Only the limits set (a new key has none otherwise).
    for (const [field, value] of Object.entries(limitBody)) if (value !== null) body[field] = value;
    create.mutate(body);
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
      {rules && (
        <>
          <TextField label="Expires" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} hint="Optional: refused after this day (UTC)." />
          <TextField
            label="Models"
            placeholder="e.g. claude-sonnet-4.5, custom/llama3"
            value={models}
            onChange={(e) => setModels(e.target.value)}
            hint="Optional: the only models it may call, as named on /v1."
          />
          {limits.fields}
        </>
      )}
      <Button type="submit" variant="primary" busy={create.isPending}>
        Create key
      </Button>
      {create.isError && <Notice tone="error">{create.error.message}</Notice>}
    </form>
  );
}

/** What a key is limited to: its expiry, its models, its rates. */
function KeyRules({ apiKey }: { apiKey: ApiKey }) {
  const parts: string[] = [];
  if (apiKey.expires_at) parts.push(`${Date.parse(apiKey.expires_at) <= Date.now() ? 'expired' : 'expires'} ${fmtDateTime(apiKey.expires_at)}`);
  if (apiKey.allowed_models) parts.push(`only ${apiKey.allowed_models.join(', ')}`);
  if (apiKey.rpm_limit) parts.push(`${fmtInt(apiKey.rpm_limit)} requests/min`);
  if (apiKey.tpm_limit) parts.push(`${fmtInt(apiKey.tpm_limit)} tokens/min`);
  return parts.length ? <span className="small">{parts.join('; ')}</span> : <span className="muted">none</span>;
}

const PERIOD_WORDS: Record<BudgetPeriod, string> = { daily: 'today', weekly: 'this week', monthly: 'this month' };

/** What a key spent, against its budget when it has one. */
export function KeySpend({ apiKey }: { apiKey: ApiKey }) {
  if (apiKey.budget_usd === null) return <span>{fmtUsd(apiKey.spend_usd)}</span>;
  const spent = apiKey.spend_usd >= apiKey.budget_usd;
  const when = apiKey.budget_period ? PERIOD_WORDS[apiKey.budget_period] : 'in all';
  return (
    <span title={apiKey.budget_resets_at ? `Resets ${fmtDateTime(apiKey.budget_resets_at)}` : 'Never resets'}>
      {fmtUsd(apiKey.spend_usd)} of {fmtUsd(apiKey.budget_usd)} {when}
      {spent && <> · <strong className="danger-text">spent</strong></>}
    </span>
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
        <CreateKeyForm onCreated={setCreated} rules />
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
                      <th scope="col">Rules</th>
                      <th scope="col">Spend</th>
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
                        <td>
                          <KeyRules apiKey={k} />
                        </td>
                        <td>
                          <KeySpend apiKey={k} />
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
