// The frame of the signed-in console: navigation (admin entries for admins
// only), the account menu, the theme switch, and the page.

import { useQueryClient } from '@tanstack/react-query';
import { NavLink, Outlet, useNavigate } from 'react-router';
import { api } from '../api/client';
import { isAdmin, useMe, useStatus } from '../api/session';
import { type ThemeChoice, useTheme } from '../lib/theme';

const MAIN = [
  { to: '/', label: 'Overview', end: true },
  { to: '/playground', label: 'Playground' },
  { to: '/keys', label: 'API keys' },
  { to: '/providers', label: 'Providers' },
  { to: '/usage', label: 'Usage' },
];

const ADMIN = [
  { to: '/admin/users', label: 'Users' },
  { to: '/admin/domains', label: 'Domains' },
  { to: '/admin/sso', label: 'SSO' },
  { to: '/admin/config', label: 'Configuration' },
  { to: '/admin/models', label: 'Models' },
  { to: '/admin/pool', label: 'Provider pool' },
  { to: '/admin/guardrails', label: 'Guardrails' },
  { to: '/admin/logs', label: 'Logs' },
  { to: '/admin/system', label: 'System' },
];

const THEMES: { value: ThemeChoice; label: string }[] = [
  { value: 'system', label: 'System' },
  { value: 'light', label: 'Light' },
  { value: 'dark', label: 'Dark' },
];

export function ThemeSwitch() {
  const [theme, setTheme] = useTheme();
  return (
    <div className="theme-switch" role="radiogroup" aria-label="Theme">
      {THEMES.map((t) => (
        <button
          key={t.value}
          type="button"
          role="radio"
          aria-checked={theme === t.value}
          className={theme === t.value ? 'on' : ''}
          onClick={() => setTheme(t.value)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function Shell() {
  const me = useMe();
  const status = useStatus();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const admin = isAdmin(me.data);

  const signOut = async () => {
    try {
      await api('/auth/logout', { method: 'POST', body: {} });
    } finally {
      queryClient.clear();
      navigate('/login', { replace: true });
    }
  };

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <aside className="sidebar">
        <div className="brand">
          <span className="brand-mark" aria-hidden="true" />
          <span>
            Gateway
            {status.data && <small>v{status.data.version}</small>}
          </span>
        </div>
        <nav aria-label="Console">
          <ul>
            {MAIN.map((l) => (
              <li key={l.to}>
                <NavLink to={l.to} end={l.end}>
                  {l.label}
                </NavLink>
              </li>
            ))}
          </ul>
          {admin && (
            <>
              <h2 className="nav-group" id="nav-admin">
                Administration
              </h2>
              <ul aria-labelledby="nav-admin">
                {ADMIN.map((l) => (
                  <li key={l.to}>
                    <NavLink to={l.to}>{l.label}</NavLink>
                  </li>
                ))}
              </ul>
            </>
          )}
        </nav>
        <div className="sidebar-foot">
          {me.data && (
            <div className="who">
              <span className="who-email" title={me.data.email}>
                {me.data.email}
              </span>
              <span className="who-role">{me.data.role === 'Admin' ? 'Administrator' : 'User'}</span>
            </div>
          )}
          <ThemeSwitch />
          <div className="foot-links">
            <NavLink to="/account">Account</NavLink>
            <button type="button" className="linklike" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
        </div>
      </aside>
      <main id="main" className="content" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
