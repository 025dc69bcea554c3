// Admin: guardrails — profiles of the cloud guardrail service (secrets
// write-only), CEL rules with live validation, and a tester that runs a
// profile on a sample text.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { api, errorMessage } from '../../api/client';
import type { ApplyTo, GuardrailProfile, GuardrailProfileList, GuardrailRule, GuardrailRuleList, GuardrailTestResult, SystemInfo } from '../../api/types';
import {
  Badge,
  Button,
  Checkbox,
  ConfirmButton,
  Dialog,
  Empty,
  Notice,
  Page,
  QueryView,
  Section,
  SelectField,
  TextArea,
  TextField,
} from '../../components/ui';
import { type CelState, useCelValidation } from './celValidation';

const profilesKey = ['guardrail-profiles'] as const;
const rulesKey = ['guardrail-rules'] as const;

function ProfileForm({ profile, onClose }: { profile?: GuardrailProfile; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [v, setV] = useState({
    name: profile?.name ?? '',
    guardrail_id: profile?.guardrail_id ?? '',
    guardrail_version: profile?.guardrail_version ?? 'DRAFT',
    region: profile?.region ?? 'us-east-1',
    access_key_id: profile?.access_key_id ?? '',
    secret_access_key: '',
    session_token: '',
  });
  const [enabled, setEnabled] = useState(profile?.enabled ?? true);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (k: keyof typeof v) => (e: React.ChangeEvent<HTMLInputElement>) => setV((x) => ({ ...x, [k]: e.target.value }));
  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    const e: Record<string, string> = {};
    if (!v.name.trim()) e.name = 'Enter a name.';
    if (!v.guardrail_id.trim()) e.guardrail_id = 'Enter the guardrail id.';
    if (!v.guardrail_version.trim()) e.guardrail_version = 'Enter a version (a number or DRAFT).';
    if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(v.region.trim())) e.region = 'A region like us-east-1.';
    if (!v.access_key_id.trim()) e.access_key_id = 'Enter the access key id.';
    if (!profile && !v.secret_access_key) e.secret_access_key = 'Enter the secret access key.';
    setErrors(e);
    if (Object.keys(e).length) return;
    const body: Record<string, unknown> = {
      name: v.name.trim(),
      guardrail_id: v.guardrail_id.trim(),
      guardrail_version: v.guardrail_version.trim(),
      region: v.region.trim(),
      access_key_id: v.access_key_id.trim(),
      enabled,
    };
    if (v.secret_access_key) body.secret_access_key = v.secret_access_key;
    if (v.session_token) body.session_token = v.session_token;
    setBusy(true);
    setError(null);
    try {
      if (profile) await api(`/guardrails/profiles/${profile.id}`, { method: 'PUT', body });
      else await api('/guardrails/profiles', { method: 'POST', body });
      await queryClient.invalidateQueries({ queryKey: profilesKey });
      onClose();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={profile ? `Edit ${profile.name}` : 'New profile'} onClose={onClose} wide>
      <form onSubmit={submit} noValidate className="stack">
        {error && <Notice tone="error">{error}</Notice>}
        <div className="grid-2">
          <TextField label="Name" value={v.name} onChange={set('name')} error={errors.name} />
          <TextField label="Region" value={v.region} onChange={set('region')} error={errors.region} />
          <TextField label="Guardrail id" value={v.guardrail_id} onChange={set('guardrail_id')} error={errors.guardrail_id} className="mono" />
          <TextField label="Guardrail version" value={v.guardrail_version} onChange={set('guardrail_version')} error={errors.guardrail_version} />
          <TextField label="Access key id" value={v.access_key_id} onChange={set('access_key_id')} error={errors.access_key_id} autoComplete="off" />
          <TextField
            label="Secret access key"
            type="password"
            autoComplete="new-password"
            value={v.secret_access_key}
            onChange={set('secret_access_key')}
            error={errors.secret_access_key}
            placeholder={profile?.has_secret ? 'stored: leave empty to keep' : ''}
          />
          <TextField label="Session token (optional)" type="password" autoComplete="off" value={v.session_token} onChange={set('session_token')} />
        </div>
        <Checkbox label="Enabled" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        <div className="dialog-foot">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={busy}>
            {profile ? 'Save' : 'Create profile'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

export function CelStatus({ state, id }: { state: CelState; id: string }) {
  return (
    <p id={id} className="cel-status" aria-live="polite">
      {state.state === 'checking' && <span className="muted">Checking…</span>}
      {state.state === 'valid' && <Badge tone="good">valid expression</Badge>}
      {state.state === 'invalid' && (
        <span className="error-text" role="alert">
          {state.line !== null && `Line ${state.line}, column ${state.column}: `}
          {state.message}
        </span>
      )}
      {state.state === 'unavailable' && <span className="muted">Could not check: {state.message}</span>}
    </p>
  );
}

function RuleForm({ rule, profiles, onClose }: { rule?: GuardrailRule; profiles: GuardrailProfile[]; onClose: () => void }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState(rule?.name ?? '');
  const [description, setDescription] = useState(rule?.description ?? '');
  const [expr, setExpr] = useState(rule?.cel_expression ?? '');
  const [applyTo, setApplyTo] = useState<ApplyTo>(rule?.apply_to ?? 'Both');
  const [rate, setRate] = useState(String(rule?.sampling_rate ?? 100));
  const [enabled, setEnabled] = useState(rule?.enabled ?? true);
  const [profileIds, setProfileIds] = useState<string[]>(rule?.profile_ids ?? []);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const cel = useCelValidation(expr);
  const submit = async (ev: FormEvent) => {
    ev.preventDefault();
    const e: Record<string, string> = {};
    if (!name.trim()) e.name = 'Enter a name.';
    const r = Number(rate);
    if (!Number.isFinite(r) || r < 0 || r > 100) e.rate = 'A percentage from 0 to 100.';
    if (cel.state === 'invalid') e.expr = 'Fix the expression first.';
    setErrors(e);
    if (Object.keys(e).length) return;
    const body = { name: name.trim(), description: description.trim(), cel_expression: expr, apply_to: applyTo, sampling_rate: r, enabled, profile_ids: profileIds };
    setBusy(true);
    setError(null);
    try {
      if (rule) await api(`/guardrails/rules/${rule.id}`, { method: 'PUT', body });
      else await api('/guardrails/rules', { method: 'POST', body });
      await queryClient.invalidateQueries({ queryKey: rulesKey });
      await queryClient.invalidateQueries({ queryKey: profilesKey });
      await queryClient.invalidateQueries({ queryKey: ['system'] });
      onClose();
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={rule ? `Edit ${rule.name}` : 'New rule'} onClose={onClose} wide>
      <form onSubmit={submit} noValidate className="stack">
        {error && <Notice tone="error">{error}</Notice>}
        <div className="grid-2">
          <TextField label="Name" value={name} onChange={(e) => setName(e.target.value)} error={errors.name} />
          <TextField label="Description (optional)" value={description} onChange={(e) => setDescription(e.target.value)} />
        </div>
        <TextArea
          label="When (CEL expression)"
          className="mono"
          rows={3}
          spellCheck={false}
          value={expr}
          onChange={(e) => setExpr(e.target.value)}
          error={errors.expr}
          hint="Empty matches every request. Variables: request.model, request.api_format, request.message_count, request.has_tools, request.is_streaming, request.content_length."
          placeholder={`request.model.startsWith("claude") && request.content_length > 1000`}
        />
        <CelStatus state={cel} id="cel-status" />
        <div className="grid-3">
          <SelectField label="Apply to" value={applyTo} onChange={(e) => setApplyTo(e.target.value as ApplyTo)}>
            <option value="Input">Input</option>
            <option value="Output">Output (non-streaming)</option>
            <option value="Both">Both</option>
          </SelectField>
          <TextField label="Sampling (%)" type="number" min={0} max={100} value={rate} onChange={(e) => setRate(e.target.value)} error={errors.rate} />
          <Checkbox label="Enabled" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
        </div>
        <fieldset className="checklist">
          <legend>Profiles to run</legend>
          {profiles.length === 0 && <p className="muted small">No profiles yet: create one first.</p>}
          {profiles.map((p) => (
            <label key={p.id}>
              <input
                type="checkbox"
                checked={profileIds.includes(p.id)}
                onChange={(e) => setProfileIds((ids) => (e.target.checked ? [...ids, p.id] : ids.filter((x) => x !== p.id)))}
              />
              {p.name}
            </label>
          ))}
        </fieldset>
        <div className="dialog-foot">
          <Button onClick={onClose}>Cancel</Button>
          <Button type="submit" variant="primary" busy={busy} disabled={cel.state === 'invalid'}>
            {rule ? 'Save' : 'Create rule'}
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function Tester({ profiles }: { profiles: GuardrailProfile[] }) {
  const [profileId, setProfileId] = useState('');
  const [content, setContent] = useState('');
  const [source, setSource] = useState<'INPUT' | 'OUTPUT'>('INPUT');
  const [result, setResult] = useState<GuardrailTestResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const chosen = profileId || profiles[0]?.id || '';
  const run = async (ev: FormEvent) => {
    ev.preventDefault();
    const e: Record<string, string> = {};
    if (!chosen) e.profile = 'Create a profile first.';
    if (!content.trim()) e.content = 'Enter a text to check.';
    setFieldErrors(e);
    if (Object.keys(e).length) return;
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      setResult(await api<GuardrailTestResult>(`/guardrails/profiles/${chosen}/test`, { method: 'POST', body: { content, source } }));
    } catch (err) {
      setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Section title="Tester">
      <form onSubmit={run} noValidate className="stack">
        <div className="grid-2">
          <SelectField label="Profile" value={chosen} onChange={(e) => setProfileId(e.target.value)} error={fieldErrors.profile}>
            {profiles.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name}
              </option>
            ))}
          </SelectField>
          <SelectField label="Check as" value={source} onChange={(e) => setSource(e.target.value as 'INPUT' | 'OUTPUT')}>
            <option value="INPUT">Input (the user’s prompt)</option>
            <option value="OUTPUT">Output (the model’s answer)</option>
          </SelectField>
        </div>
        <TextArea label="Text" rows={4} value={content} onChange={(e) => setContent(e.target.value)} error={fieldErrors.content} />
        <div>
          <Button type="submit" variant="primary" busy={busy}>
            Run the profile
          </Button>
        </div>
      </form>
      {error && <Notice tone="error">{error}</Notice>}
      {result && (
        <div className="stack" aria-live="polite">
          <div className="row">
            <Badge tone={result.action === 'None' ? 'good' : result.action === 'Redacted' ? 'warn' : 'bad'}>
              {result.action === 'None' ? 'passed' : result.action === 'Intervened' ? 'blocked' : 'redacted'}
            </Badge>
            <span className="muted small">{result.latency_ms} ms</span>
          </div>
          {result.violations.length > 0 && (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Kind</th>
                    <th scope="col">Name</th>
                    <th scope="col">Action</th>
                    <th scope="col">Detail</th>
                  </tr>
                </thead>
                <tbody>
                  {result.violations.map((v, i) => (
                    <tr key={i}>
                      <td>{v.kind.replace('_', ' ')}</td>
                      <td>{v.name}</td>
                      <td>{v.action}</td>
                      <td>{v.detail ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {result.action === 'Intervened' && result.output && (
            <div>
              <div className="label">The service’s answer</div>
              <pre className="code-block">{result.output}</pre>
            </div>
          )}
          {result.output && result.action === 'Redacted' && (
            <div>
              <div className="label">Redacted text</div>
              <pre className="code-block">{result.output}</pre>
            </div>
          )}
        </div>
      )}
    </Section>
  );
}

export default function Guardrails() {
  const queryClient = useQueryClient();
  const profiles = useQuery({ queryKey: profilesKey, queryFn: () => api<GuardrailProfileList>('/guardrails/profiles') });
  const rules = useQuery({ queryKey: rulesKey, queryFn: () => api<GuardrailRuleList>('/guardrails/rules') });
  const [editingProfile, setEditingProfile] = useState<GuardrailProfile | 'new' | null>(null);
  const [editingRule, setEditingRule] = useState<GuardrailRule | 'new' | null>(null);
  const system = useQuery({ queryKey: ['system'], queryFn: () => api<SystemInfo>('/system') });
  const profileList = profiles.data?.profiles ?? [];
  const live = system.data?.guardrails;
  return (
    <Page
      title="Guardrails"
      description={
        <>
          Rules choose which requests a guardrail profile checks. Guardrails run only when <code>guardrails_enabled</code> is on in the{' '}
          <Link to="/admin/config">configuration</Link>; a failing check lets the request through (fail open).
        </>
      }
    >
      {live && (
        <Notice tone={live.enabled ? 'info' : 'warning'}>
          {live.enabled ? 'Guardrails are on' : 'Guardrails are off'}: {live.active_rules} {live.active_rules === 1 ? 'rule' : 'rules'} with an enabled
          profile. Since this replica started: {live.blocked} blocked, {live.redacted} masked, {live.fail_opens}{' '}
          {live.fail_opens === 1 ? 'check' : 'checks'} failed open.
        </Notice>
      )}
      <Section title="Profiles" actions={profiles.data && <Button variant="primary" onClick={() => setEditingProfile('new')}>New profile</Button>}>
        <QueryView query={profiles}>
          {(d) =>
            d.profiles.length === 0 ? (
              <Empty title="No profiles">A profile names one guardrail of the cloud service and the credentials to call it.</Empty>
            ) : (
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">Guardrail</th>
                      <th scope="col">Region</th>
                      <th scope="col">Credentials</th>
                      <th scope="col">Rules</th>
                      <th scope="col">State</th>
                      <th scope="col">
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.profiles.map((p) => (
                      <tr key={p.id}>
                        <td>{p.name}</td>
                        <td className="mono small">
                          {p.guardrail_id} v{p.guardrail_version}
                        </td>
                        <td>{p.region}</td>
                        <td className="mono small">
                          {p.access_key_id} {p.has_secret ? <Badge tone="good">secret stored</Badge> : <Badge tone="bad">no secret</Badge>}
                        </td>
                        <td>{p.rule_ids.length}</td>
                        <td>{p.enabled ? <Badge tone="good">enabled</Badge> : <Badge>disabled</Badge>}</td>
                        <td className="actions">
                          <Button small onClick={() => setEditingProfile(p)} aria-label={`Edit ${p.name}`}>
                            Edit
                          </Button>
                          <ConfirmButton
                            label="Delete"
                            aria-label={`Delete ${p.name}`}
                            title={`Delete ${p.name}?`}
                            message="The profile and its stored credentials are deleted; rules stop calling it."
                            confirmLabel="Delete"
                            onConfirm={async () => {
                              await api(`/guardrails/profiles/${p.id}`, { method: 'DELETE' });
                              await queryClient.invalidateQueries({ queryKey: profilesKey });
                              await queryClient.invalidateQueries({ queryKey: rulesKey });
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
      <Section title="Rules" actions={rules.data && <Button variant="primary" onClick={() => setEditingRule('new')}>New rule</Button>}>
        <QueryView query={rules}>
          {(d) =>
            d.rules.length === 0 ? (
              <Empty title="No rules">Without a rule no profile runs.</Empty>
            ) : (
              <div className="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Name</th>
                      <th scope="col">When</th>
                      <th scope="col">Applies to</th>
                      <th scope="col">Sampling</th>
                      <th scope="col">Profiles</th>
                      <th scope="col">State</th>
                      <th scope="col">
                        <span className="sr-only">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.rules.map((r) => (
                      <tr key={r.id}>
                        <td>
                          {r.name}
                          {r.description && <div className="muted small">{r.description}</div>}
                        </td>
                        <td className="mono small">{r.cel_expression || <span className="muted">every request</span>}</td>
                        <td>{r.apply_to}</td>
                        <td>{r.sampling_rate} %</td>
                        <td>{r.profile_ids.map((id) => profileList.find((p) => p.id === id)?.name ?? id.slice(0, 8)).join(', ') || '—'}</td>
                        <td>{r.enabled ? <Badge tone="good">enabled</Badge> : <Badge>disabled</Badge>}</td>
                        <td className="actions">
                          <Button small onClick={() => setEditingRule(r)} aria-label={`Edit ${r.name}`}>
                            Edit
                          </Button>
                          <ConfirmButton
                            label="Delete"
                            aria-label={`Delete ${r.name}`}
                            title={`Delete ${r.name}?`}
                            message="Requests it matched are no longer checked by its profiles."
                            confirmLabel="Delete"
                            onConfirm={async () => {
                              await api(`/guardrails/rules/${r.id}`, { method: 'DELETE' });
                              await queryClient.invalidateQueries({ queryKey: rulesKey });
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
      {profiles.data && <Tester profiles={profileList} />}
      {editingProfile && <ProfileForm profile={editingProfile === 'new' ? undefined : editingProfile} onClose={() => setEditingProfile(null)} />}
      {editingRule && <RuleForm rule={editingRule === 'new' ? undefined : editingRule} profiles={profileList} onClose={() => setEditingRule(null)} />}
    </Page>
  );
}
