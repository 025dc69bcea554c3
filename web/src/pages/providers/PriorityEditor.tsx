// The caller's provider order (lower first): reordered by dragging or by
// the arrow buttons (keyboard), saved explicitly.

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, errorMessage } from '../../api/client';
import type { ProviderId, ProviderOrder, RegistryProvider } from '../../api/types';
import { Button, ErrorNotice, Loading, Notice, Section } from '../../components/ui';
import { PROVIDER_NAMES } from './names';

/** Move the item at `from` to `to`, returning a new array. */
export function moveItem<T>(list: T[], from: number, to: number): T[] {
  if (from === to || from < 0 || to < 0 || from >= list.length || to >= list.length) return list;
  const next = list.slice();
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item as T);
  return next;
}

/** The full order: the saved one, then providers never ordered, in registry order. */
export function completeOrder(saved: ProviderId[], registry: ProviderId[]): ProviderId[] {
  const known = saved.filter((id) => registry.includes(id));
  return [...known, ...registry.filter((id) => !known.includes(id))];
}

export function PriorityList({
  order,
  names,
  onChange,
}: {
  order: ProviderId[];
  names: Record<string, string>;
  onChange: (next: ProviderId[], announcement: string) => void;
}) {
  const [dragging, setDragging] = useState<number | null>(null);
  const [over, setOver] = useState<number | null>(null);
  const move = (from: number, to: number) => {
    const id = order[from];
    if (id === undefined) return;
    onChange(moveItem(order, from, to), `${names[id] ?? id} moved to position ${to + 1} of ${order.length}`);
  };
  return (
    <ol className="priority-list" aria-label="Provider order, first is tried first">
      {order.map((id, i) => (
        <li
          key={id}
          draggable
          className={`${dragging === i ? 'dragging' : ''}${over === i && dragging !== i ? ' drop-target' : ''}`}
          onDragStart={(e) => {
            setDragging(i);
            e.dataTransfer.effectAllowed = 'move';
            e.dataTransfer.setData('text/plain', id);
          }}
          onDragOver={(e) => {
            e.preventDefault();
            setOver(i);
          }}
          onDragLeave={() => setOver((o) => (o === i ? null : o))}
          onDrop={(e) => {
            e.preventDefault();
            if (dragging !== null) move(dragging, i);
            setDragging(null);
            setOver(null);
          }}
          onDragEnd={() => {
            setDragging(null);
            setOver(null);
          }}
        >
          <span className="drag-handle" aria-hidden="true">
            ⋮⋮
          </span>
          <span className="priority-rank">{i + 1}</span>
          <span className="priority-name">{names[id] ?? id}</span>
          <span className="priority-buttons">
            <Button small variant="ghost" aria-label={`Move ${names[id] ?? id} up`} disabled={i === 0} onClick={() => move(i, i - 1)}>
              ↑
            </Button>
            <Button
              small
              variant="ghost"
              aria-label={`Move ${names[id] ?? id} down`}
              disabled={i === order.length - 1}
              onClick={() => move(i, i + 1)}
            >
              ↓
            </Button>
          </span>
        </li>
      ))}
    </ol>
  );
}

export function PriorityEditor({ registry }: { registry: RegistryProvider[] }) {
  const queryClient = useQueryClient();
  const saved = useQuery({
    queryKey: ['provider-priority'],
    queryFn: () => api<ProviderOrder>('/providers/priority'),
  });
  const registryIds = registry.map((p) => p.id);
  const names: Record<string, string> = Object.fromEntries(
    registry.map((p) => [p.id, p.display_name || PROVIDER_NAMES[p.id] || p.id]),
  );
  const [order, setOrder] = useState<ProviderId[] | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [result, setResult] = useState<{ ok: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const base = saved.data ? completeOrder(saved.data.order, registryIds) : null;
  useEffect(() => setOrder(null), [saved.data]);
  const current = order ?? base;
  const dirty = order !== null && base !== null && order.join() !== base.join();

  const save = async () => {
    if (!current) return;
    setBusy(true);
    setResult(null);
    try {
      await api<ProviderOrder>('/providers/priority', { method: 'POST', body: { order: current } });
      await queryClient.invalidateQueries({ queryKey: ['provider-priority'] });
      setResult({ ok: true, text: 'Order saved: new requests use it now.' });
    } catch (e) {
      setResult({ ok: false, text: errorMessage(e) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <Section title="Order">
      <p className="muted small">
        When a model is served by several providers you have accounts for, the first in this list is tried first.
        Drag a row, or use its arrow buttons.
      </p>
      {saved.isPending && <Loading />}
      {saved.isError && <ErrorNotice error={saved.error} onRetry={() => void saved.refetch()} />}
      {current && (
        <>
          <PriorityList
            order={current}
            names={names}
            onChange={(next, text) => {
              setOrder(next);
              setAnnouncement(text);
              setResult(null);
            }}
          />
          <p className="sr-only" aria-live="polite">
            {announcement}
          </p>
          <div className="row">
            <Button variant="primary" disabled={!dirty} busy={busy} onClick={() => void save()}>
              Save order
            </Button>
            <Button disabled={!dirty} onClick={() => setOrder(null)}>
              Reset
            </Button>
            {dirty && <span className="muted small">Unsaved changes</span>}
          </div>
          {result && <Notice tone={result.ok ? 'success' : 'error'}>{result.text}</Notice>}
        </>
      )}
    </Section>
  );
}
