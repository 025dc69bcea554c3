import { act, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PollAnswer } from '../../api/types';
import { DeviceFlow, pollDelay } from './DeviceFlow';

const AUTH = {
  device_code: 'dev-1',
  user_code: 'ABCD-EFGH',
  verification_uri: 'https://sso.example/device',
  verification_uri_complete: 'https://sso.example/device?user_code=ABCD-EFGH',
  expires_in: 600,
  interval: 1,
};

let visibility: DocumentVisibilityState = 'visible';
beforeEach(() => {
  vi.useFakeTimers({ shouldAdvanceTime: false });
  visibility = 'visible';
  vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => visibility);
});
afterEach(() => vi.useRealTimers());

describe('device flow', () => {
  it('polls no faster than the interval and never under 5 s', () => {
    expect(pollDelay(1)).toBe(5000);
    expect(pollDelay(8)).toBe(8000);
    expect(pollDelay(5, 5)).toBe(10_000);
  });

  it('shows the code and link, polls, slows down on slow_down, and finishes on success', async () => {
    const answers: PollAnswer[] = [{ status: 'pending' }, { status: 'slow_down' }, { status: 'success' }];
    const poll = vi.fn(async () => answers.shift()!);
    const done = vi.fn();
    render(<DeviceFlow auth={{ ...AUTH, interval: 5 }} poll={poll} onFinished={done} />);
    expect(screen.getByLabelText('User code')).toHaveTextContent('ABCD-EFGH');
    expect(screen.getByRole('link', { name: AUTH.verification_uri })).toHaveAttribute('href', AUTH.verification_uri_complete);
    await act(() => vi.advanceTimersByTimeAsync(4999));
    expect(poll).not.toHaveBeenCalled();
    await act(() => vi.advanceTimersByTimeAsync(1));
    expect(poll).toHaveBeenCalledWith('dev-1');
    await act(() => vi.advanceTimersByTimeAsync(5000)); // second poll: slow_down
    expect(poll).toHaveBeenCalledTimes(2);
    expect(screen.getByText('the provider asked to poll more slowly')).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(9999));
    expect(poll).toHaveBeenCalledTimes(2);
    await act(() => vi.advanceTimersByTimeAsync(1));
    expect(poll).toHaveBeenCalledTimes(3);
    expect(done).toHaveBeenCalledWith('success', { status: 'success' });
    await act(() => vi.advanceTimersByTimeAsync(60_000));
    expect(poll).toHaveBeenCalledTimes(3);
  });

  it('does not poll while the tab is hidden', async () => {
    const poll = vi.fn(async (): Promise<PollAnswer> => ({ status: 'pending' }));
    render(<DeviceFlow auth={AUTH} poll={poll} onFinished={() => {}} />);
    visibility = 'hidden';
    act(() => {
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await act(() => vi.advanceTimersByTimeAsync(60_000));
    expect(poll).not.toHaveBeenCalled();
    expect(screen.getByText(/paused while this tab is hidden/)).toBeInTheDocument();
    visibility = 'visible';
    act(() => {
      document.dispatchEvent(new Event('visibilitychange'));
    });
    await act(() => vi.advanceTimersByTimeAsync(5000));
    expect(poll).toHaveBeenCalledTimes(1);
  });

  it('reports an expired or denied code', async () => {
    const done = vi.fn();
    render(<DeviceFlow auth={AUTH} poll={async () => ({ status: 'denied', message: 'refused by the user' })} onFinished={done} />);
    await act(() => vi.advanceTimersByTimeAsync(5000));
    expect(done).toHaveBeenCalledWith('denied', { status: 'denied', message: 'refused by the user' });
  });
});
