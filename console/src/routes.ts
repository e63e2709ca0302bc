import { lazy, type ComponentType, type LazyExoticComponent } from 'react';

export interface ConsoleRoute {
  readonly pattern: string;
  readonly page: LazyExoticComponent<ComponentType<{ readonly params: Record<string, string> }>>;
  /** In the navigation, with its key for `g` + key. */
  readonly nav?: { readonly label: string; readonly key: string };
}

// Each page is its own chunk: the first page an operator opens loads the shell and that page only.
export const routes: readonly ConsoleRoute[] = [
  { pattern: '/', page: lazy(() => import('./pages/overview.tsx')), nav: { label: 'Overview', key: 'o' } },
  { pattern: '/users', page: lazy(() => import('./pages/users.tsx')), nav: { label: 'Users', key: 'u' } },
  { pattern: '/users/:id', page: lazy(() => import('./pages/user.tsx')) },
  { pattern: '/sessions', page: lazy(() => import('./pages/sessions.tsx')), nav: { label: 'Sessions', key: 's' } },
  { pattern: '/organizations', page: lazy(() => import('./pages/organizations.tsx')), nav: { label: 'Organizations', key: 'g' } },
  { pattern: '/organizations/:id', page: lazy(() => import('./pages/organization.tsx')) },
  { pattern: '/audit', page: lazy(() => import('./pages/audit.tsx')), nav: { label: 'Audit trail', key: 'a' } },
  { pattern: '/audit/events/:position', page: lazy(() => import('./pages/audit-event.tsx')) },
  { pattern: '/audit/time-travel', page: lazy(() => import('./pages/time-travel.tsx')), nav: { label: 'Time travel', key: 't' } },
  { pattern: '/security', page: lazy(() => import('./pages/security.tsx')), nav: { label: 'Security', key: 'x' } },
  { pattern: '/projections', page: lazy(() => import('./pages/projections.tsx')), nav: { label: 'Projections', key: 'p' } },
  { pattern: '/mail', page: lazy(() => import('./pages/mail.tsx')), nav: { label: 'Mail', key: 'm' } },
];
