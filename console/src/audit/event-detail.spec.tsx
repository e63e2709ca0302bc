// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import { EventDetailView, type AuditEventDetail } from '../pages/audit-event.tsx';
import { indexOfPosition } from '../pages/time-travel.tsx';
import { isAddressOrRange } from './filters.ts';
import { ValuesField } from './parts.tsx';

const ANN = 'user-ann-1';
const ROOT = 'user-root-1';

const stateOf = (banned: boolean) => ({ profile: { status: 'registered', name: 'Ann' }, role: 'user', banned, account: { ban: banned ? { expiresAt: null } : null } });

const detail: AuditEventDetail = {
  event: {
    position: 42,
    eventId: 'evt-42',
    streamId: `user-${ANN}`,
    streamVersion: 7,
    type: 'user.banned.v1',
    occurredAt: '2026-11-28T10:00:00.000Z',
    recordedAt: '2026-11-28T10:00:00.010Z',
    actor: { kind: 'admin', id: ROOT },
    data: { userId: ANN, reason: 'spam', expiresAt: null, sealedToken: '[redacted]' },
    metadata: { occurredAt: '2026-11-28T10:00:00.000Z', ipAddress: '203.0.113.7', userAgent: 'spec-agent/1', requestId: 'req-123', traceparent: '00-abc-def-01' },
    hash: 'b'.repeat(64),
    sentence: 'root@example.com (as admin) banned ann@example.com (spam) from 203.0.113.7',
  },
  chain: { previousPosition: 41, previousHash: 'a'.repeat(64), hash: 'b'.repeat(64), verifies: true },
  subjects: [
    {
      kind: 'user',
      id: ANN,
      before: stateOf(false),
      after: stateOf(true),
      changes: [
        { path: 'account.ban', before: null, after: { expiresAt: null } },
        { path: 'banned', before: false, after: true },
      ],
    },
  ],
  people: { [ANN]: { name: 'Ann Example', email: 'ann@example.com' }, [ROOT]: { name: 'Root', email: 'root@example.com' } },
  organizations: {},
};

afterEach(cleanup);

describe('an event in detail', () => {
  it('shows the sentence, its metadata and the actor by name', () => {
    render(<EventDetailView detail={detail} />);
    expect(screen.getByText(detail.event.sentence)).toBeDefined();
    expect(screen.getByText('req-123')).toBeDefined();
    expect(screen.getByText('00-abc-def-01')).toBeDefined();
    expect(screen.getByText('spec-agent/1')).toBeDefined();
    expect(screen.getByRole('link', { name: '203.0.113.7' }).getAttribute('href')).toBe('/console/audit?ip=203.0.113.7');
    expect(screen.getByRole('link', { name: /Root/ }).getAttribute('href')).toBe(`/console/users/${ROOT}`);
    // A redacted secret says so rather than showing the placeholder as if it were the value.
    expect(screen.getByText('redacted')).toBeDefined();
    expect(screen.queryByText('[redacted]')).toBeNull();
  });

  it('shows its link in the hash chain and whether it verifies', () => {
    const { rerender } = render(<EventDetailView detail={detail} />);
    expect(screen.getByText('verifies')).toBeDefined();
    expect(screen.getByText('a'.repeat(64))).toBeDefined();
    expect(screen.getByRole('link', { name: '#41' }).getAttribute('href')).toBe('/console/audit/events/41');
    rerender(<EventDetailView detail={{ ...detail, chain: { ...detail.chain, verifies: false, previousHash: null } }} />);
    expect(screen.getByText('does not verify')).toBeDefined();
    expect(screen.getByText('missing')).toBeDefined();
  });

  it('says an event the chainer has not reached yet is not chained, rather than that it does not verify', () => {
    render(<EventDetailView detail={{ ...detail, event: { ...detail.event, hash: null }, chain: { ...detail.chain, hash: null, verifies: false } }} />);
    expect(screen.getByText('not chained yet')).toBeDefined();
    expect(screen.getByText('none yet')).toBeDefined();
    expect(screen.queryByText('does not verify')).toBeNull();
  });

  it('shows before and after of each subject, with links to its page, time travel and its trail', () => {
    render(<EventDetailView detail={detail} />);
    const changes = screen.getByRole('table', { name: 'What this event changed for the user' });
    const banned = within(changes).getByRole('row', { name: /^banned/ });
    expect(within(banned).getAllByRole('cell').map((cell) => cell.textContent)).toEqual(['false', 'true']);
    expect(within(changes).getByRole('row', { name: /^account\.ban/ }).textContent).toContain('{"expiresAt":null}');
    expect(screen.getByRole('link', { name: 'Time travel to this event' }).getAttribute('href')).toBe(`/console/audit/time-travel?kind=user&id=${ANN}&at=42`);
    expect(screen.getByRole('link', { name: 'Audit trail of this user' }).getAttribute('href')).toBe(`/console/audit?user=${ANN}`);
    expect(screen.getAllByRole('link', { name: /Ann Example/ })[0]!.getAttribute('href')).toBe(`/console/users/${ANN}`);
  });

  it('says when an event changes no subject', () => {
    render(<EventDetailView detail={{ ...detail, subjects: [] }} />);
    expect(screen.getByText(/changes no user/)).toBeDefined();
  });
});

function Values({ initial }: { readonly initial: string[] }) {
  const [values, setValues] = useState(initial);
  return <ValuesField label="Address" values={values} onChange={setValues} accepts={isAddressOrRange} refusal="not an address" />;
}

describe('a filter of several values', () => {
  it('adds comma-separated values as chips, refuses what the filter cannot take, and removes a chip', () => {
    render(<Values initial={['10.0.0.0/8']} />);
    const input = screen.getByLabelText('Address');
    fireEvent.change(input, { target: { value: '203.0.113.7, nonsense, 198.51.100.0/24' } });
    fireEvent.keyDown(input, { key: 'Enter' });
    const chips = screen.getByRole('list', { name: 'Address filter' });
    expect(within(chips).getAllByRole('listitem').map((item) => item.textContent?.replace('×', ''))).toEqual(['10.0.0.0/8', '203.0.113.7', '198.51.100.0/24']);
    expect(screen.getByRole('alert').textContent).toBe('nonsense: not an address');
    expect((input as HTMLInputElement).value).toBe('nonsense');
    fireEvent.click(screen.getByRole('button', { name: 'Remove address 10.0.0.0/8' }));
    expect(within(chips).getAllByRole('listitem')).toHaveLength(2);
  });
});

describe('the time-travel slider', () => {
  const points = [10, 20, 30].map((position) => ({ position, occurredAt: '', recordedAt: '', type: 't', streamId: 's' }));
  it('stands on the last point at or before the position asked, on the latest when none is', () => {
    expect(indexOfPosition(points, undefined)).toBe(2);
    expect(indexOfPosition(points, 20)).toBe(1);
    expect(indexOfPosition(points, 25)).toBe(1);
    expect(indexOfPosition(points, 5)).toBe(0);
    expect(indexOfPosition([], 5)).toBe(0);
  });
});
