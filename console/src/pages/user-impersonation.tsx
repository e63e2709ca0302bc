import { adminEndpoints } from '@portcullis/contracts/api/admin';
import type { User } from '@portcullis/contracts/api/user';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { call, type Answer } from '../api/client.ts';
import { Button, ConfirmButton, ErrorNotice, KeyValues } from '../ui/components.tsx';
import { formatAgo, formatInstant } from '../ui/format.ts';

// Impersonation through better-auth's admin plugin replaces this browser's session cookie with one of the
// user's (the admin's own is kept aside in admin_session). From then on the console's own reads are refused
// (an impersonation session is nobody's admin session), so the page does not refresh its reads: it says
// plainly whose session the browser now holds and offers the way back, which restores the admin's session.

export type Impersonation = Answer<typeof adminEndpoints.impersonateUser>;

/**
 * Starts impersonating. Deliberately not `useWrite`: its refresh of every read would ask the console's
 * views as the impersonated user, and the page would turn to refusals before it could say what happened.
 */
export function ImpersonateButton({ user, onStarted }: { readonly user: User; readonly onStarted: (started: Impersonation) => void }) {
  const start = useMutation({
    mutationKey: [adminEndpoints.impersonateUser.operationId],
    mutationFn: () => call(adminEndpoints.impersonateUser, { body: { userId: user.id } }),
    onSuccess: onStarted,
  });
  return (
    <span className="action-inline">
      <ConfirmButton
        label="Impersonate"
        confirm={`Sign this browser in as ${user.email}? Your admin session waits until you stop.`}
        disabled={start.isPending || user.banned}
        onConfirm={() => start.mutate()}
      />
      <ErrorNotice error={start.error} />
    </span>
  );
}

/** What the browser holds while impersonating, and the one action that makes sense: going back. */
export function ImpersonationPanel({ impersonation, onStopped }: { readonly impersonation: Impersonation; readonly onStopped: () => void }) {
  const queries = useQueryClient();
  const stop = useMutation({
    mutationKey: [adminEndpoints.stopImpersonating.operationId],
    mutationFn: () => call(adminEndpoints.stopImpersonating, {}),
    onSuccess: async () => {
      // Everything the console read is asked again with the admin's restored session.
      await queries.resetQueries();
      onStopped();
    },
  });
  const { user, session } = impersonation;
  return (
    <section className="card impersonation" role="alertdialog" aria-labelledby="impersonation-title" aria-describedby="impersonation-what">
      <h2 id="impersonation-title">
        You are impersonating {user.name || user.email}
      </h2>
      <p id="impersonation-what">
        This browser now holds a session of <strong>{user.email}</strong>: anything opened on this site (the auth API and the apps sharing its
        cookie) acts as them, and the audit trail records each action as yours on their behalf. The console&apos;s views refuse an
        impersonation session, so they are closed until you stop; your own session is kept aside and comes back when you do.
      </p>
      <KeyValues
        entries={[
          ['User', `${user.name} <${user.email}>`],
          ['Session', <code key="id">{session.id}</code>],
          ['Opened', `${formatInstant(session.createdAt)} (${formatAgo(session.createdAt)})`],
          ['Ends by itself', `${formatInstant(session.expiresAt)} (${formatAgo(session.expiresAt)})`],
        ]}
      />
      <div className="impersonation-actions">
        <Button tone="primary" autoFocus disabled={stop.isPending} onClick={() => stop.mutate()}>
          {stop.isPending ? 'Stopping…' : 'Stop impersonating'}
        </Button>
      </div>
      <ErrorNotice error={stop.error} />
    </section>
  );
}
