import { mailDeliveryStatuses, mailOpsEndpoints, type MailDelivery, type MailDeliveryStatus, type MailboxMessage } from '@portcullis/contracts/api/mail-ops';
import { mailKinds, type MailKind } from '@portcullis/contracts/mail/mail-job';
import type { ColumnDef } from '@tanstack/react-table';
import { useState } from 'react';
import { z } from 'zod';
import { useRead, useWrite } from '../api/hooks.ts';
import { Link, useSearchState } from '../router.tsx';
import { AuditLink, Badge, Button, Card, ErrorNotice, Field, Page, Stat, UserRef } from '../ui/components.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { formatAgo, formatCount, formatInstant } from '../ui/format.ts';
import { safeMailHtml } from './mail-content.ts';
import { formatSeconds } from './overview-rows.ts';

const REFRESH_MS = 5_000;

/** Several values of one filter, comma-joined in the address; an unknown one is dropped, not the whole list. */
function listParam<const T extends string>(values: readonly T[]) {
  return z
    .string()
    .catch('')
    .transform((text) => [...new Set(text.split(',').filter((value): value is T => (values as readonly string[]).includes(value)))]);
}

const mailView = z.object({
  status: listParam(mailDeliveryStatuses),
  kind: listParam(mailKinds),
  to: z.string().max(320).catch(''),
  job: z.uuid().optional().catch(undefined),
  offset: z.coerce.number().int().min(0).catch(0),
  limit: z.coerce.number().int().min(1).max(200).catch(50),
});
type MailView = z.output<typeof mailView>;

const statusTone: Record<MailDeliveryStatus, 'ok' | 'warn' | 'bad'> = { sent: 'ok', pending: 'warn', dead: 'bad' };

function jobLink(jobId: string) {
  return `/mail?job=${encodeURIComponent(jobId)}`;
}

function Queue() {
  const queue = useRead(mailOpsEndpoints.mailQueue, {}, { refetchInterval: REFRESH_MS, staleTime: 0 });
  const data = queue.data;
  return (
    <>
      <ErrorNotice error={queue.error} />
      <div className="stats" role="group" aria-label="Mail queue">
        <Stat
          label="Pending"
          value={formatCount(data?.pending)}
          tone={data && data.pending > 0 ? 'warn' : undefined}
          hint={
            <>
              {data && data.waitingForRelay > 0 ? `${formatCount(data.waitingForRelay)} waiting for the relay · ` : null}
              <Link to="/mail?status=pending">show</Link>
            </>
          }
        />
        <Stat label="Dead letters" value={formatCount(data?.dead)} tone={data && data.dead > 0 ? 'bad' : undefined} hint={<Link to="/mail?status=dead">show</Link>} />
        <Stat label="Sent in 24 h" value={formatCount(data?.sentLast24h)} />
        <Stat
          label="Oldest unsent"
          value={formatSeconds(data?.oldestUnsentAgeSeconds)}
          tone={data?.oldestUnsentAgeSeconds != null && data.oldestUnsentAgeSeconds > 300 ? 'bad' : undefined}
          hint={data?.oldestUnsentAt ? formatInstant(data.oldestUnsentAt) : 'nothing waits'}
        />
      </div>
    </>
  );
}

function Checkboxes<T extends string>({ legend, values, chosen, onChange }: { readonly legend: string; readonly values: readonly T[]; readonly chosen: readonly T[]; readonly onChange: (next: T[]) => void }) {
  return (
    <fieldset className="mail-choices">
      <legend className="field-label">{legend}</legend>
      {values.map((value) => (
        <label key={value}>
          <input
            type="checkbox"
            checked={chosen.includes(value)}
            onChange={(event) => onChange(event.target.checked ? [...chosen, value] : chosen.filter((v) => v !== value))}
          />{' '}
          {value}
        </label>
      ))}
    </fieldset>
  );
}

function Filters({ view, setView }: { readonly view: MailView; readonly setView: (patch: Partial<MailView>, options?: { readonly replace?: boolean }) => void }) {
  return (
    <form className="filters" role="search" aria-label="Deliveries" onSubmit={(event) => event.preventDefault()}>
      <Checkboxes legend="Status" values={mailDeliveryStatuses} chosen={view.status} onChange={(status) => setView({ status, offset: 0 })} />
      <Checkboxes legend="Kind" values={mailKinds} chosen={view.kind} onChange={(kind: MailKind[]) => setView({ kind, offset: 0 })} />
      <Field label="Recipient">
        <input type="search" value={view.to} placeholder="contains…" onChange={(event) => setView({ to: event.target.value, offset: 0 }, { replace: true })} />
      </Field>
      {view.job ? (
        <div className="field">
          <span className="field-label">Job</span>
          <span>
            <code>{view.job}</code> <Button onClick={() => setView({ job: undefined, offset: 0 })}>Show every job</Button>
          </span>
        </div>
      ) : null}
    </form>
  );
}

function deliveryColumns(retry: (jobId: string) => void, retrying: string | null): ColumnDef<MailDelivery, unknown>[] {
  return [
    { id: 'to', header: 'Recipient', cell: ({ row }) => (row.original.userId ? <UserRef id={row.original.userId} email={row.original.to} /> : row.original.to) },
    { id: 'kind', header: 'Kind', cell: ({ row }) => row.original.kind },
    {
      id: 'status',
      header: 'Status',
      cell: ({ row }) => (
        <span className="ref">
          <Badge tone={statusTone[row.original.status]}>{row.original.status}</Badge>
          <span className="ref-detail" title={row.original.firstAttemptedAt ? `first attempt ${formatInstant(row.original.firstAttemptedAt)}` : undefined}>
            {row.original.attempts} attempt{row.original.attempts === 1 ? '' : 's'}
          </span>
        </span>
      ),
    },
    {
      id: 'when',
      header: 'When',
      cell: ({ row }) => {
        const d = row.original;
        const [what, at] = d.deadAt ? ['dead', d.deadAt] : d.sentAt ? ['sent', d.sentAt] : d.nextAttemptAt ? ['next try', d.nextAttemptAt] : ['received', d.receivedAt];
        return (
          <span title={formatInstant(at)}>
            {what} {formatAgo(at)}
          </span>
        );
      },
    },
    {
      id: 'detail',
      header: 'Last error / answer',
      cell: ({ row }) => <span className="mail-detail">{row.original.lastError ?? row.original.smtpResponse ?? row.original.transport ?? '—'}</span>,
    },
    {
      id: 'job',
      header: 'Job',
      cell: ({ row }) => (
        <span className="ref">
          <Link to={jobLink(row.original.jobId)} className="mono" title={row.original.jobId}>
            {row.original.jobId.slice(0, 8)}…
          </Link>
          <AuditLink filter={{ stream: `mail-${row.original.jobId}` }} />
        </span>
      ),
    },
    {
      id: 'action',
      header: 'Action',
      cell: ({ row }) =>
        row.original.status === 'dead' ? (
          <Button disabled={retrying !== null} onClick={() => retry(row.original.jobId)}>
            Retry
          </Button>
        ) : null,
    },
  ];
}

function Deliveries({ view, setView }: { readonly view: MailView; readonly setView: (patch: Partial<MailView>, options?: { readonly replace?: boolean }) => void }) {
  const deliveries = useRead(
    mailOpsEndpoints.mailDeliveries,
    {
      query: {
        ...(view.status.length > 0 ? { status: view.status.join(',') } : {}),
        ...(view.kind.length > 0 ? { kind: view.kind.join(',') } : {}),
        ...(view.to ? { to: view.to } : {}),
        ...(view.job ? { jobId: view.job } : {}),
        limit: view.limit,
        offset: view.offset,
      },
    },
    { refetchInterval: REFRESH_MS },
  );
  const retry = useWrite(mailOpsEndpoints.retryMailDelivery);
  const [retrying, setRetrying] = useState<string | null>(null);
  const start = (jobId: string) => {
    setRetrying(jobId);
    retry.mutate({ params: { jobId } }, { onSettled: () => setRetrying(null) });
  };
  return (
    <Card title="Deliveries" className="mail-deliveries">
      <Filters view={view} setView={setView} />
      {retry.data ? (
        <div className="notice tone-ok" role="status">
          Retry of job <Link to={jobLink(retry.data.jobId)}>{retry.data.jobId}</Link> requested at {formatInstant(retry.data.requestedAt)}: the mailer makes it pending
          again.
        </div>
      ) : null}
      <ErrorNotice error={retry.error ?? deliveries.error} />
      <DataTable
        caption="Mail deliveries"
        columns={deliveryColumns(start, retrying)}
        rows={deliveries.data?.deliveries ?? []}
        total={deliveries.data?.total ?? 0}
        rowId={(delivery) => delivery.jobId}
        page={{ offset: view.offset, limit: view.limit }}
        onPage={(page) => setView(page)}
        busy={deliveries.isFetching}
      />
    </Card>
  );
}

function MailboxEntry({ message, highlighted }: { readonly message: MailboxMessage; readonly highlighted: boolean }) {
  const [html, setHtml] = useState(false);
  return (
    <article className={`mail-message${highlighted ? ' highlighted' : ''}`} aria-label={`${message.subject} to ${message.to}`}>
      <header className="mail-message-header">
        <strong>{message.subject}</strong>
        <span className="muted">
          to {message.to} · from {message.from} · <span title={formatInstant(message.receivedAt)}>{formatAgo(message.receivedAt)}</span> ·{' '}
          <Link to={jobLink(message.jobId)}>job</Link>
        </span>
        {message.html ? (
          <Button onClick={() => setHtml(!html)} aria-pressed={html}>
            {html ? 'Text' : 'HTML'}
          </Button>
        ) : null}
      </header>
      {html ? (
        <iframe className="mail-html" sandbox="" srcDoc={safeMailHtml(message.html)} title={`HTML part of ${message.subject}`} />
      ) : (
        // Text, never a link: the addresses in it are the recipient's (a reset link), not the admin's.
        <pre className="mail-text">{message.text}</pre>
      )}
    </article>
  );
}

function Mailbox({ view }: { readonly view: MailView }) {
  // The mailbox matches a whole address only: a part typed into the recipient filter would hide everything.
  const whole = view.to.includes('@') ? view.to.trim() : '';
  const mailbox = useRead(mailOpsEndpoints.mailbox, { query: { limit: 50, ...(whole ? { to: whole } : {}) } }, { refetchInterval: REFRESH_MS });
  const messages = (mailbox.data?.messages ?? []).filter((message) => !view.job || message.jobId === view.job);
  return (
    <Card title="Dev mailbox">
      <p className="muted">Mail delivered without SMTP_URL, newest first{whole ? ` to ${whole}` : ''}. Links are shown, not followed: they belong to the recipient.</p>
      <ErrorNotice error={mailbox.error} />
      {messages.map((message) => (
        <MailboxEntry key={message.id} message={message} highlighted={message.jobId === view.job} />
      ))}
      {mailbox.data && messages.length === 0 ? <div className="empty">No mail here.</div> : null}
    </Card>
  );
}

export default function MailPage() {
  const [view, setView] = useSearchState(mailView);
  return (
    <Page title="Mail">
      <Queue />
      <Deliveries view={view} setView={setView} />
      <Mailbox view={view} />
    </Page>
  );
}
