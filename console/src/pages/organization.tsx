import { consoleOpsEndpoints, type OpsOrganizationAnswer } from '@portcullis/contracts/api/console-ops';
import { useRead } from '../api/hooks.ts';
import { Link } from '../router.tsx';
import { AuditLink, Badge, Card, Empty, ErrorNotice, KeyValues, Loading, Page, Stat, UserRef } from '../ui/components.tsx';
import { formatAgo, formatCount, formatInstant } from '../ui/format.ts';
import { AuditTimeline } from './audit-timeline.tsx';

export default function OrganizationPage({ params }: { readonly params: Record<string, string> }) {
  const id = params.id ?? '';
  const answer = useRead(consoleOpsEndpoints.opsOrganization, { params: { id } });
  if (answer.isPending) return <Loading what="Reading the organization" />;
  if (answer.error) {
    return (
      <Page title="Organization">
        <ErrorNotice error={answer.error} />
        <p>
          <AuditLink filter={{ organization: id }}>What the audit trail holds of {id}</AuditLink>
        </p>
      </Page>
    );
  }
  const { organization } = answer.data;
  return (
    <Page
      title={organization.name}
      actions={
        <>
          <AuditLink filter={{ organization: organization.id }}>Audit trail</AuditLink>
          <Link to={`/audit/time-travel?kind=organization&id=${encodeURIComponent(organization.id)}`}>Time travel</Link>
        </>
      }
    >
      <OrganizationDetail answer={answer.data} />
      <Card title="Audit timeline">
        <AuditTimeline filter={{ organization: organization.id }} />
      </Card>
    </Page>
  );
}

/** Members, invitations and teams as an answer holds them: everyone by name and email. */
export function OrganizationDetail({ answer }: { readonly answer: OpsOrganizationAnswer }) {
  const { organization, members, invitations, teams } = answer;
  const pending = invitations.filter((invitation) => invitation.status === 'pending' && !invitation.expired).length;
  const teamNames = new Map(teams.map((team) => [team.id, team.name]));
  return (
    <>
      <div className="stats">
        <Stat label="Members" value={formatCount(members.length)} />
        <Stat label="Pending invitations" value={formatCount(pending)} />
        <Stat label="Teams" value={formatCount(teams.length)} />
        <Stat label="Created" value={formatAgo(organization.createdAt)} hint={formatInstant(organization.createdAt)} />
      </div>
      <Card title="Organization">
        <KeyValues
          entries={[
            ['Name', organization.name],
            ['Slug', <code key="slug">{organization.slug}</code>],
            ['Id', <code key="id">{organization.id}</code>],
            ['Metadata', organization.metadata ? <code key="metadata">{JSON.stringify(organization.metadata)}</code> : <span className="muted">none</span>],
          ]}
        />
      </Card>
      <Card title={`Members (${formatCount(members.length)})`}>
        {members.length === 0 ? (
          <Empty>No members.</Empty>
        ) : (
          <table className="data-table" aria-label="Members">
            <thead>
              <tr>
                <th scope="col">Member</th>
                <th scope="col">Roles</th>
                <th scope="col">Joined</th>
              </tr>
            </thead>
            <tbody>
              {members.map((member) => (
                <tr key={member.id}>
                  <td>
                    <UserRef id={member.user.id} name={member.user.name} email={member.user.email} />
                  </td>
                  <td>
                    <Roles roles={member.role} />
                  </td>
                  <td title={formatInstant(member.createdAt)}>{formatAgo(member.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
      <Card title={`Invitations (${formatCount(invitations.length)})`}>
        {invitations.length === 0 ? (
          <Empty>No invitations.</Empty>
        ) : (
          <table className="data-table" aria-label="Invitations">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Invited by</th>
                <th scope="col">Team</th>
                <th scope="col">Expires</th>
              </tr>
            </thead>
            <tbody>
              {invitations.map((invitation) => (
                <tr key={invitation.id}>
                  <td>{invitation.email}</td>
                  <td>
                    <Roles roles={invitation.role} />
                  </td>
                  <td>
                    <InvitationStatus status={invitation.status} expired={invitation.expired} />
                  </td>
                  <td>
                    <UserRef id={invitation.inviter.id} name={invitation.inviter.name} email={invitation.inviter.email} />
                  </td>
                  <td>{invitation.teamId ? (teamNames.get(invitation.teamId) ?? <code>{invitation.teamId}</code>) : <span className="muted">—</span>}</td>
                  <td title={formatInstant(invitation.expiresAt)}>{formatAgo(invitation.expiresAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Card>
      <Card title={`Teams (${formatCount(teams.length)})`}>
        {teams.length === 0 ? (
          <Empty>No teams.</Empty>
        ) : (
          <div className="grid">
            {teams.map((team) => (
              <section key={team.id} className="team" aria-label={`Team ${team.name}`}>
                <h3>
                  {team.name} <span className="muted">({formatCount(team.members.length)})</span>
                </h3>
                {team.members.length === 0 ? (
                  <Empty>No members.</Empty>
                ) : (
                  <ul className="plain-list">
                    {team.members.map((member) => (
                      <li key={member.id}>
                        <UserRef id={member.user.id} name={member.user.name} email={member.user.email} />
                      </li>
                    ))}
                  </ul>
                )}
              </section>
            ))}
          </div>
        )}
      </Card>
    </>
  );
}

function Roles({ roles }: { readonly roles: string }) {
  return (
    <span className="roles">
      {roles
        .split(',')
        .map((role) => role.trim())
        .filter((role) => role !== '')
        .map((role) => (
          <Badge key={role} tone={role === 'owner' ? 'info' : 'neutral'}>
            {role}
          </Badge>
        ))}
    </span>
  );
}

export function InvitationStatus({ status, expired }: { readonly status: string; readonly expired: boolean }) {
  if (status === 'pending') return expired ? <Badge tone="warn">expired</Badge> : <Badge tone="info">pending</Badge>;
  if (status === 'accepted') return <Badge tone="ok">accepted</Badge>;
  return <Badge tone="neutral">{status}</Badge>;
}
