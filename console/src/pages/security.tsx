import { adminEndpoints } from '@portcullis/contracts/api/admin';
import { securityEndpoints, type SecurityOverview } from '@portcullis/contracts/api/security';
import { z } from 'zod';
import { useRead } from '../api/hooks.ts';
import { AddressLink, auditPaths } from '../audit/parts.tsx';
import { Link, useSearchState } from '../router.tsx';
import { AuditLink, Badge, Card, Empty, ErrorNotice, Field, Loading, Page, Stat, UserRef } from '../ui/components.tsx';
import { formatAgo, formatCount, formatInstant } from '../ui/format.ts';

const windows = [1, 6, 24, 72, 168, 720] as const;
const dormancies = [30, 90, 180, 365] as const;

const securityView = z.object({
  hours: z.coerce.number().int().min(1).max(24 * 90).catch(24),
  dormantDays: z.coerce.number().int().min(1).max(3650).catch(90),
  top: z.coerce.number().int().min(1).max(100).catch(20),
});

const windowLabel = (hours: number) => (hours % 24 === 0 ? `${hours / 24} d` : `${hours} h`);

function Ago({ at }: { readonly at: string | null }) {
  if (!at) return <span className="muted">never</span>;
  return <span title={formatInstant(at)}>{formatAgo(at)}</span>;
}

function ByAddress({ rows, total }: { readonly rows: SecurityOverview['signIns']['byAddress']['top']; readonly total: number }) {
  return (
    <Card title={`Failed sign-ins by address (top ${rows.length} of ${formatCount(total)})`}>
      {rows.length === 0 ? (
        <Empty>No failed sign-in in this window.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="data-table">
            <caption className="visually-hidden">Failed sign-ins by address</caption>
            <thead>
              <tr>
                <th scope="col">Address</th>
                <th scope="col">Failures</th>
                <th scope="col">Lockouts</th>
                <th scope="col">Rate-limited</th>
                <th scope="col">Last seen</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.address ?? '(none)'}>
                  <td>{row.address ? <AddressLink address={row.address} /> : <span className="muted">none recorded</span>}</td>
                  <td>{formatCount(row.failures)}</td>
                  <td>{row.lockouts > 0 ? <Badge tone="bad">{formatCount(row.lockouts)}</Badge> : '0'}</td>
                  <td>{formatCount(row.rateLimited)}</td>
                  <td>
                    <Ago at={row.lastSeen} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

function ByAccount({ rows, total }: { readonly rows: SecurityOverview['signIns']['byAccount']['top']; readonly total: number }) {
  return (
    <Card title={`Failed sign-ins by account (top ${rows.length} of ${formatCount(total)})`}>
      {rows.length === 0 ? (
        <Empty>No account had a failed sign-in in this window.</Empty>
      ) : (
        <div className="table-wrap">
          <table className="data-table">
            <caption className="visually-hidden">Failed sign-ins by account</caption>
            <thead>
              <tr>
                <th scope="col">Account</th>
                <th scope="col">Failures</th>
                <th scope="col">Lockouts</th>
                <th scope="col">Last seen</th>
                <th scope="col">Trail</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.userId}>
                  <td>
                    {row.person === 'erased' ? (
                      <span className="muted" title={row.userId}>
                        erased user
                      </span>
                    ) : (
                      <UserRef id={row.userId} name={row.person?.name ?? null} email={row.person?.email ?? null} />
                    )}
                  </td>
                  <td>{formatCount(row.failures)}</td>
                  <td>{row.lockouts > 0 ? <Badge tone="bad">{formatCount(row.lockouts)}</Badge> : '0'}</td>
                  <td>
                    <Ago at={row.lastSeen} />
                  </td>
                  <td>
                    <AuditLink filter={{ user: row.userId }}>Audit trail</AuditLink>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

function Dormant({ dormant }: { readonly dormant: SecurityOverview['dormantUsers'] }) {
  return (
    <Card title={`Dormant users: ${formatCount(dormant.total)} with no sign-in for ${dormant.days} days`}>
      {dormant.sample.length === 0 ? (
        <Empty>No dormant user.</Empty>
      ) : (
        <table className="data-table">
          <caption className="visually-hidden">Dormant users, the longest dormant first</caption>
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Last sign-in</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {dormant.sample.map((user) => (
              <tr key={user.id}>
                <td>
                  <UserRef id={user.id} name={user.name} email={user.email} />
                </td>
                <td>
                  <Ago at={user.lastSignInAt} />
                </td>
                <td>
                  <Ago at={user.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {dormant.total > dormant.sample.length ? <p className="muted">Showing {dormant.sample.length} of {formatCount(dormant.total)}.</p> : null}
    </Card>
  );
}

/** An id of ADMIN_USER_IDS by its user's name and email (the security answer names only the id). */
function ConfiguredAdmin({ id }: { readonly id: string }) {
  const user = useRead(adminEndpoints.getUser, { query: { id } }, { staleTime: 60_000 });
  return <UserRef id={id} name={user.data?.name ?? null} email={user.data?.email ?? null} />;
}

function Roles({ roles }: { readonly roles: SecurityOverview['roles'] }) {
  const list = (title: string, rows: SecurityOverview['roles']['admin'], holders: string) => (
    <div>
      <h3 className="subheading">{title}</h3>
      {rows.length === 0 ? (
        <Empty>None defined.</Empty>
      ) : (
        <ul className="plain-list">
          {rows.map((row) => (
            <li key={row.role}>
              <code>{row.role}</code> {formatCount(row.holders)} {holders} {row.unused ? <Badge tone="warn">unused</Badge> : null}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
  return (
    <Card title="Roles">
      <div className="grid">
        {list('Admin roles', roles.admin, 'users')}
        {list('Organization roles', roles.organization, 'memberships')}
        <div>
          <h3 className="subheading">ADMIN_USER_IDS</h3>
          {roles.configuredAdmins.length === 0 ? (
            <Empty>None configured.</Empty>
          ) : (
            <ul className="plain-list">
              {roles.configuredAdmins.map((admin) => (
                <li key={admin.userId}>
                  {admin.exists ? (
                    <ConfiguredAdmin id={admin.userId} />
                  ) : (
                    <>
                      <code>{admin.userId}</code> <Badge tone="bad">no such user</Badge>
                    </>
                  )}
                </li>
              ))}
            </ul>
          )}
        </div>
      </div>
    </Card>
  );
}

export default function SecurityPage() {
  const [view, setView] = useSearchState(securityView);
  const overview = useRead(securityEndpoints.securityOverview, { query: { hours: view.hours, dormantDays: view.dormantDays, top: view.top, sample: 20 } }, { refetchInterval: 30_000 });
  const data = overview.data;
  return (
    <Page title="Security" actions={<Link to={auditPaths.filtered({ typePrefix: 'credentials.' })}>Sign-in events in the audit trail</Link>}>
      <form className="filters" onSubmit={(event) => event.preventDefault()} aria-label="Security view">
        <Field label="Window">
          <select value={view.hours} onChange={(event) => setView({ hours: Number(event.target.value) })}>
            {[...new Set([...windows, view.hours])].sort((a, b) => a - b).map((hours) => (
              <option key={hours} value={hours}>
                last {windowLabel(hours)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Dormant after">
          <select value={view.dormantDays} onChange={(event) => setView({ dormantDays: Number(event.target.value) })}>
            {[...new Set([...dormancies, view.dormantDays])].sort((a, b) => a - b).map((days) => (
              <option key={days} value={days}>
                {days} days
              </option>
            ))}
          </select>
        </Field>
      </form>
      <ErrorNotice error={overview.error} />
      {overview.isPending ? <Loading what="Reading the security view" /> : null}
      {data ? (
        <>
          <p className="muted">
            {formatInstant(data.window.from)} to {formatInstant(data.window.to)}
          </p>
          <div className="stats">
            <Stat label="Failed sign-ins" value={formatCount(data.signIns.failures)} tone={data.signIns.failures > 0 ? 'warn' : 'ok'} />
            <Stat label="…naming no account" value={formatCount(data.signIns.failuresWithoutAccount)} />
            <Stat label="Identifier lockouts" value={formatCount(data.signIns.identifierLockouts)} tone={data.signIns.identifierLockouts > 0 ? 'bad' : undefined} />
            <Stat label="Account lockouts" value={formatCount(data.signIns.accountLockouts)} tone={data.signIns.accountLockouts > 0 ? 'bad' : undefined} />
            <Stat label="Rate-limited windows" value={formatCount(data.signIns.rateLimited)} />
            <Stat label="Dormant users" value={formatCount(data.dormantUsers.total)} hint={`no sign-in for ${data.dormantUsers.days} days`} />
          </div>
          <div className="grid security-grid">
            <ByAddress rows={data.signIns.byAddress.top} total={data.signIns.byAddress.total} />
            <ByAccount rows={data.signIns.byAccount.top} total={data.signIns.byAccount.total} />
          </div>
          <Dormant dormant={data.dormantUsers} />
          <Roles roles={data.roles} />
        </>
      ) : null}
    </Page>
  );
}
