// @vitest-environment happy-dom
import type { OpsUserAnswer } from '@portcullis/contracts/api/console-ops';
import { cleanup, render, screen, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { banExpiryOf } from './user-actions.tsx';
import { Accounts, UserSummary } from './user.tsx';

afterEach(cleanup);

const at = '2026-11-20T10:00:00.000Z';

function answerOf(patch: Partial<OpsUserAnswer['user']> = {}): OpsUserAnswer {
  return {
    user: { id: 'u1', email: 'uma@example.com', name: 'Uma', image: null, emailVerified: true, createdAt: at, updatedAt: at, role: 'user', banned: false, banReason: null, banExpires: null, ...patch },
    accounts: [
      { id: 'a1', providerId: 'credential', accountId: 'u1', scopes: [], createdAt: at, updatedAt: at },
      { id: 'a2', providerId: 'github', accountId: '4242', scopes: ['read:user', 'user:email'], createdAt: at, updatedAt: at },
    ],
    organizations: [],
    sessionCount: 3,
    lastSignInAt: null,
  };
}

describe('the ban form\'s expiry', () => {
  it('is seconds from a duration, none when empty, and a problem otherwise', () => {
    expect(banExpiryOf('')).toEqual({ seconds: undefined });
    expect(banExpiryOf(' 7d ')).toEqual({ seconds: 604_800 });
    expect(banExpiryOf('12h')).toEqual({ seconds: 43_200 });
    expect(banExpiryOf('0')).toHaveProperty('problem');
    expect(banExpiryOf('tomorrow')).toHaveProperty('problem');
    expect(banExpiryOf('9999w')).toHaveProperty('problem');
  });
});

describe('the user page', () => {
  it('sums up a ban with its expiry, the live sessions and a user who never signed in', () => {
    render(<UserSummary answer={answerOf({ banned: true, banReason: 'spam', banExpires: '2099-01-01T00:00:00.000Z' })} />);
    expect(screen.getByText('banned')).toBeDefined();
    expect(screen.getByText(/^until /)).toBeDefined();
    expect(screen.getByText('Live sessions').nextElementSibling?.textContent).toBe('3');
    expect(screen.getByText('never')).toBeDefined();
  });

  it('shows each account by provider, the password one as such, with its scopes', () => {
    render(<Accounts accounts={answerOf().accounts} />);
    const rows = within(screen.getByRole('table', { name: 'Accounts' })).getAllByRole('row').slice(1);
    expect(rows.map((row) => row.querySelector('td')?.textContent)).toEqual(['password', 'github']);
    expect(within(rows[1] as HTMLElement).getByText('user:email')).toBeDefined();
  });
});
