import { useState, type FormEvent, type ReactNode } from 'react';
import { authClient } from './auth.ts';

/** better-auth's client answers `{ data, error }`; a refusal carries the api's message. */
type Answer = { error: { message?: string | undefined; statusText?: string } | null };

/** Runs one call, showing its refusal (or a network failure, such as a CORS refusal) instead of throwing. */
function useAction(): { error: string | null; busy: boolean; run: (call: () => Promise<Answer>) => Promise<boolean> } {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const run = async (call: () => Promise<Answer>): Promise<boolean> => {
    setBusy(true);
    setError(null);
    try {
      const answer = await call();
      if (answer.error) setError(answer.error.message ?? answer.error.statusText ?? 'Refused');
      return !answer.error;
    } catch (thrown) {
      setError(thrown instanceof Error ? thrown.message : String(thrown));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { error, busy, run };
}

function field(form: HTMLFormElement, name: string): string {
  return (form.elements.namedItem(name) as HTMLInputElement).value;
}

function Section({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section aria-label={title}>
      <h2>{title}</h2>
      {children}
    </section>
  );
}

function SignUp() {
  const { error, busy, run } = useAction();
  const [sentTo, setSentTo] = useState<string | null>(null);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const email = field(form, 'email');
    // The verification link brings the browser back here, on this origin (a trusted one).
    const callbackURL = `${window.location.origin}/?verified=1`;
    if (await run(() => authClient.signUp.email({ name: field(form, 'name'), email, password: field(form, 'password'), callbackURL }))) setSentTo(email);
  };
  return (
    <Section title="Sign up">
      <form onSubmit={(event) => void submit(event)}>
        <label>Name <input name="name" required /></label>
        <label>Email <input name="email" type="email" required /></label>
        <label>Password <input name="password" type="password" required minLength={8} /></label>
        <button disabled={busy}>Sign up</button>
      </form>
      {sentTo && <p role="status">Check your inbox: a verification link went to {sentTo}.</p>}
      {error && <p role="alert">{error}</p>}
    </Section>
  );
}

function SignIn() {
  const { error, busy, run } = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    await run(() => authClient.signIn.email({ email: field(form, 'email'), password: field(form, 'password') }));
  };
  return (
    <Section title="Sign in">
      <form onSubmit={(event) => void submit(event)}>
        <label>Email <input name="email" type="email" required /></label>
        <label>Password <input name="password" type="password" required /></label>
        <button disabled={busy}>Sign in</button>
      </form>
      {error && <p role="alert">{error}</p>}
    </Section>
  );
}

function slugOf(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

function Organizations() {
  const organizations = authClient.useListOrganizations();
  const active = authClient.useActiveOrganization();
  const { error, busy, run } = useAction();
  const create = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const name = field(form, 'organization');
    // A new organization becomes the active one.
    if (await run(() => authClient.organization.create({ name, slug: slugOf(name) }))) form.reset();
  };
  const invite = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    if (await run(() => authClient.organization.inviteMember({ email: field(form, 'invitee'), role: 'member' }))) {
      form.reset();
      // The active organization's invitations are part of its full answer: fetch it again.
      void active.refetch();
    }
  };
  const invitations = (active.data?.invitations ?? []).filter((invitation) => invitation.status === 'pending');
  return (
    <Section title="Organizations">
      <form onSubmit={(event) => void create(event)}>
        <label>New organization <input name="organization" required /></label>
        <button disabled={busy}>Create</button>
      </form>
      <ul aria-label="Your organizations">
        {(organizations.data ?? []).map((organization) => (
          <li key={organization.id}>
            {organization.name}{' '}
            {organization.id === active.data?.id ? (
              <strong>(active)</strong>
            ) : (
              <button disabled={busy} onClick={() => void run(() => authClient.organization.setActive({ organizationId: organization.id }))}>
                Switch to {organization.name}
              </button>
            )}
          </li>
        ))}
      </ul>
      <p aria-label="Active organization">Active organization: {active.data?.name ?? 'none'}</p>
      {active.data && (
        <>
          <form onSubmit={(event) => void invite(event)}>
            <label>Invite by email <input name="invitee" type="email" required /></label>
            <button disabled={busy}>Invite</button>
          </form>
          <ul aria-label="Pending invitations">
            {invitations.map((invitation) => (
              <li key={invitation.id}>
                {invitation.email} ({invitation.role})
              </li>
            ))}
          </ul>
        </>
      )}
      {error && <p role="alert">{error}</p>}
    </Section>
  );
}

export function App() {
  const session = authClient.useSession();
  const { run } = useAction();
  const verified = new URLSearchParams(window.location.search).get('verified') === '1';
  // Only the first load: a refetch (after sign-up, say) must not unmount the forms and what they show.
  if (session.isPending && !session.isRefetching) return <p>Loading…</p>;
  if (!session.data) {
    return (
      <main>
        <h1>Portcullis React example</h1>
        {verified && <p role="status">Your email is verified: sign in.</p>}
        <SignUp />
        <SignIn />
      </main>
    );
  }
  const { user } = session.data;
  return (
    <main>
      <h1>Portcullis React example</h1>
      <p aria-label="Signed in as">
        Signed in as {user.name} ({user.email}){user.emailVerified ? ', verified' : ''}
      </p>
      <button onClick={() => void run(() => authClient.signOut())}>Sign out</button>
      <Organizations />
    </main>
  );
}
