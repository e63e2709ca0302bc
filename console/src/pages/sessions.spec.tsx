// @vitest-environment happy-dom
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { navigate, useSearchState } from '../router.tsx';
import { SessionsFilters } from './sessions.tsx';
import { applyDraft, formatDuration, parseDuration, sessionsQueryOf, sessionsView, splitIds } from './sessions-view.ts';

afterEach(cleanup);

describe('the sessions view in the address bar', () => {
  it('reads several users, a CIDR range, ages and the impersonation flag', () => {
    const view = sessionsView.parse({ user: 'u1,u2, u1', ip: '203.0.113.0/24', olderThan: '7d', newerThan: '30d', impersonated: 'true', sortBy: 'expiresAt', sortDirection: 'asc', offset: '50', limit: '25' });
    expect(view).toEqual({ user: ['u1', 'u2'], ip: '203.0.113.0/24', olderThan: '7d', newerThan: '30d', impersonated: 'true', sortBy: 'expiresAt', sortDirection: 'asc', offset: 50, limit: 25 });
    expect(sessionsQueryOf(view)).toEqual({
      user: ['u1', 'u2'],
      ip: '203.0.113.0/24',
      minAgeSeconds: 604_800,
      maxAgeSeconds: 2_592_000,
      impersonated: 'true',
      sortBy: 'expiresAt',
      sortDirection: 'asc',
      limit: 25,
      offset: 50,
    });
  });

  it('opens some valid view from a link that gets things wrong, asking for no filter it could not read', () => {
    const view = sessionsView.parse({ ip: '999.1.1.1', olderThan: 'soon', impersonated: 'yes', sortBy: 'ip', offset: '-3', limit: '100000' });
    expect(view).toEqual({ user: [], ip: '', olderThan: '', newerThan: '', impersonated: undefined, sortBy: 'createdAt', sortDirection: 'desc', offset: 0, limit: 50 });
    expect(sessionsQueryOf(view)).toEqual({ sortBy: 'createdAt', sortDirection: 'desc', limit: 50, offset: 0 });
  });

  it('reads durations as operators type them', () => {
    expect([parseDuration('90'), parseDuration('90s'), parseDuration(' 30m '), parseDuration('2H'), parseDuration('1w'), parseDuration('2 days'), parseDuration('-1h')]).toEqual([
      90, 90, 1800, 7200, 604_800, null, null,
    ]);
    expect([formatDuration(86_400), formatDuration(5400), formatDuration(61)]).toEqual(['1d', '90m', '61s']);
    expect(splitIds(' a, b\nc  a ')).toEqual(['a', 'b', 'c']);
  });

  it('names each typo of the form beside its field instead of applying a part of it', () => {
    const refused = applyDraft({ users: 'a b', ip: '10.0.0.0/33', olderThan: '3 weeks', newerThan: '', impersonated: false });
    expect('problems' in refused ? Object.keys(refused.problems) : refused).toEqual(['ip', 'olderThan']);
    expect(applyDraft({ users: 'a b', ip: ' 10.0.0.0/8 ', olderThan: '3W', newerThan: '', impersonated: true })).toEqual({
      patch: { user: ['a', 'b'], ip: '10.0.0.0/8', olderThan: '3w', newerThan: '', impersonated: 'true', offset: 0 },
    });
  });
});

/** The form on the address bar, as the page wires it. */
function FiltersOnTheAddress() {
  const [view, setView] = useSearchState(sessionsView);
  return <SessionsFilters view={view} onApply={(patch) => setView(patch)} />;
}

describe('the sessions filter form', () => {
  beforeEach(() => {
    window.history.replaceState(null, '', '/console/sessions?user=u1&offset=100&sortBy=expiresAt');
  });

  it('starts from the address and, applied, writes every filter into it from the first page', () => {
    render(<FiltersOnTheAddress />);
    expect(screen.getByLabelText<HTMLInputElement>(/^User ids/).value).toBe('u1');
    fireEvent.change(screen.getByLabelText(/^User ids/), { target: { value: 'u1, u2' } });
    fireEvent.change(screen.getByLabelText(/^Address or CIDR/), { target: { value: '2001:db8::/32' } });
    fireEvent.change(screen.getByLabelText(/^Opened more than/), { target: { value: '2h' } });
    fireEvent.click(screen.getByLabelText('Impersonations only'));
    act(() => {
      fireEvent.click(screen.getByRole('button', { name: 'Apply' }));
    });
    const search = new URLSearchParams(window.location.search);
    expect(Object.fromEntries(search)).toEqual({ user: 'u1,u2', ip: '2001:db8::/32', olderThan: '2h', impersonated: 'true', sortBy: 'expiresAt', sortDirection: 'desc', offset: '0', limit: '50' });
    // Read back, the address gives the same view.
    expect(sessionsView.parse(Object.fromEntries(search)).user).toEqual(['u1', 'u2']);
  });

  it('follows the address when it moves elsewhere (a link, Back), dropping what was typed and not applied', () => {
    render(<FiltersOnTheAddress />);
    fireEvent.change(screen.getByLabelText(/^Address or CIDR/), { target: { value: '10.0.0.1' } });
    act(() => navigate('/sessions?user=zz&ip=192.0.2.0/24'));
    expect(screen.getByLabelText<HTMLInputElement>(/^User ids/).value).toBe('zz');
    expect(screen.getByLabelText<HTMLInputElement>(/^Address or CIDR/).value).toBe('192.0.2.0/24');
  });

  it('keeps the address as it was while a field is wrong, and says which', () => {
    const onApply = vi.fn();
    render(<SessionsFilters view={sessionsView.parse({})} onApply={onApply} />);
    fireEvent.change(screen.getByLabelText(/^Address or CIDR/), { target: { value: '203.0.113' } });
    fireEvent.click(screen.getByRole('button', { name: 'Apply' }));
    expect(onApply).not.toHaveBeenCalled();
    expect(screen.getByRole('alert').textContent).toContain('CIDR');
    expect(screen.getByLabelText(/^Address or CIDR/).getAttribute('aria-invalid')).toBe('true');
  });

  it('clears every filter at once', () => {
    const onApply = vi.fn();
    render(<SessionsFilters view={sessionsView.parse({ user: 'u1', ip: '10.0.0.1', impersonated: 'true' })} onApply={onApply} />);
    fireEvent.click(screen.getByRole('button', { name: 'Clear' }));
    expect(onApply).toHaveBeenCalledWith({ user: [], ip: '', olderThan: '', newerThan: '', impersonated: undefined, offset: 0 });
  });
});
