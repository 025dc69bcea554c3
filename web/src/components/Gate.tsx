// Who may see what: the gate in front of every signed-in page (setup done,
// signed in, forced steps first) and the admin-only guard.

import { Link, Navigate, Outlet, useLocation } from 'react-router';
import { ApiError } from '../api/client';
import { isAdmin, requiredStep, useMe, useStatus } from '../api/session';
import { ErrorNotice, Loading } from './ui';

export function Gate() {
  const location = useLocation();
  const status = useStatus();
  const me = useMe();
  const here = location.pathname + location.search;

  if (status.data && !status.data.setup_complete) return <Navigate to="/setup" replace />;
  if (me.isError) {
    if (me.error instanceof ApiError && me.error.status === 401) {
      return <Navigate to={`/login?next=${encodeURIComponent(here)}`} replace />;
    }
    return (
      <main className="centered">
        <ErrorNotice error={me.error} title="The console could not load your account" onRetry={() => void me.refetch()} />
      </main>
    );
  }
  if (me.isPending) {
    return (
      <main className="centered">
        <Loading />
      </main>
    );
  }
  const step = requiredStep(me.data);
  if (step && location.pathname !== step) return <Navigate to={step} replace />;
  return <Outlet />;
}

export function RequireAdmin() {
  const me = useMe();
  if (!isAdmin(me.data)) return <NotAllowed />;
  return <Outlet />;
}

export function NotAllowed() {
  return (
    <div className="page">
      <h1>Not allowed</h1>
      <div className="state state-empty" role="alert">
        <strong>This page is for administrators</strong>
        <p>
          Your account has the User role; ask an administrator if you need access. <Link to="/">Back to the overview</Link>.
        </p>
      </div>
    </div>
  );
}
