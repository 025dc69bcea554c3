import { act, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { mockFetch } from '../../test/utils';
import { CelStatus } from './Guardrails';
import { CEL_DEBOUNCE_MS, useCelValidation } from './celValidation';

function Probe({ expr }: { expr: string }) {
  return <CelStatus state={useCelValidation(expr)} id="s" />;
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('live CEL validation', () => {
  it('asks the server once typing pauses and shows the position of an error', async () => {
    const { calls } = mockFetch({
      'POST /_ui/api/guardrails/validate': ({ body }) =>
        new Response(
          JSON.stringify(
            (body as { expression: string }).expression === 'request.model ==' ? { valid: false, error: { message: 'unexpected end of input', line: 1, column: 17 } } : { valid: true },
          ),
        ),
    });
    const { rerender } = render(<Probe expr="request.mo" />);
    rerender(<Probe expr="request.model" />);
    rerender(<Probe expr="request.model ==" />);
    expect(screen.getByText('Checking…')).toBeInTheDocument();
    await act(() => vi.advanceTimersByTimeAsync(CEL_DEBOUNCE_MS));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.body).toEqual({ expression: 'request.model ==' });
    expect(screen.getByRole('alert')).toHaveTextContent('Line 1, column 17: unexpected end of input');
    rerender(<Probe expr='request.model == "x"' />);
    await act(() => vi.advanceTimersByTimeAsync(CEL_DEBOUNCE_MS));
    expect(screen.getByText('valid expression')).toBeInTheDocument();
  });

  it('treats an empty expression as valid without asking', async () => {
    const { calls } = mockFetch({});
    render(<Probe expr="  " />);
    await act(() => vi.advanceTimersByTimeAsync(CEL_DEBOUNCE_MS * 2));
    expect(calls).toHaveLength(0);
    expect(screen.getByText('valid expression')).toBeInTheDocument();
  });
});
