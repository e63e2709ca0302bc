// @vitest-environment happy-dom
import type { AuditEvent } from '@portcullis/contracts/api/audit';
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { TimelineEvents } from './audit-timeline.tsx';

afterEach(cleanup);

const NOW = Date.parse('2026-11-28T12:00:00.000Z');

function event(position: number, patch: Partial<AuditEvent>): AuditEvent {
  return {
    position,
    eventId: `e${position}`,
    streamId: 'user-u1',
    streamVersion: position,
    type: 'user.banned.v1',
    occurredAt: '2026-11-28T11:00:00.000Z',
    recordedAt: '2026-11-28T11:00:00.000Z',
    actor: { kind: 'user', id: 'u1' },
    data: {},
    metadata: { occurredAt: '2026-11-28T11:00:00.000Z' },
    hash: 'ab',
    sentence: 'something happened',
    ...patch,
  };
}

const people = {
  admin1: { name: 'Ada Admin', email: 'ada@example.com' },
  u1: { name: 'Uma User', email: 'uma@example.com' },
  gone: 'erased' as const,
};

describe('an audit timeline', () => {
  it('names every actor from the answer\'s people, an impersonation as the admin and whom they acted as', () => {
    render(
      <TimelineEvents
        now={NOW}
        people={people}
        events={[
          event(9, { actor: { kind: 'impersonator', id: 'u1', impersonatorId: 'admin1' }, sentence: 'uma@example.com (ada@example.com impersonating) updated the profile' }),
          event(7, { actor: { kind: 'admin', id: 'admin1' }, sentence: 'ada@example.com (as admin) banned uma@example.com (spam)', metadata: { occurredAt: 'x', ipAddress: '203.0.113.7' } }),
          event(5, { actor: { kind: 'user', id: 'gone' }, sentence: 'someone signed in' }),
          event(3, { actor: { kind: 'system', id: null }, sentence: 'the ban of uma@example.com expired', recordedAt: '2026-11-26T12:00:00.000Z' }),
        ]}
      />,
    );
    const rows = screen.getAllByRole('listitem');
    expect(rows).toHaveLength(4);
    const [impersonated, banned, erased, system] = rows as [HTMLElement, HTMLElement, HTMLElement, HTMLElement];
    expect(within(impersonated).getByRole('link', { name: /Ada Admin/ }).getAttribute('href')).toBe('/console/users/admin1');
    expect(within(impersonated).getByText('impersonating')).toBeDefined();
    expect(within(impersonated).getByRole('link', { name: /Uma User/ }).getAttribute('href')).toBe('/console/users/u1');
    expect(within(banned).getByText('admin')).toBeDefined();
    expect(within(banned).getByText('203.0.113.7')).toBeDefined();
    expect(within(erased).getByText('an erased user')).toBeDefined();
    expect(within(system).getByText('the system')).toBeDefined();
    expect(within(system).getByText('2 d ago')).toBeDefined();
  });

  it('links each event to its detail by log position, newest first as given', () => {
    render(<TimelineEvents now={NOW} people={people} events={[event(12, { sentence: 'b' }), event(4, { sentence: 'a' })]} />);
    const links = screen.getAllByRole('link', { name: /^Event / });
    expect(links.map((link) => [link.textContent, link.getAttribute('href')])).toEqual([
      ['b', '/console/audit/events/12'],
      ['a', '/console/audit/events/4'],
    ]);
  });

  it('says so when there is nothing', () => {
    render(<TimelineEvents people={{}} events={[]} />);
    expect(screen.getByText('No events.')).toBeDefined();
  });
});
