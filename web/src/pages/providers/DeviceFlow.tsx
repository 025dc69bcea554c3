// A device authorization in progress (primary's SSO device flow, the
// assistant vendor's code-host device flow): the code and the link, a live
// expiry countdown, and polling no faster than the server's `interval`
// (and never under 5 s), paused while the tab is hidden, slowed on slow_down.

import { useCallback, useRef, useState } from 'react';
import { errorMessage } from '../../api/client';
import type { DeviceAuthorization, PollAnswer } from '../../api/types';
import { Badge, Button, CopyButton, Notice } from '../../components/ui';
import { useCountdown } from '../../lib/countdown';
import { fmtDuration } from '../../lib/format';
import { MIN_POLL_MS, usePageVisible, useVisibleInterval } from '../../lib/visibility';

export type FlowOutcome = 'success' | 'expired' | 'denied' | 'cancelled';

/** Milliseconds between polls for a server interval in seconds. */
export function pollDelay(intervalSecs: number, extraSecs = 0): number {
  return Math.max(MIN_POLL_MS, (Math.max(1, intervalSecs) + extraSecs) * 1000);
}

export function DeviceFlow(props: {
  auth: DeviceAuthorization;
  poll: (deviceCode: string) => Promise<PollAnswer>;
  onFinished: (outcome: FlowOutcome, answer?: PollAnswer) => void;
}) {
  const { auth } = props;
  const [deadline] = useState(() => Date.now() + auth.expires_in * 1000);
  const left = useCountdown(deadline);
  const extra = useRef(0);
  const [state, setState] = useState<{ status: string; message?: string }>({ status: 'pending' });
  const [active, setActive] = useState(true);
  const [lastError, setLastError] = useState<string | null>(null);
  const visible = usePageVisible();

  const finish = useCallback(
    (o: FlowOutcome, a?: PollAnswer) => {
      setActive(false);
      props.onFinished(o, a);
    },
    [props],
  );

  useVisibleInterval(
    async () => {
      if (left === 0) {
        setState({ status: 'expired' });
        finish('expired');
        return;
      }
      try {
        const a = await props.poll(auth.device_code);
        setLastError(null);
        setState({ status: a.status, message: a.message });
        if (a.status === 'slow_down') extra.current += 5;
        if (a.status === 'success' || a.status === 'expired' || a.status === 'denied') finish(a.status, a);
      } catch (e) {
        setLastError(errorMessage(e));
      }
      return pollDelay(auth.interval, extra.current);
    },
    pollDelay(auth.interval),
    active,
  );

  const link = auth.verification_uri_complete || auth.verification_uri;
  return (
    <div className="device-flow" aria-live="polite">
      <ol className="steps">
        <li>
          Open{' '}
          <a href={link} target="_blank" rel="noopener noreferrer">
            {auth.verification_uri}
          </a>{' '}
          and sign in.
        </li>
        <li>
          Check that the page shows this code, then approve:
          <div className="user-code">
            <code aria-label="User code">{auth.user_code}</code>
            <CopyButton text={auth.user_code} />
          </div>
        </li>
      </ol>
      <div className="row">
        {state.status === 'slow_down' ? (
          <Badge tone="warn">the provider asked to poll more slowly</Badge>
        ) : (
          <Badge tone="info">
            <span className="pulse" aria-hidden="true" /> waiting for approval
          </Badge>
        )}
        <span className="muted small">
          {left !== null && left > 0 ? `code expires in ${fmtDuration(left)}` : 'code expired'} · checking every{' '}
          {Math.round(pollDelay(auth.interval, extra.current) / 1000)} s{!visible && ' (paused while this tab is hidden)'}
        </span>
        <Button
          small
          variant="ghost"
          onClick={() => {
            setActive(false);
            props.onFinished('cancelled');
          }}
        >
          Cancel
        </Button>
      </div>
      {state.message && <p className="muted small">{state.message}</p>}
      {lastError && <Notice tone="warning">Could not check the status: {lastError}. Retrying.</Notice>}
    </div>
  );
}
