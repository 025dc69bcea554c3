// Admin: the runtime configuration from /config/schema: grouped fields with
// inputs for their type, where each value comes from, hot-reload or restart,
// the restarts pending, and the change history with diffs.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, errorMessage } from '../../api/client';
import type { ConfigAnswer, ConfigField, ConfigHistory, ConfigSchema, ConfigUpdate } from '../../api/types';
import { Badge, Button, ConfirmButton, Empty, ErrorNotice, Loading, Notice, Page, QueryView, Section } from '../../components/ui';
import { fmtDateTime } from '../../lib/format';
import { changedValues, diffParts, groupFields, SSO_PREFIX, valueProblem } from './configModel';

export const configKey = ['config'] as const;

function FieldInput({
  field,
  value,
  onChange,
  invalid,
  describedBy,
  id,
}: {
  field: ConfigField;
  value: string;
  onChange: (v: string) => void;
  invalid: boolean;
  describedBy: string;
  id: string;
}) {
  const common = { id, 'aria-describedby': describedBy, 'aria-invalid': invalid || undefined, disabled: !field.editable };
  switch (field.type) {
    case 'boolean':
      return (
        <label className="switch">
          <input type="checkbox" role="switch" checked={value === 'true'} onChange={(e) => onChange(String(e.target.checked))} {...common} />
          <span>{value === 'true' ? 'On' : 'Off'}</span>
        </label>
      );
    case 'enum':
      return (
        <select value={value} onChange={(e) => onChange(e.target.value)} {...common}>
          {(field.values ?? []).map((v) => (
            <option key={v} value={v}>
              {v}
            </option>
          ))}
        </select>
      );
    case 'integer':
      return <input type="number" min={0} step={1} value={value} onChange={(e) => onChange(e.target.value)} {...common} />;
    default:
      return (
        <input
          type={field.type === 'url' ? 'url' : 'text'}
          value={value}
          spellCheck={false}
          placeholder={field.type === 'duration' ? 'e.g. 30s' : field.type === 'byte_size' ? 'e.g. 10MiB' : field.default ?? ''}
          onChange={(e) => onChange(e.target.value)}
          {...common}
        />
      );
  }
}

function History() {
  const [filter, setFilter] = useState('');
  const history = useQuery({
    queryKey: ['config-history'],
    queryFn: () => api<ConfigHistory>('/config/history', { query: { limit: 200 } }),
  });
  return (
    <Section title="History" actions={<span className="muted small">the last 1000 changes are kept</span>}>
      <QueryView query={history}>
        {(d) => {
          const rows = d.entries.filter((e) => e.key.includes(filter.trim()));
          return d.entries.length === 0 ? (
            <Empty title="No changes yet">Every change made here is recorded with who and when.</Empty>
          ) : (
            <>
              <div className="toolbar">
                <label className="sr-only" htmlFor="history-filter">
                  Filter by field
                </label>
                <input id="history-filter" type="search" placeholder="Filter by field" value={filter} onChange={(e) => setFilter(e.target.value)} />
              </div>
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Field</th>
                      <th scope="col">Change</th>
                      <th scope="col">By</th>
                    </tr>
                  </thead>
                  <tbody>
                    {rows.map((e) => {
                      const before = e.old_value ?? '';
                      const after = e.new_value ?? '';
                      const dp = diffParts(before, after);
                      return (
                        <tr key={e.id}>
                          <td className="nowrap">{fmtDateTime(e.changed_at)}</td>
                          <td className="mono">{e.key}</td>
                          <td className="diff">
                            {e.secret ? (
                              <span className="muted">secret changed</span>
                            ) : (
                              <>
                                <span className="diff-old" aria-label={`before: ${e.old_value ?? 'unset'}`}>
                                  {e.old_value === null ? (
                                    <em>unset</em>
                                  ) : (
                                    <>
                                      {dp.prefix}
                                      <del>{dp.removed}</del>
                                      {dp.suffix}
                                    </>
                                  )}
                                </span>
                                <span aria-hidden="true"> → </span>
                                <span className="diff-new" aria-label={`after: ${e.new_value ?? 'unset (default)'}`}>
                                  {e.new_value === null ? (
                                    <em>unset (default)</em>
                                  ) : (
                                    <>
                                      {dp.prefix}
                                      <ins>{dp.added}</ins>
                                      {dp.suffix}
                                    </>
                                  )}
                                </span>
                              </>
                            )}
                          </td>
                          <td>{e.changed_by_email ?? <span className="muted">{e.changed_by ? 'deleted user' : 'system'}</span>}</td>
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            </>
          );
        }}
      </QueryView>
    </Section>
  );
}

export default function Config() {
  const queryClient = useQueryClient();
  const schema = useQuery({ queryKey: ['config-schema'], queryFn: () => api<ConfigSchema>('/config/schema'), staleTime: Infinity });
  const config = useQuery({ queryKey: configKey, queryFn: () => api<ConfigAnswer>('/config') });
  const [edits, setEdits] = useState<Record<string, string>>({});
  const [result, setResult] = useState<ConfigUpdate | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (schema.isPending || config.isPending) return <Page title="Configuration"><Loading /></Page>;
  if (schema.isError || config.isError)
    return (
      <Page title="Configuration">
        <ErrorNotice error={schema.error ?? config.error} onRetry={() => void Promise.all([schema.refetch(), config.refetch()])} />
      </Page>
    );

  const values = config.data.values;
  const groups = groupFields(schema.data.fields);
  const valueOf = (name: string) => edits[name] ?? String(values[name] ?? '');
  const fieldsByName = new Map(schema.data.fields.map((f) => [f.name, f]));
  const problems = Object.fromEntries(
    Object.entries(edits)
      .map(([k, v]) => [k, fieldsByName.get(k) ? valueProblem(fieldsByName.get(k)!, v) : null] as const)
      .filter(([, p]) => p),
  );
  const changes = changedValues(edits, values);
  const dirty = Object.keys(changes).length > 0;
  const pending = Object.entries(config.data.pending_restart);

  const put = async (body: Record<string, string | null>) => {
    setBusy(true);
    setError(null);
    try {
      const r = await api<ConfigUpdate>('/config', { method: 'PUT', body });
      setResult(r);
      setEdits({});
      await queryClient.invalidateQueries({ queryKey: configKey });
      await queryClient.invalidateQueries({ queryKey: ['config-history'] });
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Page
      title="Configuration"
      description="Values stored here override the environment. Hot fields apply at once on every replica; restart fields apply after the gateway restarts."
      actions={
        <>
          <Button disabled={!dirty || busy} onClick={() => setEdits({})}>
            Discard
          </Button>
          <Button variant="primary" busy={busy} disabled={!dirty || Object.keys(problems).length > 0} onClick={() => void put(changes)}>
            Save {dirty ? `${Object.keys(changes).length} change${Object.keys(changes).length > 1 ? 's' : ''}` : ''}
          </Button>
        </>
      }
    >
      {pending.length > 0 && (
        <Notice tone="warning">
          <strong>Restart pending.</strong> These values are stored but the running gateway still uses the old ones:{' '}
          {pending.map(([k, v], i) => (
            <span key={k}>
              {i > 0 && ', '}
              <code>{k}</code> ({v.running} → {v.configured})
            </span>
          ))}
          .
        </Notice>
      )}
      {error && <Notice tone="error">{error}</Notice>}
      {result && (
        <Notice tone="success">
          Saved.{' '}
          {result.applied.length > 0 && <>Applied now: {result.applied.join(', ')}. </>}
          {result.pending_restart.length > 0 && <>After a restart: {result.pending_restart.join(', ')}. </>}
          {result.changed.length === 0 && 'Nothing changed.'}
        </Notice>
      )}
      {groups.map((g) => (
        <Section key={g.title} title={g.title}>
          <div className="config-fields">
            {g.fields.map((f) => {
              const id = `cfg-${f.name}`;
              const source = config.data.sources[f.name];
              const edited = f.name in changes;
              const problem = problems[f.name];
              return (
                <div key={f.name} className={`config-field${edited ? ' edited' : ''}`}>
                  <div className="config-label">
                    <label htmlFor={id} className="mono">
                      {f.name}
                    </label>
                    <Badge tone={f.reload === 'hot' ? 'good' : 'warn'} title={f.reload === 'hot' ? 'Applied at once' : 'Applied after a restart'}>
                      {f.reload === 'hot' ? 'hot reload' : 'restart'}
                    </Badge>
                    {source && <Badge tone={source === 'database' ? 'info' : 'neutral'}>{source === 'database' ? 'set here' : source}</Badge>}
                    {f.name in config.data.pending_restart && <Badge tone="warn">restart pending</Badge>}
                  </div>
                  <p className="field-hint" id={`${id}-desc`}>
                    {f.description}
                    {f.default !== null && f.default !== '' && <> Default: <code>{f.default}</code>.</>}
                    {!f.editable && <> Set by the environment only.</>}
                  </p>
                  <div className="config-input">
                    <FieldInput
                      id={id}
                      field={f}
                      value={valueOf(f.name)}
                      invalid={!!problem}
                      describedBy={problem ? `${id}-err` : `${id}-desc`}
                      onChange={(v) => {
                        setResult(null);
                        setEdits((e) => ({ ...e, [f.name]: v }));
                      }}
                    />
                    {source === 'database' && f.editable && (
                      <ConfirmButton
                        small
                        variant="ghost"
                        label="Use default"
                        aria-label={`Remove the stored value of ${f.name}`}
                        title={`Remove the stored value of ${f.name}?`}
                        message="The field goes back to the environment's value or the default."
                        confirmLabel="Remove stored value"
                        onConfirm={() => put({ [f.name]: null })}
                      />
                    )}
                  </div>
                  {problem && (
                    <p className="field-error" id={`${id}-err`} role="alert">
                      {problem}
                    </p>
                  )}
                </div>
              );
            })}
          </div>
        </Section>
      ))}
      {schema.data.fields.some((f) => f.name.startsWith(SSO_PREFIX)) && (
        <p className="muted small">The identity provider’s settings are on the SSO page.</p>
      )}
      <History />
    </Page>
  );
}
