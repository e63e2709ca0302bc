import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** `npm run dev -w examples/react-app` serves it on :5173, another origin than the api's :3000. */
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true },
  server: { port: 5173 },
});
