// Vite: the console is served by the gateway under /_ui/; in development the
// API and /v1 are proxied to a local gateway (GATEWAY_URL, default :9999).
import { defineConfig } from 'vitest/config';
import react from '@vitejs/plugin-react';

const gateway = process.env.GATEWAY_URL ?? 'http://127.0.0.1:9999';

export default defineConfig({
  base: '/_ui/',
  plugins: [react()],
  build: {
    target: 'es2022',
    // No inline scripts: the gateway's CSP is `default-src 'self'`.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    rollupOptions: {
      output: {
        // Libraries change less often than the console: their own chunk stays cached across releases.
        manualChunks(id) {
          if (/node_modules\/(react|react-dom|scheduler|react-router|@tanstack)\//.test(id)) return 'vendor';
          return undefined;
        },
      },
    },
  },
  server: {
    port: 5173,
    proxy: {
      '/_ui/api': { target: gateway, changeOrigin: false },
      '/v1': { target: gateway, changeOrigin: false },
    },
  },
  test: {
    environment: 'jsdom',
    setupFiles: ['./src/test/setup.ts'],
    css: false,
    restoreMocks: true,
  },
});
