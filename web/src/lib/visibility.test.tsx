import { act, render } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MIN_POLL_MS, useVisibleInterval } from './visibility';

let visibility: DocumentVisibilityState = 'visible';

function setVisibility(v: DocumentVisibilityState) {
  visibility = v;
  document.dispatchEvent(new Event('visibilitychange'));
}

function Poller({ tick, ms }: { tick: () => void; ms: number }) {
  useVisibleInterval(tick, ms);
  return null;
}

beforeEach(() => {
  vi.useFakeTimers();
  visibility = 'visible';
  vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => visibility);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('useVisibleInterval', () => {
  it('never polls faster than every 5 seconds', async () => {
    const tick = vi.fn();
    render(<Poller tick={tick} ms={1000} />);
    await act(() => vi.advanceTimersByTimeAsync(MIN_POLL_MS - 1));
    expect(tick).not.toHaveBeenCalled();
    await act(() => vi.advanceTimersByTimeAsync(1));
    expect(tick).toHaveBeenCalledTimes(1);
    await act(() => vi.advanceTimersByTimeAsync(MIN_POLL_MS * 3));
    expect(tick).toHaveBeenCalledTimes(4);
  });

  it('stops while the tab is hidden and resumes when it is shown', async () => {
    const tick = vi.fn();
    render(<Poller tick={tick} ms={5000} />);
    await act(() => vi.advanceTimersByTimeAsync(5000));
    expect(tick).toHaveBeenCalledTimes(1);
    act(() => setVisibility('hidden'));
    await act(() => vi.advanceTimersByTimeAsync(60_000));
    expect(tick).toHaveBeenCalledTimes(1);
    act(() => setVisibility('visible'));
    await act(() => vi.advanceTimersByTimeAsync(5000));
    expect(tick).toHaveBeenCalledTimes(2);
  });

  it('waits for a slow tick before scheduling the next one', async () => {
    let resolve: () => void = () => {};
    const tick = vi.fn(() => new Promise<void>((r) => (resolve = r)));
    render(<Poller tick={tick} ms={5000} />);
    await act(() => vi.advanceTimersByTimeAsync(5000));
    await act(() => vi.advanceTimersByTimeAsync(30_000));
    expect(tick).toHaveBeenCalledTimes(1);
    await act(async () => resolve());
    await act(() => vi.advanceTimersByTimeAsync(5000));
    expect(tick).toHaveBeenCalledTimes(2);
  });
});
