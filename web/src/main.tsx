// Entry: theme first (no flash of the wrong one), then the app.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { applyTheme, storedTheme } from './lib/theme';
import { App } from './App';
import './styles/app.css';

applyTheme(storedTheme());

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}
