import { adminEndpoints } from '@portcullis/contracts/api/admin';
import type { User } from '@portcullis/contracts/api/user';
import { useState, type FormEvent } from 'react';
import { useWrite } from '../api/hooks.ts';
import { Button, ConfirmButton, ErrorNotice, Field } from '../ui/components.tsx';
import { formatInstant, formText } from '../ui/format.ts';
import { formatDuration, parseDuration } from './sessions-view.ts';

// What an admin does to one user from their page: ban and unban, set a password, end every session.
// Each goes through better-auth's admin endpoints, so the rules (no banning admins, yourself...) are the
// server's and a refusal shows as the catalogue words it.

/** A hundred years, the admin endpoint's bound: longer is "until unbanned". */
const MAX_BAN_SECONDS = 100 * 365 * 24 * 3600;

/** The ban form's expiry as seconds (undefined: until unbanned), or what is wrong with it. */
export function banExpiryOf(text: string): { readonly seconds: number | undefined } | { readonly problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return { seconds: undefined };
  const seconds = parseDuration(trimmed);
  if (seconds === null || seconds === 0) return { problem: 'a duration: 30m, 12h, 7d, 4w (empty: until unbanned)' };
  if (seconds > MAX_BAN_SECONDS) return { problem: 'at most 100 years; leave it empty for a ban until unbanned' };
  return { seconds };
}

export function BanControls({ user }: { readonly user: User }) {
  const ban = useWrite(adminEndpoints.banUser);
  const unban = useWrite(adminEndpoints.unbanUser);
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const expiry = banExpiryOf(formText(form, 'expiresIn'));
    if ('problem' in expiry) {
      setProblem(expiry.problem);
      return;
    }
    setProblem(null);
    const reason = formText(form, 'reason').trim();
    unban.reset();
    ban.mutate({ body: { userId: user.id, ...(reason ? { banReason: reason } : {}), ...(expiry.seconds ? { banExpiresIn: expiry.seconds } : {}) } });
  };
  // Said in either form: the page shows the new state a moment later, once the read model has it.
  const done = ban.isSuccess ? 'Banned; their sessions were ended.' : unban.isSuccess ? 'Unbanned.' : null;
  const notice = done ? (
    <span className="notice tone-ok" role="status">
      {done}
    </span>
  ) : null;
  if (user.banned) {
    return (
      <div className="action-block">
        <p>
          Banned{user.banExpires ? ` until ${formatInstant(user.banExpires)}` : ' until unbanned'}
          {user.banReason ? (
            <>
              : <q>{user.banReason}</q>
            </>
          ) : null}
        </p>
        <Button
          tone="primary"
          disabled={unban.isPending}
          onClick={() => {
            ban.reset();
            unban.mutate({ body: { userId: user.id } });
          }}
        >
          Unban
        </Button>
        {notice}
        <ErrorNotice error={unban.error} />
      </div>
    );
  }
  return (
    <form className="action-block" aria-label="Ban" onSubmit={submit}>
      <Field label="Ban reason">
        <input name="reason" maxLength={1024} size={36} placeholder="shown to them when sign-in is refused" />
      </Field>
      <Field label="Ban expires after" hint={problem ?? 'empty: until unbanned; 30m, 12h, 7d, 4w'}>
        <input name="expiresIn" size={8} aria-invalid={problem ? true : undefined} placeholder={formatDuration(7 * 86_400)} />
      </Field>
      <Button tone="danger" type="submit" disabled={ban.isPending}>
        Ban
      </Button>
      {notice}
      <ErrorNotice error={ban.error} />
    </form>
  );
}

export function SetPasswordForm({ user }: { readonly user: User }) {
  const setPassword = useWrite(adminEndpoints.setUserPassword);
  const [value, setValue] = useState('');
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setPassword.mutate({ body: { userId: user.id, newPassword: value } }, { onSuccess: () => setValue('') });
  };
  return (
    <form className="action-block" aria-label="Set password" onSubmit={submit}>
      <Field label="New password" hint="their other sessions stay; revoke them too if the old one leaked">
        <input type="password" autoComplete="new-password" value={value} onChange={(event) => setValue(event.target.value)} required />
      </Field>
      <Button type="submit" disabled={setPassword.isPending || value === ''}>
        Set password
      </Button>
      {setPassword.isSuccess ? (
        <span className="notice tone-ok" role="status">
          Password set.
        </span>
      ) : null}
      <ErrorNotice error={setPassword.error} />
    </form>
  );
}

export function RevokeAllSessions({ user, count }: { readonly user: User; readonly count: number }) {
  const revokeAll = useWrite(adminEndpoints.revokeUserSessions);
  return (
    <span className="action-inline">
      <ConfirmButton
        label="Revoke all sessions"
        confirm={`Sign ${user.email} out of all ${count} sessions?`}
        disabled={count === 0 || revokeAll.isPending}
        onConfirm={() => revokeAll.mutate({ body: { userId: user.id } })}
      />
      {revokeAll.isSuccess ? (
        <span className="notice tone-ok" role="status">
          Every session ended.
        </span>
      ) : null}
      <ErrorNotice error={revokeAll.error} />
    </span>
  );
}
