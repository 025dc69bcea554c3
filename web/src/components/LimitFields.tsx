// The budget and rate-limit fields of a key (Keys page) and of a user
// (admin, user page): budget in USD with its period, requests and tokens
// per minute. Empty means none.

import { useState } from 'react';
import type { BudgetPeriod, LimitFieldsBody, LimitFieldsView } from '../api/types';
import { SelectField, TextField } from './ui';

/** A budget in USD as typed: `undefined` when empty, `null` when invalid. */
export function budgetAmount(text: string): number | null | undefined {
  const t = text.trim();
  if (!t) return undefined;
  const n = Number(t);
  return Number.isFinite(n) && n >= 0 && n <= 1e9 ? n : null;
}

/** A per-minute limit as typed: `undefined` when empty, `null` when invalid. */
export function perMinute(text: string): number | null | undefined {
  const t = text.trim();
  if (!t) return undefined;
  const n = Number(t);
  return Number.isInteger(n) && n >= 1 && n <= 1e9 ? n : null;
}

const text = (n: number | null | undefined) => (n === null || n === undefined ? '' : String(n));

interface Errors {
  budget?: string;
  rpm?: string;
  tpm?: string;
}

/** The fields' state; `fields` renders them, `check` validates (showing
 * what is wrong) and gives the body, `reset` empties or loads them. */
export function useLimitFields(emptyHint: string) {
  const [budget, setBudget] = useState('');
  const [period, setPeriod] = useState<BudgetPeriod | ''>('monthly');
  const [rpm, setRpm] = useState('');
  const [tpm, setTpm] = useState('');
  const [errors, setErrors] = useState<Errors>({});

  const reset = (from?: LimitFieldsView) => {
    setBudget(text(from?.budget_usd));
    setPeriod(from && from.budget_usd !== null ? (from.budget_period ?? '') : 'monthly');
    setRpm(text(from?.rpm_limit));
    setTpm(text(from?.tpm_limit));
    setErrors({});
  };

  /** The fields as a body (`null` for empty ones), or `null` when invalid. */
  const check = (): Required<LimitFieldsBody> | null => {
    const found: Errors = {
      budget: budgetAmount(budget) === null ? 'An amount in USD, 0 or more.' : undefined,
      rpm: perMinute(rpm) === null ? 'A whole number, 1 or more.' : undefined,
      tpm: perMinute(tpm) === null ? 'A whole number, 1 or more.' : undefined,
    };
    setErrors(found);
    if (found.budget || found.rpm || found.tpm) return null;
    const usd = budgetAmount(budget) ?? null;
    return {
      budget_usd: usd,
      budget_period: usd === null ? null : period || null,
      rpm_limit: perMinute(rpm) ?? null,
      tpm_limit: perMinute(tpm) ?? null,
    };
  };

  const fields = (
    <>
      <TextField label="Budget (USD)" inputMode="decimal" placeholder="e.g. 25" value={budget} onChange={(e) => setBudget(e.target.value)} error={errors.budget} hint={`${emptyHint} Refused (429) once spent.`} />
      <SelectField label="Budget period" value={period} onChange={(e) => setPeriod(e.target.value as BudgetPeriod | '')} hint="Resets at UTC midnight, Monday or the 1st.">
        <option value="daily">per day</option>
        <option value="weekly">per week</option>
        <option value="monthly">per month</option>
        <option value="">never resets</option>
      </SelectField>
      <TextField label="Requests / min" inputMode="numeric" value={rpm} onChange={(e) => setRpm(e.target.value)} error={errors.rpm} hint={emptyHint} />
      <TextField label="Tokens / min" inputMode="numeric" value={tpm} onChange={(e) => setTpm(e.target.value)} error={errors.tpm} hint={emptyHint} />
    </>
  );
  return { fields, check, reset };
}
