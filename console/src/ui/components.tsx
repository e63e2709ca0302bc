import type { ButtonHTMLAttributes, ReactNode } from 'react';
import { useState } from 'react';
import { ApiError, textOf } from '../api/client.ts';
import { Link } from '../router.tsx';

export function Page({ title, actions, children }: { readonly title: string; readonly actions?: ReactNode; readonly children: ReactNode }) {
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-header">
        <h1 id="page-title">{title}</h1>
        {actions ? <div className="page-actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

export function Card({ title, children, className }: { readonly title?: ReactNode; readonly children: ReactNode; readonly className?: string }) {
  return (
    <div className={`card${className ? ` ${className}` : ''}`}>
      {title ? <h2 className="card-title">{title}</h2> : null}
      {children}
    </div>
  );
}

export function Stat({ label, value, hint, tone }: { readonly label: string; readonly value: ReactNode; readonly hint?: ReactNode; readonly tone?: 'ok' | 'warn' | 'bad' }) {
  return (
    <div className={`stat${tone ? ` tone-${tone}` : ''}`}>
      <div className="stat-label">{label}</div>
      <div className="stat-value">{value}</div>
      {hint ? <div className="stat-hint">{hint}</div> : null}
    </div>
  );
}

export function Badge({ tone = 'neutral', children }: { readonly tone?: 'neutral' | 'ok' | 'warn' | 'bad' | 'info'; readonly children: ReactNode }) {
  return <span className={`badge tone-${tone}`}>{children}</span>;
}

export function Button({ tone = 'default', ...rest }: ButtonHTMLAttributes<HTMLButtonElement> & { readonly tone?: 'default' | 'primary' | 'danger' }) {
  return <button type="button" className={`button tone-${tone}`} {...rest} />;
}

/** A destructive action asks once more, in place, instead of a modal that traps focus. */
export function ConfirmButton({ label, confirm, onConfirm, disabled }: { readonly label: string; readonly confirm: string; readonly onConfirm: () => void; readonly disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <Button tone="danger" disabled={disabled} onClick={() => setAsking(true)}>
        {label}
      </Button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={confirm}>
      <span>{confirm}</span>
      <Button
        tone="danger"
        autoFocus
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
      >
        Yes
      </Button>
      <Button onClick={() => setAsking(false)}>No</Button>
    </span>
  );
}

export function Loading({ what = 'Loading' }: { readonly what?: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      {what}…
    </div>
  );
}

/** A refusal as the catalogue words it, with its code for searching the docs and logs. */
export function ErrorNotice({ error }: { readonly error: unknown }) {
  if (!error) return null;
  const code = error instanceof ApiError ? error.code : 'ERROR';
  const message = error instanceof Error ? error.message : textOf(error);
  return (
    <div className="notice tone-bad" role="alert">
      <strong>{message}</strong> <code>{code}</code>
    </div>
  );
}

export function Empty({ children }: { readonly children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/** A user named as people know them (name and email), linking to their page; the id stays one click away. */
export function UserRef({ id, name, email }: { readonly id: string | null | undefined; readonly name?: string | null; readonly email?: string | null }) {
  if (!id) return <span className="muted">—</span>;
  return (
    <Link to={`/users/${encodeURIComponent(id)}`} className="ref" title={id}>
      <span className="ref-name">{name || email || id}</span>
      {name && email ? <span className="ref-detail">{email}</span> : null}
    </Link>
  );
}

export function OrganizationRef({ id, name, slug }: { readonly id: string | null | undefined; readonly name?: string | null; readonly slug?: string | null }) {
  if (!id) return <span className="muted">—</span>;
  return (
    <Link to={`/organizations/${encodeURIComponent(id)}`} className="ref" title={id}>
      <span className="ref-name">{name || slug || id}</span>
      {name && slug ? <span className="ref-detail">{slug}</span> : null}
    </Link>
  );
}

/** Where the audit trail of an object starts: its history, already filtered. */
export function AuditLink({ filter, children = 'History' }: { readonly filter: Record<string, string>; readonly children?: ReactNode }) {
  return (
    <Link to={`/audit?${new URLSearchParams(filter).toString()}`} className="audit-link">
      {children}
    </Link>
  );
}

export function Field({ label, children, hint }: { readonly label: string; readonly children: ReactNode; readonly hint?: string }) {
  return (
    <label className="field">
      <span className="field-label">{label}</span>
      {children}
      {hint ? <span className="field-hint">{hint}</span> : null}
    </label>
  );
}

export function KeyValues({ entries }: { readonly entries: readonly (readonly [string, ReactNode])[] }) {
  return (
    <dl className="key-values">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}
