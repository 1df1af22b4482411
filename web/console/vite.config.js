import { defineConfig } from 'vite';

// The bundle is written into the Go package that embeds it; the broker
// serves it at /console/. `npm run dev` proxies the admin API to a broker
// on localhost:8080 (GREGOR_HTTP overrides).
export default defineConfig({
  base: '/console/',
  build: {
    outDir: '../../core/httpapi/console',
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: {
    proxy: {
      '/api': process.env.GREGOR_HTTP || 'http://127.0.0.1:8080',
      '/topics': process.env.GREGOR_HTTP || 'http://127.0.0.1:8080',
    },
  },
});
