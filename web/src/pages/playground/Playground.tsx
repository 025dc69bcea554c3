// Playground: chat with a model the user can reach, in either client format,
// streamed (SSE over fetch) or not, with the raw events, the usage, and the
// request as curl (the key elided). It calls /v1 with an API key like any
// client would: a key the user pastes, or one created here.

import { useQuery } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { api, errorMessage, isNotFound } from '../../api/client';
import type { CallableModelList, CreatedKey } from '../../api/types';
import { Badge, Button, Checkbox, CopyButton, Notice, Page, Section, SelectField, TextArea, TextField } from '../../components/ui';
import { readSse, type SseEvent } from '../../lib/sse';
import { fmtInt, fmtMs } from '../../lib/format';
import {
  applyEvent,
  buildBody,
  type ChatMessage,
  type ClientFormat,
  curlCommand,
  emptyReply,
  endpointOf,
  type Reply,
  replyFromJson,
} from './chat';

// The key lives in this tab's memory only (not in storage): it survives
// moving between pages, not a reload.
let rememberedKey = '';

interface RawEvent {
  n: number;
  at: number;
  event: string;
  data: string;
}

interface Turn extends ChatMessage {
  reply?: Reply;
}

function useModels(key: string) {
  const session = useQuery({
    queryKey: ['models'],
    queryFn: () => api<CallableModelList>('/models'),
    retry: false,
    staleTime: 60_000,
  });
  // A gateway without /_ui/api/models: ask /v1/models with the key.
  const fallback = useQuery({
    queryKey: ['v1-models', key],
    enabled: session.isError && isNotFound(session.error) && key.startsWith('sk-'),
    retry: false,
    queryFn: async () => {
      const res = await fetch('/v1/models', { headers: { Authorization: `Bearer ${key}` } });
      if (!res.ok) throw new Error(`/v1/models answered ${res.status}`);
      const j = (await res.json()) as { data?: { id: string; owned_by?: string }[] };
      return (j.data ?? []).map((m) => ({ id: m.id, label: m.id }));
    },
  });
  if (session.data)
    return {
      models: session.data.models.map((m) => ({ id: m.id, label: m.display_name && m.display_name !== m.id ? `${m.display_name} (${m.id})` : m.id })),
      pending: false,
      error: null as unknown,
    };
  if (fallback.data) return { models: fallback.data, pending: false, error: null as unknown };
  return {
    models: [] as { id: string; label: string }[],
    pending: session.isPending || fallback.isFetching,
    error: session.isError && !isNotFound(session.error) ? session.error : fallback.error,
  };
}

async function errorFromResponse(res: Response): Promise<string> {
  const text = await res.text().catch(() => '');
  try {
    const j = JSON.parse(text) as { error?: { message?: string; type?: string; violations?: { name: string }[] } };
    if (j.error?.message) {
      const v = j.error.violations?.length ? ` (violations: ${j.error.violations.map((x) => x.name).join(', ')})` : '';
      return `${res.status} ${j.error.type ?? ''}: ${j.error.message}${v}`;
    }
  } catch {
    // not JSON
  }
  return `${res.status} ${res.statusText}${text ? `: ${text.slice(0, 300)}` : ''}`;
}

export default function Playground() {
  const [key, setKeyState] = useState(rememberedKey);
  const setKey = (k: string) => {
    rememberedKey = k;
    setKeyState(k);
  };
  const models = useModels(key);
  const [model, setModel] = useState('');
  const [customModel, setCustomModel] = useState('');
  const [format, setFormat] = useState<ClientFormat>('openai');
  const [system, setSystem] = useState('');
  const [temperature, setTemperature] = useState('');
  const [maxTokens, setMaxTokens] = useState('1024');
  const [stream, setStream] = useState(true);
  const [input, setInput] = useState('');
  const [turns, setTurns] = useState<Turn[]>([]);
  const [running, setRunning] = useState(false);
  const [events, setEvents] = useState<RawEvent[]>([]);
  const [tab, setTab] = useState<'events' | 'usage' | 'curl'>('events');
  const [formError, setFormError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [keyError, setKeyError] = useState<string | null>(null);
  const [timing, setTiming] = useState<{ first: number | null; total: number | null }>({ first: null, total: null });
  const abort = useRef<AbortController | null>(null);
  const chatEnd = useRef<HTMLDivElement>(null);

  useEffect(() => () => abort.current?.abort(), []);
  useEffect(() => {
    if (!model && models.models[0]) setModel(models.models[0].id);
  }, [models.models, model]);
  useEffect(() => {
    chatEnd.current?.scrollIntoView?.({ block: 'nearest' });
  }, [turns]);

  const chosenModel = model === '__other' || models.models.length === 0 ? customModel.trim() : model;
  const temp = temperature.trim() === '' ? null : Number(temperature);
  const maxT = Number(maxTokens);
  const history: ChatMessage[] = turns.flatMap((t) =>
    t.reply && t.reply.text ? [{ role: t.role, content: t.content }, { role: 'assistant' as const, content: t.reply.text }] : [{ role: t.role, content: t.content }],
  );
  const preview = buildBody(format, {
    model: chosenModel || 'MODEL',
    system,
    messages: [...history, { role: 'user', content: input || 'Hello!' }],
    temperature: temp !== null && Number.isFinite(temp) ? temp : null,
    maxTokens: Number.isFinite(maxT) && maxT > 0 ? maxT : 1024,
    stream,
  });
  const curl = curlCommand(window.location.origin, format, preview);
  const last = [...turns].reverse().find((t) => t.reply)?.reply;

  const createKey = async () => {
    setCreating(true);
    setKeyError(null);
    try {
      const k = await api<CreatedKey>('/keys', { method: 'POST', body: { label: 'playground' } });
      setKey(k.key);
    } catch (e) {
      setKeyError(errorMessage(e));
    } finally {
      setCreating(false);
    }
  };

  const send = async (ev?: FormEvent) => {
    ev?.preventDefault();
    const problems: string[] = [];
    if (!key.trim()) problems.push('paste an API key or create one');
    if (!chosenModel) problems.push('choose a model');
    if (!input.trim()) problems.push('write a message');
    if (temp !== null && (!Number.isFinite(temp) || temp < 0 || temp > (format === 'openai' ? 2 : 1)))
      problems.push(`temperature is 0 to ${format === 'openai' ? 2 : 1}`);
    if (!Number.isInteger(maxT) || maxT < 1) problems.push('max tokens is a whole number above 0');
    if (problems.length) {
      setFormError(`To send: ${problems.join('; ')}.`);
      return;
    }
    setFormError(null);
    const body = buildBody(format, {
      model: chosenModel,
      system,
      messages: [...history, { role: 'user', content: input }],
      temperature: temp,
      maxTokens: maxT,
      stream,
    });
    const index = turns.length;
    setTurns((t) => [...t, { role: 'user', content: input, reply: emptyReply() }]);
    setInput('');
    setEvents([]);
    setRunning(true);
    const started = performance.now();
    setTiming({ first: null, total: null });
    const controller = new AbortController();
    abort.current = controller;
    const update = (fn: (r: Reply) => Reply) =>
      setTurns((ts) => ts.map((t, i) => (i === index ? { ...t, reply: fn(t.reply ?? emptyReply()) } : t)));
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (format === 'openai') headers.Authorization = `Bearer ${key.trim()}`;
    else {
      headers['x-api-key'] = key.trim();
      headers['anthropic-version'] = '2023-06-01';
    }
    try {
      const res = await fetch(endpointOf(format), {
        method: 'POST',
        headers,
        body: JSON.stringify(body),
        signal: controller.signal,
        credentials: 'omit',
      });
      if (!res.ok) {
        const msg = await errorFromResponse(res);
        update((r) => ({ ...r, error: msg }));
        return;
      }
      const ctype = res.headers.get('content-type') ?? '';
      if (res.headers.get('x-guardrail-action') === 'redacted')
        update((r) => ({ ...r, warning: 'A guardrail redacted part of the request before it was sent.' }));
      if (stream && ctype.includes('text/event-stream') && res.body) {
        let n = 0;
        let first = true;
        await readSse(res.body, (e: SseEvent) => {
          if (first) {
            first = false;
            setTiming((t) => ({ ...t, first: performance.now() - started }));
          }
          n += 1;
          const raw = { n, at: performance.now() - started, event: e.event, data: e.data };
          setEvents((list) => (list.length >= 2000 ? list : [...list, raw]));
          update((r) => applyEvent(format, r, e));
        });
        update((r) =>
          r.complete || r.error ? r : { ...r, error: 'The stream ended without its end marker: the answer may be incomplete.' },
        );
      } else {
        const json: unknown = await res.json();
        setTiming((t) => ({ ...t, first: performance.now() - started }));
        setEvents([{ n: 1, at: performance.now() - started, event: 'response', data: JSON.stringify(json, null, 2) }]);
        update((r) => {
          const next = replyFromJson(format, json);
          return { ...next, warning: next.warning ?? r.warning };
        });
      }
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') update((r) => ({ ...r, error: 'Stopped.' }));
      else update((r) => ({ ...r, error: `The request failed: ${errorMessage(e)}` }));
    } finally {
      setTiming((t) => ({ ...t, total: performance.now() - started }));
      setRunning(false);
      abort.current = null;
    }
  };

  return (
    <Page title="Playground" description="Try a model through the gateway, as your clients call it on /v1.">
      <div className="playground">
        <div className="pg-main">
          <Section title="Settings">
            <div className="grid-2">
              <div>
                <TextField
                  label="API key"
                  type="password"
                  autoComplete="off"
                  placeholder="sk-…"
                  value={key}
                  onChange={(e) => setKey(e.target.value)}
                  hint="Kept in this tab’s memory only. Never put into the curl command."
                  error={keyError}
                />
                {!key && (
                  <Button small onClick={() => void createKey()} busy={creating}>
                    Create a key for the playground
                  </Button>
                )}
              </div>
              <div>
                {models.models.length > 0 ? (
                  <SelectField label="Model" value={model} onChange={(e) => setModel(e.target.value)}>
                    {models.models.map((m) => (
                      <option key={m.id} value={m.id}>
                        {m.label}
                      </option>
                    ))}
                    <option value="__other">Other (type a name)…</option>
                  </SelectField>
                ) : null}
                {(model === '__other' || models.models.length === 0) && (
                  <TextField
                    label={models.models.length ? 'Model name' : 'Model'}
                    value={customModel}
                    placeholder="e.g. claude-sonnet-4.5"
                    onChange={(e) => setCustomModel(e.target.value)}
                    hint={
                      models.pending
                        ? 'Loading the models you can use…'
                        : models.error
                          ? `Model list unavailable: ${errorMessage(models.error)}`
                          : models.models.length === 0
                            ? 'No model list yet: type a model name, or enter your key to list them.'
                            : undefined
                    }
                  />
                )}
              </div>
            </div>
            <div className="grid-4">
              <fieldset className="segmented">
                <legend>Client format</legend>
                <label>
                  <input type="radio" name="format" value="openai" checked={format === 'openai'} onChange={() => setFormat('openai')} />
                  Chat completions
                </label>
                <label>
                  <input type="radio" name="format" value="anthropic" checked={format === 'anthropic'} onChange={() => setFormat('anthropic')} />
                  Messages
                </label>
              </fieldset>
              <TextField label="Temperature" inputMode="decimal" placeholder="default" value={temperature} onChange={(e) => setTemperature(e.target.value)} />
              <TextField label="Max tokens" inputMode="numeric" value={maxTokens} onChange={(e) => setMaxTokens(e.target.value)} />
              <Checkbox label="Stream (SSE)" checked={stream} onChange={(e) => setStream(e.target.checked)} />
            </div>
            <TextArea label="System prompt" rows={2} value={system} onChange={(e) => setSystem(e.target.value)} placeholder="optional" />
          </Section>

          <Section
            title="Conversation"
            actions={
              turns.length > 0 && (
                <Button small variant="ghost" disabled={running} onClick={() => setTurns([])}>
                  Clear
                </Button>
              )
            }
          >
            <div className="chat" aria-live="polite" aria-busy={running}>
              {turns.length === 0 && <p className="muted">Send a message to start. Ctrl+Enter sends.</p>}
              {turns.map((t, i) => (
                <div key={i} className="turn">
                  <div className="msg msg-user">
                    <span className="msg-role">You</span>
                    <div className="msg-text">{t.content}</div>
                  </div>
                  {t.reply && (
                    <div className="msg msg-assistant">
                      <span className="msg-role">
                        Assistant{t.reply.model ? ` · ${t.reply.model}` : ''}
                        {t.reply.finish && <Badge tone="neutral">{t.reply.finish}</Badge>}
                      </span>
                      {t.reply.reasoning && (
                        <details className="reasoning">
                          <summary>Reasoning</summary>
                          <div className="msg-text">{t.reply.reasoning}</div>
                        </details>
                      )}
                      <div className="msg-text">
                        {t.reply.text || (running && i === turns.length - 1 && !t.reply.error ? <span className="typing">…</span> : null)}
                      </div>
                      {t.reply.warning && <Notice tone="warning">{t.reply.warning}</Notice>}
                      {t.reply.error && <Notice tone="error">{t.reply.error}</Notice>}
                    </div>
                  )}
                </div>
              ))}
              <div ref={chatEnd} />
            </div>
            <form
              className="composer"
              onSubmit={(e) => void send(e)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send();
              }}
            >
              <TextArea label="Message" rows={3} value={input} onChange={(e) => setInput(e.target.value)} />
              {formError && <Notice tone="error">{formError}</Notice>}
              <div className="row">
                {running ? (
                  <Button variant="danger" onClick={() => abort.current?.abort()}>
                    Stop
                  </Button>
                ) : (
                  <Button type="submit" variant="primary">
                    Send
                  </Button>
                )}
                <span className="muted small">
                  {timing.first !== null && <>first byte {fmtMs(timing.first)}</>}
                  {timing.total !== null && <> · total {fmtMs(timing.total)}</>}
                </span>
              </div>
            </form>
          </Section>
        </div>

        <Section className="pg-side">
          <div role="tablist" aria-label="Details" className="tabs">
            {(
              [
                ['events', `Raw events${events.length ? ` (${events.length})` : ''}`],
                ['usage', 'Usage'],
                ['curl', 'curl'],
              ] as const
            ).map(([id, label]) => (
              <button
                key={id}
                role="tab"
                type="button"
                id={`tab-${id}`}
                aria-selected={tab === id}
                aria-controls={`panel-${id}`}
                tabIndex={tab === id ? 0 : -1}
                onClick={() => setTab(id)}
                onKeyDown={(e) => {
                  const order = ['events', 'usage', 'curl'] as const;
                  const i = order.indexOf(tab);
                  if (e.key === 'ArrowRight') setTab(order[(i + 1) % 3]!);
                  if (e.key === 'ArrowLeft') setTab(order[(i + 2) % 3]!);
                }}
              >
                {label}
              </button>
            ))}
          </div>
          <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="tab-panel" tabIndex={0}>
            {tab === 'events' &&
              (events.length === 0 ? (
                <p className="muted">The events of the last answer appear here as they arrive.</p>
              ) : (
                <ol className="events">
                  {events.map((e) => (
                    <li key={e.n}>
                      <div className="event-head">
                        <span className="mono">{e.event}</span>
                        <span className="muted small">+{Math.round(e.at)} ms</span>
                      </div>
                      <pre>{e.data}</pre>
                    </li>
                  ))}
                </ol>
              ))}
            {tab === 'usage' &&
              (last?.usage ? (
                <dl className="kv">
                  <dt>Input tokens</dt>
                  <dd>{fmtInt(last.usage.input_tokens)}</dd>
                  <dt>Output tokens</dt>
                  <dd>{fmtInt(last.usage.output_tokens)}</dd>
                  {last.usage.cache_read_tokens != null && (
                    <>
                      <dt>Cache read</dt>
                      <dd>{fmtInt(last.usage.cache_read_tokens)}</dd>
                    </>
                  )}
                  {last.usage.cache_write_tokens != null && (
                    <>
                      <dt>Cache write</dt>
                      <dd>{fmtInt(last.usage.cache_write_tokens)}</dd>
                    </>
                  )}
                  <dt>Finish</dt>
                  <dd>{last.finish ?? '—'}</dd>
                </dl>
              ) : (
                <p className="muted">
                  No usage reported yet. All usage is on the <Link to="/usage">Usage</Link> page.
                </p>
              ))}
            {tab === 'curl' && (
              <div className="stack">
                <p className="muted small">
                  The next request as curl. Set <code>GATEWAY_API_KEY</code> in your shell first.
                </p>
                <pre className="code-block">{curl}</pre>
                <CopyButton text={curl} label="Copy as curl" />
              </div>
            )}
          </div>
        </Section>
      </div>
    </Page>
  );
}
