// Live validation of a CEL expression while it is typed: the server parses
// it (POST /guardrails/validate) after a short pause in typing; an older
// answer never overwrites a newer one.

import { useEffect, useState } from 'react';
import { api, errorMessage } from '../../api/client';
import type { CelValidation } from '../../api/types';

export type CelState =
  | { state: 'idle' }
  | { state: 'checking' }
  | { state: 'valid' }
  | { state: 'invalid'; message: string; line: number | null; column: number | null }
  | { state: 'unavailable'; message: string };

export const CEL_DEBOUNCE_MS = 400;

export function useCelValidation(expression: string): CelState {
  const [result, setResult] = useState<CelState>({ state: 'idle' });
  useEffect(() => {
    if (!expression.trim()) {
      setResult({ state: 'valid' });
      return;
    }
    const controller = new AbortController();
    setResult({ state: 'checking' });
    const t = setTimeout(async () => {
      try {
        const r = await api<CelValidation>('/guardrails/validate', {
          method: 'POST',
          body: { expression },
          signal: controller.signal,
        });
        if (controller.signal.aborted) return;
        if (r.valid || !r.error) setResult({ state: 'valid' });
        else setResult({ state: 'invalid', message: r.error.message, line: r.error.line, column: r.error.column });
      } catch (e) {
        if (controller.signal.aborted) return;
        setResult({ state: 'unavailable', message: errorMessage(e) });
      }
    }, CEL_DEBOUNCE_MS);
    return () => {
      clearTimeout(t);
      controller.abort();
    };
  }, [expression]);
  return result;
}
