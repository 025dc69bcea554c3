import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { mockFetch, renderAt } from '../../test/utils';
import { chainsOf, FallbackChains } from './Fallbacks';
import { UserLimitsForm } from './UserLimits';

describe('fallback chains', () => {
  it('shows the stored chains, edits one and saves them all', async () => {
    const stored = { chains: [{ model: 'claude-sonnet-4.5', fallbacks: ['completions_vendor/gpt-4o'] }] };
    const { calls } = mockFetch({
      'GET /_ui/api/admin/fallbacks': { body: stored },
      'PUT /_ui/api/admin/fallbacks': (call) => new Response(JSON.stringify(call.body)),
    });
    renderAt(<FallbackChains />, '/admin/models');
    expect(await screen.findByDisplayValue('claude-sonnet-4.5')).toBeInTheDocument();
    const then = screen.getByLabelText('Then');
    await userEvent.clear(then);
    await userEvent.type(then, 'custom/llama3, completions_vendor/gpt-4o');
    await userEvent.click(screen.getByRole('button', { name: 'Add a chain' }));
    await userEvent.click(screen.getByRole('button', { name: 'Save chains' }));
    expect(await screen.findByText(/every replica uses them/)).toBeInTheDocument();
    expect(calls.find((c) => c.method === 'PUT')!.body).toEqual({
      chains: [{ model: 'claude-sonnet-4.5', fallbacks: ['custom/llama3', 'completions_vendor/gpt-4o'] }],
    });
    expect(chainsOf([{ model: ' ', fallbacks: 'x' }])).toEqual({ chains: [] });
  });

  it('edits a user limits and sends nulls for empty fields', async () => {
    const { calls } = mockFetch({
      'GET /_ui/api/admin/users/u1/limits': { body: { budget_usd: 10, budget_period: 'weekly', rpm_limit: 5, tpm_limit: null } },
      'PATCH /_ui/api/admin/users/u1/limits': { body: { ok: true } },
    });
    renderAt(<UserLimitsForm userId="u1" />, '/admin/users/u1');
    expect(await screen.findByDisplayValue('10')).toBeInTheDocument();
    await userEvent.clear(screen.getByLabelText('Requests / min'));
    await userEvent.type(screen.getByLabelText('Tokens / min'), '1000');
    await userEvent.click(screen.getByRole('button', { name: 'Save limits' }));
    expect(await screen.findByText(/apply to the user/)).toBeInTheDocument();
    expect(calls.find((c) => c.method === 'PATCH')!.body).toEqual({ budget_usd: 10, budget_period: 'weekly', rpm_limit: null, tpm_limit: 1000 });
  });
});
