// Test helpers: a fetch mock answering by "METHOD /path", and rendering a
// page inside the app's providers and a memory router.

import { QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { createMemoryRouter, RouterProvider, type RouteObject } from 'react-router';
import { vi } from 'vitest';
import { makeQueryClient } from '../App';

export interface Call {
  method: string;
  path: string;
  url: string;
  headers: Headers;
  body: unknown;
  credentials?: RequestCredentials;
}

type Answer = { status?: number; body?: unknown; headers?: Record<string, string> } | ((call: Call) => Response | Promise<Response>);

export function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
}

/** Mock fetch: `routes['POST /_ui/api/keys']` answers that call; unknown calls get a 404 JSON error. */
export function mockFetch(routes: Record<string, Answer>) {
  const calls: Call[] = [];
  const fn = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const u = new URL(url, 'http://localhost');
    const method = (init.method ?? 'GET').toUpperCase();
    const call: Call = {
      method,
      path: u.pathname,
      url: u.pathname + u.search,
      headers: new Headers(init.headers),
      body: typeof init.body === 'string' ? JSON.parse(init.body) : init.body,
      credentials: init.credentials,
    };
    calls.push(call);
    const answer = routes[`${method} ${u.pathname}`];
    if (!answer) return json(404, { error: { message: `no route for ${u.pathname}`, type: 'not_found' } });
    if (typeof answer === 'function') return answer(call);
    return json(answer.status ?? 200, answer.body ?? {});
  });
  vi.stubGlobal('fetch', fn);
  return { fn, calls };
}

export function renderRoutes(routes: RouteObject[], path: string) {
  const queryClient = makeQueryClient();
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const utils = render(
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>,
  );
  return { ...utils, router, queryClient };
}

/** Render one element at `path`, with a catch-all that shows where navigation went. */
export function renderAt(element: ReactNode, path = '/', routePath = path.split('?')[0]!) {
  return renderRoutes(
    [
      { path: routePath, element },
      { path: '*', element: <Where /> },
    ],
    path,
  );
}

import { useLocation } from 'react-router';
function Where() {
  const l = useLocation();
  return <p data-testid="where">{l.pathname + l.search}</p>;
}
