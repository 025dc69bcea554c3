// Admin: the model registry (enable, disable, rename, prices, delete,
// populate from the providers) and the visibility defaults per provider.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { api, errorMessage } from '../../api/client';
import type {
  ApplyAllResult,
  ApplyResult,
  PopulateResult,
  RegistryModel,
  RegistryModelList,
  VisibilityDefault,
  VisibilityDefaultList,
} from '../../api/types';
import { Badge, Button, ConfirmButton, Dialog, Empty, Notice, Page, QueryView, Section, TextField } from '../../components/ui';
import { PROVIDER_NAMES } from '../providers/names';
import { FallbackChains } from './Fallbacks';

const registryKey = ['models-registry'] as const;
const defaultsKey = ['visibility-defaults'] as const;

function price(v: number | null): string {
  return v === null ? '—' : `$${v}`;
}

function EditModel({ model, onClose }: { model: RegistryModel; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(model.display_name === model.model_id ? '' : model.display_name);
  const [prices, setPrices] = useState({
    input_price_per_mtok: model.input_price_per_mtok?.toString() ?? '',
    output_price_per_mtok: model.output_price_per_mtok?.toString() ?? '',
    cache_read_price_per_mtok: model.cache_read_price_per_mtok?.toString() ?? '',
    cache_write_price_per_mtok: model.cache_write_price_per_mtok?.toString() ?? '',
  });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const labels: Record<keyof typeof prices, string> = {
    input_price_per_mtok: 'Input, USD per million tokens',
    output_price_per_mtok: 'Output, USD per million tokens',
    cache_read_price_per_mtok: 'Cache read, USD per million',
    cache_write_price_per_mtok: 'Cache write, USD per million',
  };
  const save = async () => {
    const errs: Record<string, string> = {};
    const body: Record<string, unknown> = { display_name: name.trim() || null };
    for (const [k, v] of Object.entries(prices)) {
      if (v.trim() === '') body[k] = null;
      else if (!Number.isFinite(Number(v)) || Number(v) < 0) errs[k] = 'A price of 0 or more, or empty for unknown.';
      else body[k] = Number(v);
    }
    setErrors(errs);
    if (Object.keys(errs).length) return;
    setBusy(true);
    try {
      await api(`/models/registry/${model.id}`, { method: 'PATCH', body });
      await queryClient.invalidateQueries({ queryKey: registryKey });
      onClose();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      title={`Edit ${model.model_id}`}
      onClose={onClose}
      footer={
        <>
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="primary" busy={busy} onClick={() => void save()}>
            Save
          </Button>
        </>
      }
    >
      {error && <Notice tone="error">{error}</Notice>}
      <TextField label="Display name" value={name} onChange={(e) => setName(e.target.value)} placeholder={model.model_id} />
      <div className="grid-2">
        {(Object.keys(prices) as (keyof typeof prices)[]).map((k) => (
          <TextField
            key={k}
            label={labels[k]}
            inputMode="decimal"
            value={prices[k]}
            onChange={(e) => setPrices((p) => ({ ...p, [k]: e.target.value }))}
            error={errors[k]}
          />
        ))}
      </div>
    </Dialog>
  );
}

function Registry() {
  const queryClient = useQueryClient();
  const registry = useQuery({ queryKey: registryKey, queryFn: () => api<RegistryModelList>('/models/registry') });
  const [filter, setFilter] = useState('');
  const [provider, setProvider] = useState('');
  const [editing, setEditing] = useState<RegistryModel | null>(null);
  const [populate, setPopulate] = useState<PopulateResult | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const toggle = async (m: RegistryModel) => {
    try {
      await api(`/models/registry/${m.id}`, { method: 'PATCH', body: { enabled: !m.enabled } });
      await queryClient.invalidateQueries({ queryKey: registryKey });
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const runPopulate = async () => {
    setBusy(true);
    setError(null);
    try {
      setPopulate(await api<PopulateResult>('/models/registry/populate', { method: 'POST', body: {} }));
      await queryClient.invalidateQueries({ queryKey: registryKey });
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Section
      title="Registry"
      actions={
        <Button busy={busy} onClick={() => void runPopulate()}>
          Populate from providers
        </Button>
      }
    >
      {error && <Notice tone="error">{error}</Notice>}
      {populate && (
        <Notice tone="success">
          {populate.providers.map((p) => (
            <div key={p.provider}>
              {PROVIDER_NAMES[p.provider] ?? p.provider}:{' '}
              {p.source === 'error' ? <span className="error-text">failed: {p.error}</span> : `${p.added} added, ${p.updated} updated (from its ${p.source === 'listing' ? 'model listing' : 'static list'})`}
            </div>
          ))}
        </Notice>
      )}
      <QueryView query={registry} loadingLabel="Loading the registry…">
        {(d) => {
          const rows = d.models.filter(
            (m) => (!provider || m.provider === provider) && `${m.model_id} ${m.display_name}`.toLowerCase().includes(filter.toLowerCase()),
          );
          const providers = [...new Set(d.models.map((m) => m.provider))];
          return d.models.length === 0 ? (
            <Empty title="The registry is empty">Populate it from the providers’ model listings.</Empty>
          ) : (
            <>
              <div className="toolbar">
                <label className="sr-only" htmlFor="model-filter">
                  Filter models
                </label>
                <input id="model-filter" type="search" placeholder="Filter models" value={filter} onChange={(e) => setFilter(e.target.value)} />
                <label className="sr-only" htmlFor="model-provider">
                  Provider
                </label>
                <select id="model-provider" value={provider} onChange={(e) => setProvider(e.target.value)}>
                  <option value="">All providers</option>
                  {providers.map((p) => (
                    <option key={p} value={p}>
                      {PROVIDER_NAMES[p] ?? p}
                    </option>
                  ))}
                </select>
                <span className="muted small">
                  {rows.filter((m) => m.enabled).length} enabled of {rows.length}
                </span>
              </div>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Enabled</th>
                      <th scope="col">Model</th>
                      <th scope="col">Provider</th>
                      <th scope="col">Context</th>
                      <th scope="col">In / out per Mtok</th>
                      <th scope="col">Source</th>
                      <th scope="col">
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((m) => (
                      <tr key={m.id} className={m.enabled ? '' : 'row-off'}>
                        <td>
                          <input
                            type="checkbox"
                            role="switch"
                            aria-label={`${m.enabled ? 'Disable' : 'Enable'} ${m.model_id}`}
                            checked={m.enabled}
                            onChange={() => void toggle(m)}
                          />
                        </td>
                        <td>
                          <div className="mono">{m.provider === 'primary' ? m.model_id : `${m.provider}/${m.model_id}`}</div>
                          {m.display_name !== m.model_id && <div className="muted small">{m.display_name}</div>}
                        </td>
                        <td>{PROVIDER_NAMES[m.provider] ?? m.provider}</td>
                        <td>{m.context_window?.toLocaleString() ?? '—'}</td>
                        <td>
                          {price(m.input_price_per_mtok)} / {price(m.output_price_per_mtok)}
                        </td>
                        <td>
                          <Badge>{m.source}</Badge>
                        </td>
                        <td className="actions">
                          <Button small onClick={() => setEditing(m)} aria-label={`Edit ${m.model_id}`}>
                            Edit
                          </Button>
                          <ConfirmButton
                            label="Delete"
                            aria-label={`Delete ${m.model_id}`}
                            title={`Delete ${m.model_id}?`}
                            message="The entry is removed from the registry. Populating again may bring it back."
                            confirmLabel="Delete"
                            onConfirm={async () => {
                              await api(`/models/registry/${m.id}`, { method: 'DELETE' });
                              await queryClient.invalidateQueries({ queryKey: registryKey });
                            }}
                          />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </>
          );
        }}
      </QueryView>
      {editing && <EditModel model={editing} onClose={() => setEditing(null)} />}
    </Section>
  );
}

function DefaultsEditor({ provider, models, current, onClose }: { provider: string; models: RegistryModel[]; current?: VisibilityDefault; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [chosen, setChosen] = useState<Set<string>>(new Set(current?.enabled_models ?? models.filter((m) => m.enabled).map((m) => m.model_id)));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async () => {
    setBusy(true);
    try {
      await api(`/models/visibility-defaults/${provider}`, { method: 'PUT', body: { enabled_models: [...chosen] } });
      await queryClient.invalidateQueries({ queryKey: defaultsKey });
      onClose();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      title={`Visible by default: ${PROVIDER_NAMES[provider] ?? provider}`}
      onClose={onClose}
      wide
      footer={
        <>
          <Button onClick={onClose}>Cancel</Button>
          <Button variant="primary" busy={busy} onClick={() => void save()}>
            Save defaults
          </Button>
        </>
      }
    >
      <p className="muted">Models checked here are enabled when the defaults are applied; the others are disabled.</p>
      {error && <Notice tone="error">{error}</Notice>}
      <fieldset className="checklist">
        <legend className="sr-only">Models</legend>
        {models.map((m) => (
          <label key={m.id}>
            <input
              type="checkbox"
              checked={chosen.has(m.model_id)}
              onChange={(e) =>
                setChosen((s) => {
                  const n = new Set(s);
                  if (e.target.checked) n.add(m.model_id);
                  else n.delete(m.model_id);
                  return n;
                })
              }
            />
            <span className="mono">{m.model_id}</span>
          </label>
        ))}
      </fieldset>
    </Dialog>
  );
}

function VisibilityDefaults() {
  const queryClient = useQueryClient();
  const defaults = useQuery({ queryKey: defaultsKey, queryFn: () => api<VisibilityDefaultList>('/models/visibility-defaults') });
  const registry = useQuery({ queryKey: registryKey, queryFn: () => api<RegistryModelList>('/models/registry') });
  const [editing, setEditing] = useState<string | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);
  const byProvider = useMemo(() => {
    const m = new Map<string, RegistryModel[]>();
    for (const x of registry.data?.models ?? []) m.set(x.provider, [...(m.get(x.provider) ?? []), x]);
    return m;
  }, [registry.data]);
  const run = async (fn: () => Promise<string>) => {
    setMessage(null);
    try {
      setMessage({ ok: true, text: await fn() });
      await queryClient.invalidateQueries({ queryKey: registryKey });
    } catch (e) {
      setMessage({ ok: false, text: errorMessage(e) });
    }
  };
  return (
    <Section
      title="Visibility defaults"
      actions={
        <Button
          onClick={() =>
            void run(async () => {
              const r = await api<ApplyAllResult>('/models/visibility-defaults/apply-all', { method: 'POST', body: {} });
              return r.providers.map((p) => `${PROVIDER_NAMES[p.provider] ?? p.provider}: ${p.enabled} enabled, ${p.disabled} disabled`).join('; ') || 'No defaults to apply.';
            })
          }
        >
          Apply all
        </Button>
      }
    >
      <p className="muted small">Per provider, which models are enabled when new ones are found or when the defaults are applied.</p>
      {message && <Notice tone={message.ok ? 'success' : 'error'}>{message.text}</Notice>}
      <QueryView query={defaults}>
        {(d) => {
          const providers = [...new Set([...byProvider.keys(), ...d.defaults.map((x) => x.provider)])];
          return providers.length === 0 ? (
            <Empty title="No models yet">Populate the registry first.</Empty>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Provider</th>
                    <th scope="col">Default</th>
                    <th scope="col">
                      <span className="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {providers.map((p) => {
                    const def = d.defaults.find((x) => x.provider === p);
                    return (
                      <tr key={p}>
                        <td>{PROVIDER_NAMES[p] ?? p}</td>
                        <td>{def ? `${def.enabled_models.length} model${def.enabled_models.length === 1 ? '' : 's'} enabled` : <span className="muted">none: new models are enabled</span>}</td>
                        <td className="actions">
                          <Button small onClick={() => setEditing(p)}>
                            Edit
                          </Button>
                          {def && (
                            <>
                              <Button
                                small
                                onClick={() =>
                                  void run(async () => {
                                    const r = await api<ApplyResult>(`/models/visibility-defaults/${p}/apply`, { method: 'POST', body: {} });
                                    return `${r.enabled} enabled, ${r.disabled} disabled.`;
                                  })
                                }
                              >
                                Apply
                              </Button>
                              <ConfirmButton
                                label="Clear"
                                title="Clear the defaults?"
                                message="New models of this provider will be enabled when found. Current entries keep their state."
                                confirmLabel="Clear"
                                onConfirm={async () => {
                                  await api(`/models/visibility-defaults/${p}`, { method: 'DELETE' });
                                  await queryClient.invalidateQueries({ queryKey: defaultsKey });
                                }}
                              />
                            </>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          );
        }}
      </QueryView>
      {editing && (
        <DefaultsEditor
          provider={editing}
          models={byProvider.get(editing) ?? []}
          current={defaults.data?.defaults.find((x) => x.provider === editing)}
          onClose={() => setEditing(null)}
        />
      )}
    </Section>
  );
}

export default function Models() {
  return (
    <Page title="Models" description="Which models users see and may call. A disabled model is refused on /v1 and hidden from the lists within a second.">
      <Registry />
      <VisibilityDefaults />
      <FallbackChains />
    </Page>
  );
}
