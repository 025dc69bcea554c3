import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import type { RegistryProvider } from '../../api/types';
import { mockFetch, renderAt } from '../../test/utils';
import { completeOrder, moveItem, PriorityEditor } from './PriorityEditor';

const REGISTRY: RegistryProvider[] = [
  { id: 'primary', display_name: 'Primary', auth_kinds: ['device'], enabled: true, multi_account: true },
  { id: 'messages_vendor', display_name: 'Messages', auth_kinds: ['oauth_pkce'], enabled: true, multi_account: true },
  { id: 'custom', display_name: 'Custom', auth_kinds: ['api_key'], enabled: true, multi_account: true },
];

describe('provider order', () => {
  it('moves items and completes a partial order in registry order', () => {
    expect(moveItem(['a', 'b', 'c'], 2, 0)).toEqual(['c', 'a', 'b']);
    expect(moveItem(['a', 'b'], 0, 5)).toEqual(['a', 'b']);
    expect(completeOrder(['custom'], ['primary', 'messages_vendor', 'custom'])).toEqual(['custom', 'primary', 'messages_vendor']);
  });

  it('reorders with the arrow buttons and saves the new order', async () => {
    document.cookie = 'csrf_token=c';
    const { calls } = mockFetch({
      'GET /_ui/api/providers/priority': { body: { order: ['primary'] } },
      'POST /_ui/api/providers/priority': { body: { order: ['custom', 'primary', 'messages_vendor'] } },
    });
    renderAt(<PriorityEditor registry={REGISTRY} />, '/providers');
    const save = await screen.findByRole('button', { name: 'Save order' });
    expect(save).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Move Primary up' })).toBeDisabled();
    await userEvent.click(screen.getByRole('button', { name: 'Move Custom up' }));
    await userEvent.click(screen.getByRole('button', { name: 'Move Custom up' }));
    expect(screen.getByText('Custom moved to position 1 of 3')).toBeInTheDocument();
    const items = screen.getAllByRole('listitem').map((li) => li.textContent);
    expect(items[0]).toContain('Custom');
    await userEvent.click(save);
    await waitFor(() => expect(calls.find((c) => c.method === 'POST')?.body).toEqual({ order: ['custom', 'primary', 'messages_vendor'] }));
    expect(await screen.findByText(/Order saved/)).toBeInTheDocument();
  });
});
