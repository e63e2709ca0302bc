import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ConsoleApp, createQueryClient } from './app.tsx';
import './styles.css';

const root = document.getElementById('root');
if (!root) throw new Error('the page has no #root');
createRoot(root).render(
  <StrictMode>
    <ConsoleApp queries={createQueryClient()} />
  </StrictMode>,
);
