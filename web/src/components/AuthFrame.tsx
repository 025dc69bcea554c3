// The frame of the pages before the console: sign-in, setup, forced steps.
import type { ReactNode } from 'react';
import { useEffect } from 'react';
import { ThemeSwitch } from './Shell';

export function AuthFrame({ title, children, wide }: { title: string; children: ReactNode; wide?: boolean }) {
  useEffect(() => {
    document.title = `${title} · Gateway console`;
  }, [title]);
  return (
    <div className="auth">
      <main className={`auth-card${wide ? ' auth-card-wide' : ''}`}>
        <div className="brand brand-auth">
          <span className="brand-mark" aria-hidden="true" />
          <span>Gateway console</span>
        </div>
        <h1>{title}</h1>
        {children}
      </main>
      <footer className="auth-foot">
        <ThemeSwitch />
      </footer>
    </div>
  );
}
