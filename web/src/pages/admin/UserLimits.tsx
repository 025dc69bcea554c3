// Admin: one user's budget and rate limits, which hold for all the user's
// keys together (beside each key's own limits).

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useState } from 'react';
import { api } from '../../api/client';
import type { BudgetPeriod, LimitFieldsBody, LimitFieldsView } from '../../api/types';
import { Button, Notice, QueryView, SelectField, TextField } from '../../components/ui';
import { budgetAmount, perMinute } from '../Keys';

const text = (n: number | null) => (n === null ? '' : String(n));

export function UserLimitsForm({ userId }: { userId: string }) {
  const path = `/admin/users/${encodeURIComponent(userId)}/limits`;
  const queryClient = useQueryClient();
  const limits = useQuery({ queryKey: ['user-limits', userId], queryFn: () => api<LimitFieldsView>(path) });
  const [budget, setBudget] = useState('');
  const [period, setPeriod] = useState<BudgetPeriod | ''>('monthly');
  const [rpm, setRpm] = useState('');
  const [tpm, setTpm] = useState('');
  const [errors, setErrors] = useState<{ budget?: string; rpm?: string; tpm?: string }>({});
  useEffect(() => {
    if (!limits.data) return;
    setBudget(text(limits.data.budget_usd));
    setPeriod(limits.data.budget_usd === null ? 'monthly' : (limits.data.budget_period ?? ''));
    setRpm(text(limits.data.rpm_limit));
    setTpm(text(limits.data.tpm_limit));
  }, [limits.data]);
  const save = useMutation({
    mutationFn: (body: LimitFieldsBody) => api(path, { method: 'PATCH', body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['user-limits', userId] }),
  });
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    const found = {
      budget: budgetAmount(budget) === null ? 'An amount in USD, 0 or more.' : undefined,
      rpm: perMinute(rpm) === null ? 'A whole number, 1 or more.' : undefined,
      tpm: perMinute(tpm) === null ? 'A whole number, 1 or more.' : undefined,
    };
    setErrors(found);
    if (found.budget || found.rpm || found.tpm) return;
    save.mutate({
      budget_usd: budgetAmount(budget) ?? null,
      budget_period: period || null,
      rpm_limit: perMinute(rpm) ?? null,
      tpm_limit: perMinute(tpm) ?? null,
    });
  };
  return (
    <QueryView query={limits} loadingLabel="Loading the limits…">
      {() => (
        <form onSubmit={submit} noValidate className="inline-form">
          <TextField label="Budget (USD)" inputMode="decimal" value={budget} onChange={(e) => setBudget(e.target.value)} error={errors.budget} hint="Empty: no budget." />
          <SelectField label="Budget period" value={period} onChange={(e) => setPeriod(e.target.value as BudgetPeriod | '')}>
            <option value="daily">per day</option>
            <option value="weekly">per week</option>
            <option value="monthly">per month</option>
            <option value="">never resets</option>
          </SelectField>
          <TextField label="Requests / min" inputMode="numeric" value={rpm} onChange={(e) => setRpm(e.target.value)} error={errors.rpm} hint="Empty: no limit." />
          <TextField label="Tokens / min" inputMode="numeric" value={tpm} onChange={(e) => setTpm(e.target.value)} error={errors.tpm} hint="Empty: no limit." />
          <Button type="submit" variant="primary" busy={save.isPending}>
            Save limits
          </Button>
          {save.isSuccess && <Notice tone="success">Saved: the limits apply to the user's next request.</Notice>}
          {save.isError && <Notice tone="error">{save.error.message}</Notice>}
        </form>
      )}
    </QueryView>
  );
}
