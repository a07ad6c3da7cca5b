import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// `npm run dev` proxies the service (started with `npm start` on 8080) so the session cookie is same-origin.
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1500 },
  server: { proxy: { '/api': 'http://127.0.0.1:8080', '/console/api': 'http://127.0.0.1:8080', '/uploads': 'http://127.0.0.1:8080', '/downloads': 'http://127.0.0.1:8080' } },
});
