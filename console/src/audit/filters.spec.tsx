// @vitest-environment happy-dom
import { auditEndpoints } from '@portcullis/contracts/api/audit';
import { describe, expect, it } from 'vitest';
import { urlOf } from '../api/client.ts';
import { auditView, filterCount, filterOf, isoOfLocal, localOfIso, previousCursor, searchQueryOf, splitValues, viewOfSearch } from './filters.ts';

describe('the audit view in the address bar', () => {
  it('reads several values per filter, comma-separated or repeated, each once', () => {
    const view = viewOfSearch('?user=u1,u2&user=u3&user=u1&organization=o1&actor=a1&ip=203.0.113.7,10.0.0.0/8&type=user.banned.v1,session.created.v2&stream=user-u1');
    expect(view.user).toEqual(['u1', 'u2', 'u3']);
    expect(view.organization).toEqual(['o1']);
    expect(view.actor).toEqual(['a1']);
    expect(view.ip).toEqual(['203.0.113.7', '10.0.0.0/8']);
    expect(view.type).toEqual(['user.banned.v1', 'session.created.v2']);
    expect(view.stream).toEqual(['user-u1']);
    expect(view.order).toBe('newest');
    expect(view.limit).toBe(50);
    expect(view.cursor).toBeUndefined();
  });

  it('drops what the api would refuse and keeps the rest of the view', () => {
    const view = viewOfSearch('?ip=not-an-ip,198.51.100.0/24,10.0.0.0/33&actorKind=admin,wizard,user&order=sideways&limit=0&cursor=-3&from=yesterday&to=2026-01-02');
    expect(view.ip).toEqual(['198.51.100.0/24']);
    expect(view.actorKind).toEqual(['admin', 'user']);
    expect(view.order).toBe('newest');
    expect(view.limit).toBe(50);
    expect(view.cursor).toBeUndefined();
    expect(view.from).toBeUndefined();
    expect(view.to).toBe('2026-01-02');
  });

  it('asks the search for every filter, the page and its cursor; the export for the filters alone', () => {
    const view = viewOfSearch('?user=u1,u2&actorKind=anonymous&ip=127.0.0.1&type=a.b.v1,c.d.v1&typePrefix=credentials.&from=2026-01-01T00:00:00.000Z&order=oldest&cursor=41&limit=25');
    expect(searchQueryOf(view)).toEqual({
      user: ['u1', 'u2'],
      actorKind: ['anonymous'],
      ip: ['127.0.0.1'],
      type: 'a.b.v1,c.d.v1',
      typePrefix: 'credentials.',
      from: '2026-01-01T00:00:00.000Z',
      order: 'oldest',
      cursor: 41,
      limit: 25,
    });
    const exported = new URL(urlOf(auditEndpoints.auditExport, { query: filterOf(view) }), 'http://console.local');
    expect(exported.pathname).toBe('/ops/audit/export');
    expect(Object.fromEntries(exported.searchParams)).toEqual({
      user: 'u1,u2',
      actorKind: 'anonymous',
      ip: '127.0.0.1',
      type: 'a.b.v1,c.d.v1',
      typePrefix: 'credentials.',
      from: '2026-01-01T00:00:00.000Z',
      order: 'oldest',
    });
    expect(filterCount(view)).toBe(8);
    expect(filterCount(auditView.parse({}))).toBe(0);
  });

  it('reads back the view it writes', () => {
    const view = viewOfSearch('?user=u1,u2&ip=10.0.0.0/8&order=oldest&cursor=9');
    const written = new URL(urlOf(auditEndpoints.auditEvents, { query: searchQueryOf(view) }), 'http://console.local');
    expect(viewOfSearch(written.search)).toEqual(view);
  });

  it('splits typed values on commas, blanks dropped', () => {
    expect(splitValues(' a, b,,a ,c ')).toEqual(['a', 'b', 'c']);
    expect(splitValues(undefined)).toEqual([]);
  });

  it('finds the cursor of the page before: none when fewer than a page lie before it', () => {
    expect(previousCursor('newest', 120, 50, 50)).toBe(121);
    expect(previousCursor('oldest', 30, 50, 50)).toBe(29);
    expect(previousCursor('newest', 120, 12, 50)).toBeUndefined();
    expect(previousCursor('newest', undefined, 0, 50)).toBeUndefined();
  });

  it('turns a local date-time field into an instant and back', () => {
    const iso = isoOfLocal('2026-03-04T05:06');
    expect(iso).toBe(new Date('2026-03-04T05:06').toISOString());
    expect(localOfIso(iso)).toBe('2026-03-04T05:06');
    expect(isoOfLocal('')).toBeUndefined();
    expect(localOfIso(undefined)).toBe('');
  });
});
