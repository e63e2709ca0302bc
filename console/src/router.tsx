import { useCallback, useMemo, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';
import type { z } from 'zod';
import { textOf } from './api/client.ts';

/**
 * The console's routes live under /console; the api answers every path below it with the page, so a link
 * copied from the address bar opens the same view. Navigation is the History API's; one event tells every
 * subscriber that the location moved.
 */
export const BASE = '/console';
const MOVED = 'portcullis:navigated';

function subscribe(onChange: () => void): () => void {
  window.addEventListener('popstate', onChange);
  window.addEventListener(MOVED, onChange);
  return () => {
    window.removeEventListener('popstate', onChange);
    window.removeEventListener(MOVED, onChange);
  };
}

const currentHref = () => `${window.location.pathname}${window.location.search}`;

/** The path inside the console (`/users/abc`) and the query string of the address bar. */
export function useLocation(): { readonly path: string; readonly search: string } {
  const href = useSyncExternalStore(subscribe, currentHref, () => '/console/');
  return useMemo(() => {
    const url = new URL(href, 'http://console.local');
    const inside = url.pathname.startsWith(BASE) ? url.pathname.slice(BASE.length) : url.pathname;
    return { path: inside === '' ? '/' : inside, search: url.search };
  }, [href]);
}

/** A console path (`/users?q=ann`) as the address it is served at. */
export function hrefOf(to: string): string {
  return to.startsWith(BASE) ? to : `${BASE}${to.startsWith('/') ? to : `/${to}`}`;
}

export function navigate(to: string, options: { readonly replace?: boolean } = {}): void {
  const href = hrefOf(to);
  if (href === currentHref()) return;
  if (options.replace) window.history.replaceState(null, '', href);
  else window.history.pushState(null, '', href);
  window.dispatchEvent(new Event(MOVED));
}

/** A real link (open in a new tab, copy the address) that moves within the console without a reload. */
export function Link({ to, onClick, ...rest }: Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { readonly to: string }) {
  const follow = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={hrefOf(to)} onClick={follow} {...rest} />;
}

/** `/users/:id` against `/users/abc`: the parameters, or null when the path is another route's. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/').filter(Boolean);
  const have = path.split('/').filter(Boolean);
  if (want.length !== have.length) return null;
  const params: Record<string, string> = {};
  for (const [index, part] of want.entries()) {
    const actual = have[index] ?? '';
    if (part.startsWith(':')) params[part.slice(1)] = decodeURIComponent(actual);
    else if (part !== actual) return null;
  }
  return params;
}

/** The query string as an object: a name given twice becomes one comma-joined value, as the api reads it. */
function searchObject(search: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(search)) values[name] = name in values ? `${values[name]},${value}` : value;
  return values;
}

function searchText(values: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)) continue;
    search.set(name, Array.isArray(value) ? value.map(textOf).join(',') : textOf(value));
  }
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * A view's state (page, sort, filters) kept in the address bar, read through its schema: the schema's
 * fields `.catch()` what a hand-edited or stale link gets wrong, so any link opens some valid view.
 */
export function useSearchState<S extends z.ZodType<Record<string, unknown>>>(schema: S): readonly [z.output<S>, (patch: Partial<z.output<S>>, options?: { readonly replace?: boolean }) => void] {
  const { path, search } = useLocation();
  const state = useMemo(() => schema.parse(searchObject(search)), [schema, search]);
  const update = useCallback(
    (patch: Partial<z.output<S>>, options: { readonly replace?: boolean } = {}) => {
      navigate(`${path}${searchText({ ...state, ...patch })}`, options);
    },
    [path, state],
  );
  return [state, update] as const;
}
