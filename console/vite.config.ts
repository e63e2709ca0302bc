import react from '@vitejs/plugin-react';
import { defaultClientConditions, defineConfig } from 'vite';

/** Served by the api under /console; `npm start` and CI build it (scripts/build-console.ts). */
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  // @portcullis/client is built from its sources here, not from the dist it publishes (see its package.json).
  resolve: { conditions: ['portcullis-source', ...defaultClientConditions] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // The manifest tells the size check which files the first page loads.
    manifest: true,
    sourcemap: true,
    reportCompressedSize: true,
  },
  server: {
    // `npm run dev -w console` against a running `npm start`.
    proxy: { '/api': 'http://localhost:3000', '/ops': 'http://localhost:3000', '/metrics': 'http://localhost:3000' },
  },
});
