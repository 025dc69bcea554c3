// Admin: one user's budget and rate limits, which hold for all the user's
// keys together (beside each key's own limits).

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect } from 'react';
import { api } from '../../api/client';
import type { LimitFieldsBody, LimitFieldsView } from '../../api/types';
import { useLimitFields } from '../../components/LimitFields';
import { Button, Notice, QueryView } from '../../components/ui';

export function UserLimitsForm({ userId }: { userId: string }) {
  const path = `/admin/users/${encodeURIComponent(userId)}/limits`;
  const queryClient = useQueryClient();
  const limits = useQuery({ queryKey: ['user-limits', userId], queryFn: () => api<LimitFieldsView>(path) });
  const form = useLimitFields('Empty: none.');
  const { reset } = form;
  useEffect(() => reset(limits.data), [limits.data]);
  const save = useMutation({
    mutationFn: (body: LimitFieldsBody) => api(path, { method: 'PATCH', body }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ['user-limits', userId] }),
  });
  const submit = (ev: FormEvent) => {
    ev.preventDefault();
    const body = form.check();
    if (body) save.mutate(body);
  };
  return (
    <QueryView query={limits} loadingLabel="Loading the limits…">
      {() => (
        <form onSubmit={submit} noValidate className="inline-form">
          {form.fields}
          <Button type="submit" variant="primary" busy={save.isPending}>
            Save limits
          </Button>
          {save.isSuccess && <Notice tone="success">Saved: the limits apply to the user&apos;s next request.</Notice>}
          {save.isError && <Notice tone="error">{save.error.message}</Notice>}
        </form>
      )}
    </QueryView>
  );
}
