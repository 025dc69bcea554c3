// Admin: the gateway's live log stream (SSE over fetch), filtered by level
// and request id on the server, with pause (lines are held, not lost, up to
// a limit) and automatic reconnection no faster than every 5 s.

import { useEffect, useRef, useState } from 'react';
import { apiUrl, isNotFound, requestHeaders, toApiError } from '../../api/client';
import type { LogEvent } from '../../api/types';
import { Badge, Button, Notice, Page, Section, SelectField, TextField, Unavailable } from '../../components/ui';
import { readSse } from '../../lib/sse';
import { MIN_POLL_MS, usePageVisible } from '../../lib/visibility';

const MAX_LINES = 2000;
const LEVELS = ['error', 'warn', 'info', 'debug'] as const;

type Conn = { state: 'connecting' | 'live' | 'reconnecting' } | { state: 'failed'; error: unknown };

interface Line extends LogEvent {
  n: number;
}

export function parseLogEvent(data: string): LogEvent | null {
  try {
    const v = JSON.parse(data) as Partial<LogEvent>;
    if (typeof v.message !== 'string' || typeof v.level !== 'string') return null;
    return {
      timestamp: v.timestamp ?? '',
      level: v.level,
      target: v.target ?? '',
      message: v.message,
      request_id: v.request_id ?? null,
      fields: v.fields ?? {},
      replayed: v.replayed === true,
    };
  } catch {
    return null;
  }
}

function levelTone(level: string) {
  const l = level.toLowerCase();
  return l === 'error' ? 'bad' : l === 'warn' ? 'warn' : l === 'info' ? 'info' : 'neutral';
}

export default function Logs() {
  const [level, setLevel] = useState<(typeof LEVELS)[number]>('info');
  const [requestId, setRequestId] = useState('');
  const [appliedId, setAppliedId] = useState('');
  const [paused, setPaused] = useState(false);
  const [lines, setLines] = useState<Line[]>([]);
  const [held, setHeld] = useState(0);
  const [dropped, setDropped] = useState(0);
  const [conn, setConn] = useState<Conn>({ state: 'connecting' });
  const [attempt, setAttempt] = useState(0);
  const [follow, setFollow] = useState(true);
  const visible = usePageVisible();
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const holdRef = useRef<Line[]>([]);
  const counter = useRef(0);
  const bottom = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const controller = new AbortController();
    let retry: ReturnType<typeof setTimeout> | undefined;
    setConn((c) => (c.state === 'live' ? { state: 'reconnecting' } : { state: 'connecting' }));
    setLines([]);
    holdRef.current = [];
    setHeld(0);
    const run = async () => {
      try {
        const res = await fetch(apiUrl('/admin/logs/stream', { level, request_id: appliedId.trim() || undefined, replay: 200 }), {
          credentials: 'same-origin',
          headers: requestHeaders('GET', false),
          signal: controller.signal,
        });
        if (!res.ok || !res.body) {
          setConn({ state: 'failed', error: await toApiError(res) });
          return;
        }
        setConn({ state: 'live' });
        await readSse(res.body, (ev) => {
          if (ev.event === 'lagged') {
            const n = Number((JSON.parse(ev.data) as { dropped?: number }).dropped ?? 0);
            setDropped((d) => d + (Number.isFinite(n) ? n : 0));
            return;
          }
          if (ev.event !== 'log' && ev.event !== 'message') return;
          const parsed = parseLogEvent(ev.data);
          if (!parsed) return;
          const line = { ...parsed, n: ++counter.current };
          if (pausedRef.current) {
            holdRef.current.push(line);
            if (holdRef.current.length > MAX_LINES) holdRef.current.shift();
            setHeld(holdRef.current.length);
          } else {
            setLines((ls) => (ls.length >= MAX_LINES ? [...ls.slice(ls.length - MAX_LINES + 1), line] : [...ls, line]));
          }
        });
        if (!controller.signal.aborted) {
          setConn({ state: 'reconnecting' });
          retry = setTimeout(() => setAttempt((a) => a + 1), MIN_POLL_MS);
        }
      } catch (e) {
        if (controller.signal.aborted) return;
        setConn({ state: 'reconnecting' });
        void e;
        retry = setTimeout(() => setAttempt((a) => a + 1), MIN_POLL_MS);
      }
    };
    if (visible || attempt === 0) void run();
    return () => {
      controller.abort();
      if (retry) clearTimeout(retry);
    };
    // Reconnect on filter changes; a hidden tab does not retry until shown.
  }, [level, appliedId, attempt, visible]);

  useEffect(() => {
    if (follow && !paused) bottom.current?.scrollIntoView?.({ block: 'end' });
  }, [lines, follow, paused]);

  const resume = () => {
    const heldLines = holdRef.current;
    holdRef.current = [];
    setHeld(0);
    setLines((ls) => [...ls, ...heldLines].slice(-MAX_LINES));
    setPaused(false);
  };

  if (conn.state === 'failed' && isNotFound(conn.error))
    return (
      <Page title="Logs">
        <Unavailable error={conn.error} />
      </Page>
    );

  return (
    <Page title="Logs" description="The gateway’s own log lines as they are written (secrets masked). History: the last 200 lines first.">
      <Section>
        <form
          className="filters"
          aria-label="Log filters"
          onSubmit={(e) => {
            e.preventDefault();
            setAppliedId(requestId);
          }}
        >
          <SelectField label="Minimum level" value={level} onChange={(e) => setLevel(e.target.value as (typeof LEVELS)[number])}>
            {LEVELS.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </SelectField>
          <TextField label="Request id" placeholder="all requests" value={requestId} onChange={(e) => setRequestId(e.target.value)} className="mono" />
          <div className="filter-buttons">
            <Button type="submit">Apply</Button>
            {appliedId && (
              <Button
                variant="ghost"
                onClick={() => {
                  setRequestId('');
                  setAppliedId('');
                }}
              >
                Show all
              </Button>
            )}
          </div>
          <div className="filter-buttons">
            {paused ? (
              <Button variant="primary" onClick={resume}>
                Resume{held > 0 ? ` (${held} new)` : ''}
              </Button>
            ) : (
              <Button onClick={() => setPaused(true)}>Pause</Button>
            )}
            <Button variant="ghost" onClick={() => setLines([])}>
              Clear
            </Button>
          </div>
        </form>
        <div className="row log-status" aria-live="polite">
          {conn.state === 'live' && !paused && (
            <Badge tone="good">
              <span className="pulse" aria-hidden="true" /> live
            </Badge>
          )}
          {paused && <Badge tone="warn">paused: new lines are held</Badge>}
          {conn.state === 'connecting' && <Badge tone="info">connecting…</Badge>}
          {conn.state === 'reconnecting' && <Badge tone="warn">disconnected: reconnecting every 5 s{!visible && ' when this tab is shown'}</Badge>}
          {dropped > 0 && <Badge tone="bad">{dropped} lines dropped (the console could not keep up)</Badge>}
          <span className="muted small">{lines.length} lines</span>
          <label className="check-inline">
            <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow
          </label>
        </div>
        {conn.state === 'failed' && <Notice tone="error">The log stream could not be opened: {String((conn.error as Error).message)}</Notice>}
      </Section>
      <div className="log-view" role="log" aria-label="Server log" tabIndex={0}>
        {lines.length === 0 ? (
          <p className="muted">{conn.state === 'live' ? 'No lines yet at this level.' : 'Waiting for the stream…'}</p>
        ) : (
          lines.map((l) => (
            <div key={l.n} className={`log-line log-${l.level.toLowerCase()}${l.replayed ? ' log-replayed' : ''}`} title={l.replayed ? 'From the history sent on connecting' : undefined}>
              <span className="log-time">{l.timestamp.slice(11, 23)}</span>
              <span className={`log-level badge badge-${levelTone(l.level)}`}>{l.level.toUpperCase()}</span>
              <span className="log-target">{l.target}</span>
              <span className="log-msg">
                {l.message}
                {Object.entries(l.fields).map(([k, v]) => (
                  <span key={k} className="log-field">
                    {' '}
                    {k}=<span>{typeof v === 'string' ? v : JSON.stringify(v)}</span>
                  </span>
                ))}
              </span>
              {l.request_id && (
                <button type="button" className="log-rid linklike" title="Show only this request" onClick={() => {
                  setRequestId(l.request_id ?? '');
                  setAppliedId(l.request_id ?? '');
                }}>
                  {l.request_id.slice(0, 8)}
                </button>
              )}
            </div>
          ))
        )}
        <div ref={bottom} />
      </div>
    </Page>
  );
}
