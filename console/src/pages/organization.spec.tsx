// @vitest-environment happy-dom
import type { OpsOrganizationAnswer } from '@portcullis/contracts/api/console-ops';
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { OrganizationDetail } from './organization.tsx';
import { organizationsView } from './organizations.tsx';

afterEach(cleanup);

const at = '2026-11-20T10:00:00.000Z';
const owner = { id: 'u-owner', name: 'Olive Owner', email: 'olive@example.com' };
const member = { id: 'u-member', name: 'Max Member', email: 'max@example.com' };

const answer: OpsOrganizationAnswer = {
  organization: { id: 'org1', name: 'Acme', slug: 'acme', logo: null, createdAt: at, memberCount: 2, metadata: { plan: 'pro' } },
  members: [
    { id: 'm1', user: owner, role: 'owner', createdAt: at },
    { id: 'm2', user: member, role: 'admin,member', createdAt: at },
  ],
  invitations: [
    { id: 'i1', email: 'new@example.com', role: 'member', status: 'pending', expired: false, teamId: 't1', inviter: owner, expiresAt: '2099-01-01T00:00:00.000Z', createdAt: at },
    { id: 'i2', email: 'late@example.com', role: 'member', status: 'pending', expired: true, teamId: null, inviter: { id: 'u-gone', name: null, email: null }, expiresAt: at, createdAt: at },
  ],
  teams: [{ id: 't1', name: 'Platform', createdAt: at, updatedAt: null, members: [{ id: 'tm1', user: member, createdAt: at }] }],
};

describe('an organization\'s detail', () => {
  it('names members with their roles, each role on its own', () => {
    render(<OrganizationDetail answer={answer} />);
    const members = within(screen.getByRole('table', { name: 'Members' }));
    expect(members.getByRole('link', { name: /Olive Owner/ }).getAttribute('href')).toBe('/console/users/u-owner');
    const maxRow = members.getByRole('link', { name: /Max Member/ }).closest('tr');
    expect(within(maxRow as HTMLElement).getByText('admin')).toBeDefined();
    expect(within(maxRow as HTMLElement).getByText('member')).toBeDefined();
  });

  it('shows invitations with their inviter, team and whether a pending one expired', () => {
    render(<OrganizationDetail answer={answer} />);
    const rows = within(screen.getByRole('table', { name: 'Invitations' })).getAllByRole('row').slice(1);
    expect(within(rows[0] as HTMLElement).getByText('pending')).toBeDefined();
    expect(within(rows[0] as HTMLElement).getByText('Platform')).toBeDefined();
    expect(within(rows[0] as HTMLElement).getByRole('link', { name: /Olive Owner/ })).toBeDefined();
    expect(within(rows[1] as HTMLElement).getByText('expired')).toBeDefined();
    // An inviter no longer there is still linked by id.
    expect(within(rows[1] as HTMLElement).getByRole('link', { name: 'u-gone' })).toBeDefined();
    expect(screen.getByText('Pending invitations').nextElementSibling?.textContent).toBe('1');
  });

  it('lists each team with its members', () => {
    render(<OrganizationDetail answer={answer} />);
    expect(within(screen.getByRole('region', { name: 'Team Platform' })).getByRole('link', { name: /Max Member/ })).toBeDefined();
  });
});

describe('the organizations list in the address bar', () => {
  it('reads a search, sort and page, and falls back where a link is wrong', () => {
    expect(organizationsView.parse({ q: 'acme', sortBy: 'memberCount', sortDirection: 'asc', offset: '50' })).toEqual({ q: 'acme', sortBy: 'memberCount', sortDirection: 'asc', offset: 50, limit: 50 });
    expect(organizationsView.parse({ sortBy: 'owner', limit: '0' })).toEqual({ q: '', sortBy: 'createdAt', sortDirection: 'desc', offset: 0, limit: 50 });
  });
});
