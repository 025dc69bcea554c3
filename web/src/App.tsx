// The app: server state (TanStack Query), the router under /_ui, and the
// 401 handler that sends the user to sign-in and back.

import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { ApiError, setUnauthorizedHandler } from './api/client';
import { routes } from './routes';

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // A 4xx will not change by asking again; network and 5xx get one retry.
        retry: (count, error) => !(error instanceof ApiError && error.status >= 400 && error.status < 500) && count < 1,
        staleTime: 10_000,
        refetchIntervalInBackground: false,
      },
      mutations: { retry: false },
    },
  });
}

export function App() {
  const [queryClient] = useState(makeQueryClient);
  const [router] = useState(() => createBrowserRouter(routes, { basename: '/_ui' }));
  useEffect(() => {
    setUnauthorizedHandler((returnTo) => {
      queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== 'status' });
      void router.navigate(`/login?next=${encodeURIComponent(returnTo)}`, { replace: true });
    });
    return () => setUnauthorizedHandler(null);
  }, [queryClient, router]);
  return (
    <QueryClientProvider client={queryClient}>
      <RouterProvider router={router} />
    </QueryClientProvider>
  );
}
