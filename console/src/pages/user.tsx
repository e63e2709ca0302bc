import { adminEndpoints } from '@portcullis/contracts/api/admin';
import { consoleOpsEndpoints, type OpsUserAnswer } from '@portcullis/contracts/api/console-ops';
import { useState } from 'react';
import { useRead, useWrite } from '../api/hooks.ts';
import { Link } from '../router.tsx';
import { AuditLink, Badge, Card, Empty, ErrorNotice, KeyValues, Loading, Page, Stat } from '../ui/components.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { formatAgo, formatCount, formatInstant } from '../ui/format.ts';
import { AuditTimeline } from './audit-timeline.tsx';
import { sessionColumns } from './session-columns.tsx';
import { BanControls, RevokeAllSessions, SetPasswordForm } from './user-actions.tsx';
import { ImpersonateButton, ImpersonationPanel, type Impersonation } from './user-impersonation.tsx';

/**
 * Live: a session the user opens elsewhere, or one another admin revokes, shows within this; and a change
 * made here, which the read models hold a moment after the command answered, shows without a reload.
 */
const REFRESH_MS = 3_000;

export default function UserPage({ params }: { readonly params: Record<string, string> }) {
  const id = params.id ?? '';
  const [impersonation, setImpersonation] = useState<Impersonation | null>(null);
  // While impersonating, no read of this page may run: each would be refused to the impersonation session.
  if (impersonation) return <ImpersonationPanel impersonation={impersonation} onStopped={() => setImpersonation(null)} />;
  return <UserView id={id} onImpersonated={setImpersonation} />;
}

function UserView({ id, onImpersonated }: { readonly id: string; readonly onImpersonated: (started: Impersonation) => void }) {
  const answer = useRead(consoleOpsEndpoints.opsUser, { params: { id } }, { refetchInterval: REFRESH_MS });
  if (answer.isPending) return <Loading what="Reading the user" />;
  if (answer.error) {
    return (
      <Page title="User">
        <ErrorNotice error={answer.error} />
        <p>
          <AuditLink filter={{ user: id }}>What the audit trail holds of {id}</AuditLink>
        </p>
      </Page>
    );
  }
  const { user } = answer.data;
  return (
    <Page
      title={user.name || user.email}
      actions={
        <>
          <AuditLink filter={{ user: user.id }}>Audit trail</AuditLink>
          <Link to={`/audit/time-travel?kind=user&id=${encodeURIComponent(user.id)}`}>Time travel</Link>
        </>
      }
    >
      <UserSummary answer={answer.data} />
      <div className="grid">
        <Card title="Profile">
          <Profile answer={answer.data} />
        </Card>
        <Card title="Ban">
          <BanControls user={user} />
        </Card>
        <Card title="Access">
          <SetPasswordForm user={user} />
          <div className="action-block">
            <ImpersonateButton user={user} onStarted={onImpersonated} />
            <RevokeAllSessions user={user} count={answer.data.sessionCount} />
          </div>
        </Card>
      </div>
      <Card title={`Live sessions (${formatCount(answer.data.sessionCount)})`}>
        <UserSessions userId={user.id} />
      </Card>
      <div className="grid pair">
        <Card title="Accounts">
          <Accounts accounts={answer.data.accounts} />
        </Card>
        <Card title="Organizations">
          <Organizations organizations={answer.data.organizations} />
        </Card>
      </div>
      <Card title="Audit timeline">
        <AuditTimeline filter={{ user: user.id }} />
      </Card>
    </Page>
  );
}

export function UserSummary({ answer }: { readonly answer: OpsUserAnswer }) {
  const { user } = answer;
  return (
    <div className="stats">
      <Stat
        label="Status"
        value={user.banned ? 'banned' : 'active'}
        tone={user.banned ? 'bad' : 'ok'}
        hint={user.banned ? (user.banExpires ? `until ${formatInstant(user.banExpires)}` : 'until unbanned') : user.emailVerified ? 'email verified' : 'email not verified'}
      />
      <Stat label="Live sessions" value={formatCount(answer.sessionCount)} />
      <Stat label="Last sign-in" value={answer.lastSignInAt ? formatAgo(answer.lastSignInAt) : 'never'} hint={answer.lastSignInAt ? formatInstant(answer.lastSignInAt) : undefined} />
      <Stat label="Role" value={user.role} />
    </div>
  );
}

function Profile({ answer }: { readonly answer: OpsUserAnswer }) {
  const { user } = answer;
  return (
    <KeyValues
      entries={[
        ['Name', user.name || <span className="muted">—</span>],
        ['Email', <span key="email">{user.email} {user.emailVerified ? <Badge tone="ok">verified</Badge> : <Badge tone="warn">unverified</Badge>}</span>],
        ['Username', user.displayUsername ?? user.username ?? <span className="muted">—</span>],
        ['Role', user.role],
        ['Id', <code key="id">{user.id}</code>],
        ['Created', `${formatInstant(user.createdAt)} (${formatAgo(user.createdAt)})`],
        ['Updated', formatInstant(user.updatedAt)],
        ['Ban', user.banned ? <Badge tone="bad">{user.banReason ? `banned: ${user.banReason}` : 'banned'}</Badge> : <span className="muted">none</span>],
      ]}
    />
  );
}

function UserSessions({ userId }: { readonly userId: string }) {
  const [page, setPage] = useState({ offset: 0, limit: 25 });
  const sessions = useRead(consoleOpsEndpoints.opsSessions, { query: { user: [userId], sortBy: 'createdAt', sortDirection: 'desc', ...page } }, { refetchInterval: REFRESH_MS });
  const revoke = useWrite(adminEndpoints.revokeUserSession);
  const columns = sessionColumns({ withUser: false, busy: revoke.isPending, onRevoke: (session) => revoke.mutate({ body: { sessionToken: session.tokenHash } }) });
  return (
    <>
      {revoke.isSuccess ? (
        <div className="notice tone-ok" role="status">
          Session revoked.
        </div>
      ) : null}
      <ErrorNotice error={revoke.error ?? sessions.error} />
      <DataTable
        caption="Sessions of this user"
        columns={columns}
        rows={sessions.data?.sessions ?? []}
        total={sessions.data?.total ?? 0}
        rowId={(session) => session.id}
        page={page}
        onPage={setPage}
        busy={sessions.isFetching}
      />
      <p>
        <Link to={`/sessions?user=${encodeURIComponent(userId)}`}>On the sessions page</Link>
      </p>
    </>
  );
}

export function Accounts({ accounts }: { readonly accounts: OpsUserAnswer['accounts'] }) {
  if (accounts.length === 0) return <Empty>No accounts: no password and no provider linked.</Empty>;
  return (
    <div className="table-wrap">
      <table className="data-table" aria-label="Accounts">
        <thead>
          <tr>
            <th scope="col">Provider</th>
            <th scope="col">Account id</th>
            <th scope="col">Scopes</th>
            <th scope="col">Linked</th>
          </tr>
        </thead>
        <tbody>
          {accounts.map((account) => (
            <tr key={account.id}>
              <td>{account.providerId === 'credential' ? 'password' : account.providerId}</td>
              <td>
                <code className="account-id">{account.accountId}</code>
              </td>
              <td>{account.scopes.length > 0 ? account.scopes.map((scope) => <Badge key={scope}>{scope}</Badge>) : <span className="muted">—</span>}</td>
              <td className="account-linked" title={formatInstant(account.createdAt)}>{formatAgo(account.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Organizations({ organizations }: { readonly organizations: OpsUserAnswer['organizations'] }) {
  if (organizations.length === 0) return <Empty>Not a member of any organization.</Empty>;
  return (
    <ul className="plain-list">
      {organizations.map((organization) => (
        <li key={organization.id}>
          <Link to={`/organizations/${encodeURIComponent(organization.id)}`}>{organization.name}</Link> <span className="muted">{organization.slug}</span>{' '}
          <Badge tone="info">{organization.role}</Badge> <span className="muted">since {formatInstant(organization.memberSince)}</span>
        </li>
      ))}
    </ul>
  );
}
