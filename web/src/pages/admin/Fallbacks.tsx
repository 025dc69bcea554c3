// Admin: fallback chains. When a model fails before its answer begins
// (unreachable, 5xx, 429, no first token in time), the chain's models are
// tried in turn; names as clients send them on /v1.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { api } from '../../api/client';
import type { FallbackChains as Chains } from '../../api/types';
import { Button, Empty, Notice, QueryView, Section, TextField } from '../../components/ui';
import { modelList } from '../Keys';

interface Row {
  model: string;
  fallbacks: string;
}

/** The chains to send: rows with a model, their fallbacks split on commas. */
export function chainsOf(rows: Row[]): Chains {
  return {
    chains: rows
      .filter((r) => r.model.trim())
      .map((r) => ({ model: r.model.trim(), fallbacks: modelList(r.fallbacks) ?? [] })),
  };
}

export function FallbackChains() {
  const queryClient = useQueryClient();
  const chains = useQuery({ queryKey: ['fallbacks'], queryFn: () => api<Chains>('/admin/fallbacks') });
  const [rows, setRows] = useState<Row[]>([]);
  useEffect(() => {
    if (chains.data) setRows(chains.data.chains.map((c) => ({ model: c.model, fallbacks: c.fallbacks.join(', ') })));
  }, [chains.data]);
  const save = useMutation({
    mutationFn: (body: Chains) => api<Chains>('/admin/fallbacks', { method: 'PUT', body }),
    onSuccess: (stored) => queryClient.setQueryData(['fallbacks'], stored),
  });
  const change = (i: number, field: keyof Row, value: string) =>
    setRows((all) => all.map((r, j) => (j === i ? { ...r, [field]: value } : r)));
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    save.mutate(chainsOf(rows));
  };
  return (
    <Section
      title="Fallback chains"
      actions={
        <Button onClick={() => setRows((all) => [...all, { model: '', fallbacks: '' }])}>Add a chain</Button>
      }
    >
      <p className="muted">
        When a model fails before its answer begins (provider unreachable, 5xx, 429, no first token in time), the next model of its
        chain answers instead. Models a user cannot use are skipped for them.
      </p>
      <QueryView query={chains} loadingLabel="Loading the chains…">
        {() => (
          <form onSubmit={submit} noValidate>
            {rows.length === 0 ? (
              <Empty title="No fallback chains">A failing model answers with its error.</Empty>
            ) : (
              rows.map((r, i) => (
                <div className="inline-form" key={i}>
                  <TextField label="Model" placeholder="e.g. claude-sonnet-4.5" value={r.model} onChange={(e) => change(i, 'model', e.target.value)} />
                  <TextField
                    label="Then"
                    placeholder="e.g. messages_vendor/claude-sonnet-4-5, completions_vendor/gpt-4o"
                    value={r.fallbacks}
                    onChange={(e) => change(i, 'fallbacks', e.target.value)}
                    hint="In order, comma-separated, as named on /v1."
                  />
                  <Button variant="ghost" aria-label={`Remove the chain of ${r.model || 'this model'}`} onClick={() => setRows((all) => all.filter((_, j) => j !== i))}>
                    Remove
                  </Button>
                </div>
              ))
            )}
            <Button type="submit" variant="primary" busy={save.isPending}>
              Save chains
            </Button>
            {save.isSuccess && <Notice tone="success">Saved: every replica uses them within a second.</Notice>}
            {save.isError && <Notice tone="error">{save.error.message}</Notice>}
          </form>
        )}
      </QueryView>
    </Section>
  );
}
