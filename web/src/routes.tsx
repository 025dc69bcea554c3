// Every page of the console. Pages are split into their own chunks, loaded
// when first visited; the sign-in pages and the frame are in the main chunk.

import { lazy, Suspense, type ComponentType, type ReactNode } from 'react';
import type { RouteObject } from 'react-router';
import { Loading } from './components/ui';
import { Gate, RequireAdmin } from './components/Gate';
import { Shell } from './components/Shell';
import { Login } from './pages/auth/Login';
import { Setup } from './pages/auth/Setup';
import { NotFound } from './pages/NotFound';

function page(load: () => Promise<{ default: ComponentType }>): ReactNode {
  const Component = lazy(load);
  return (
    <Suspense fallback={<Loading />}>
      <Component />
    </Suspense>
  );
}

export const routes: RouteObject[] = [
  { path: '/login', element: <Login /> },
  { path: '/setup', element: <Setup /> },
  {
    element: <Gate />,
    children: [
      { path: '/setup-2fa', element: page(() => import('./pages/auth/TwoFactorSetup')) },
      { path: '/change-password', element: page(() => import('./pages/auth/ChangePassword')) },
      {
        element: <Shell />,
        children: [
          { index: true, element: page(() => import('./pages/Overview')) },
          { path: 'keys', element: page(() => import('./pages/Keys')) },
          { path: 'providers', element: page(() => import('./pages/providers/Providers')) },
          { path: 'usage', element: page(() => import('./pages/Usage')) },
          { path: 'playground', element: page(() => import('./pages/playground/Playground')) },
          { path: 'account', element: page(() => import('./pages/auth/ChangePassword')) },
          {
            path: 'admin',
            element: <RequireAdmin />,
            children: [
              { path: 'users', element: page(() => import('./pages/admin/Users')) },
              { path: 'users/:id', element: page(() => import('./pages/admin/UserDetail')) },
              { path: 'domains', element: page(() => import('./pages/admin/Domains')) },
              { path: 'sso', element: page(() => import('./pages/admin/Sso')) },
              { path: 'config', element: page(() => import('./pages/admin/Config')) },
              { path: 'models', element: page(() => import('./pages/admin/Models')) },
              { path: 'pool', element: page(() => import('./pages/admin/Pool')) },
              { path: 'guardrails', element: page(() => import('./pages/admin/Guardrails')) },
              { path: 'logs', element: page(() => import('./pages/admin/Logs')) },
              { path: 'system', element: page(() => import('./pages/admin/System')) },
              { path: '*', element: <NotFound /> },
            ],
          },
          { path: '*', element: <NotFound /> },
        ],
      },
    ],
  },
];
