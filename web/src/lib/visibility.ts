// Polling that respects the reader: never more often than every 5 seconds,
// and not at all while the tab is hidden (document.visibilityState).

import { useEffect, useRef, useSyncExternalStore } from 'react';

/** The floor of every poll in the console. */
export const MIN_POLL_MS = 5000;

function subscribe(cb: () => void): () => void {
  document.addEventListener('visibilitychange', cb);
  return () => document.removeEventListener('visibilitychange', cb);
}

export function isPageVisible(): boolean {
  return document.visibilityState !== 'hidden';
}

/** Re-renders when the tab is shown or hidden. */
export function usePageVisible(): boolean {
  return useSyncExternalStore(subscribe, isPageVisible, () => true);
}

/**
 * Run `tick` every `intervalMs` (at least MIN_POLL_MS) while `enabled` and
 * the page is visible. The next tick is scheduled only after the previous
 * one settled, so a slow answer never stacks calls. `tick` may return a
 * number of milliseconds to wait before the next one (e.g. on slow_down).
 */
export function useVisibleInterval(
  tick: () => Promise<number | void> | number | void,
  intervalMs: number,
  enabled = true,
): void {
  const visible = usePageVisible();
  const tickRef = useRef(tick);
  tickRef.current = tick;
  useEffect(() => {
    if (!enabled || !visible) return;
    let cancelled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const schedule = (ms: number) => {
      timer = setTimeout(run, Math.max(MIN_POLL_MS, ms));
    };
    const run = async () => {
      if (cancelled || !isPageVisible()) return;
      let next: number | void = undefined;
      try {
        next = await tickRef.current();
      } catch {
        // the tick shows its own errors; keep polling
      }
      if (!cancelled) schedule(typeof next === 'number' ? next : intervalMs);
    };
    schedule(intervalMs);
    return () => {
      cancelled = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [enabled, visible, intervalMs]);
}

/** For TanStack Query's refetchInterval: the floor applied, off while hidden. */
export function pollEvery(ms: number): number {
  return Math.max(MIN_POLL_MS, ms);
}
