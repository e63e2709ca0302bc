import { adminEndpoints } from '@portcullis/contracts/api/admin';
import { sessionEndpoints } from '@portcullis/contracts/api/session';
import { MutationCache, QueryCache, QueryClient, QueryClientProvider, useQueryClient } from '@tanstack/react-query';
import { Component, Suspense, useEffect, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { signIn, signOut } from './api/auth.ts';
import { ApiError } from './api/client.ts';
import { useRead } from './api/hooks.ts';
import { LookupBox } from './lookup.tsx';
import { ImpersonationPanel } from './pages/user-impersonation.tsx';
import { Link, matchPath, navigate, useLocation } from './router.tsx';
import { routes } from './routes.ts';
import { Button, ErrorNotice, Field, Loading } from './ui/components.tsx';
import { useTheme } from './ui/theme.ts';
import { formText } from './ui/format.ts';

const SIGN_IN = '/sign-in';

/** Back to sign-in, and from there back here: any 401 (a session ended or revoked while the page was open). */
function returnToSignIn(): void {
  const here = `${window.location.pathname.replace(/^\/console/, '') || '/'}${window.location.search}`;
  if (here.startsWith(SIGN_IN)) return;
  navigate(`${SIGN_IN}?next=${encodeURIComponent(here)}`, { replace: true });
}

/** The one data cache: every read and write of the console, and the one place a 401 is handled. */
export function createQueryClient(): QueryClient {
  const onError = (error: unknown) => {
    if (error instanceof ApiError && error.status === 401) returnToSignIn();
  };
  return new QueryClient({
    queryCache: new QueryCache({ onError }),
    mutationCache: new MutationCache({ onError }),
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        // A refusal will not change by asking again; a dropped connection might.
        retry: (failures, error) => !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failures < 2,
        refetchOnWindowFocus: true,
      },
    },
  });
}

export function ConsoleApp({ queries }: { readonly queries: QueryClient }) {
  return (
    <QueryClientProvider client={queries}>
      <Gate />
    </QueryClientProvider>
  );
}

/** Who may see the console: a signed-in user whose roles grant user administration; others get sign-in or 403. */
function Gate() {
  const { path, search } = useLocation();
  const session = useRead(sessionEndpoints.getSession, { query: {} }, { staleTime: 30_000 });
  const signedIn = session.data != null;
  const admin = useRead(adminEndpoints.hasPermission, { body: { permissions: { user: ['list'] } } }, { enabled: signedIn, staleTime: 60_000 });

  useEffect(() => {
    if (path !== SIGN_IN && session.isSuccess && session.data == null) returnToSignIn();
  }, [path, session.isSuccess, session.data]);

  if (path === SIGN_IN) return <SignInPage next={new URLSearchParams(search).get('next')} />;
  if (session.isPending || (signedIn && admin.isPending)) return <Loading what="Checking your session" />;
  if (session.error) return <ErrorNotice error={session.error} />;
  const user = session.data?.user;
  if (!user) return <Loading what="Signing in" />;
  // An admin impersonating from the console holds the user's session now: the way back, not a 403.
  if (session.data?.session.impersonatedBy) return <ImpersonationPanel impersonation={session.data} onStopped={() => {}} />;
  if (admin.error && !(admin.error instanceof ApiError && admin.error.status === 403)) return <ErrorNotice error={admin.error} />;
  if (admin.data?.success !== true) return <ForbiddenPage who={user.email} />;
  return <Shell who={{ name: user.name, email: user.email }} />;
}

function SignInPage({ next }: { readonly next: string | null }) {
  const queries = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    const result = await signIn(formText(form, 'identifier'), formText(form, 'password'));
    setBusy(false);
    if (result.error) {
      setError(result.error);
      return;
    }
    // Asked again now, so the gate sees the new session before it looks.
    await queries.resetQueries();
    // Only a path inside the console: `next` comes from the address bar.
    navigate(next?.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
  };
  return (
    <main className="sign-in">
      <form className="card sign-in-card" onSubmit={(event) => void submit(event)} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Portcullis console</h1>
        <p className="muted">Sign in with an admin account.</p>
        <Field label="Email or username">
          <input name="identifier" autoComplete="username" required autoFocus />
        </Field>
        <Field label="Password">
          <input name="password" type="password" autoComplete="current-password" required />
        </Field>
        {error ? (
          <div className="notice tone-bad" role="alert">
            {error}
          </div>
        ) : null}
        <Button tone="primary" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </Button>
      </form>
    </main>
  );
}

function ForbiddenPage({ who }: { readonly who: string }) {
  const queries = useQueryClient();
  return (
    <main className="sign-in">
      <div className="card sign-in-card" role="alert">
        <h1>403: not an admin</h1>
        <p>
          You are signed in as <strong>{who}</strong>, whose roles do not grant user administration. The console is for admins
          (a role with the admin plugin&apos;s <code>user</code> permissions, or an id in <code>ADMIN_USER_IDS</code>).
        </p>
        <Button
          onClick={() =>
            void signOut().then(() => {
              queries.clear();
              navigate(SIGN_IN, { replace: true });
            })
          }
        >
          Sign out and use another account
        </Button>
      </div>
    </main>
  );
}

/** `g` then a page's key moves there, `/` goes to the lookup box: the console works without a mouse. */
function useKeyboardNavigation(lookup: React.RefObject<HTMLInputElement | null>): void {
  useEffect(() => {
    let awaitingPage = false;
    const onKey = (event: KeyboardEvent) => {
      const target = event.target as HTMLElement | null;
      if (target && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))) return;
      if (event.metaKey || event.ctrlKey || event.altKey) return;
      if (event.key === '/') {
        event.preventDefault();
        lookup.current?.focus();
        return;
      }
      if (awaitingPage) {
        awaitingPage = false;
        const route = routes.find((r) => r.nav?.key === event.key);
        if (route) navigate(route.pattern);
        return;
      }
      if (event.key === 'g') awaitingPage = true;
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [lookup]);
}

function Shell({ who }: { readonly who: { readonly name: string; readonly email: string } }) {
  const { path } = useLocation();
  const [theme, toggleTheme] = useTheme();
  const queries = useQueryClient();
  const lookup = useRef<HTMLInputElement>(null);
  useKeyboardNavigation(lookup);
  const matched = routes.map((route) => ({ route, params: matchPath(route.pattern, path) })).find((m) => m.params !== null);
  const Current = matched?.route.page;
  // The most specific entry the path is under: time travel (/audit/time-travel) is not the audit trail.
  const activeNav = routes
    .filter((route) => route.nav && (route.pattern === '/' ? path === '/' : path === route.pattern || path.startsWith(`${route.pattern}/`)))
    .map((route) => route.pattern)
    .sort((a, b) => b.length - a.length)[0];
  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <aside className="sidebar">
        <div className="brand">Portcullis</div>
        <nav aria-label="Console">
          <ul>
            {routes
              .filter((route) => route.nav)
              .map((route) => {
                const active = route.pattern === activeNav;
                return (
                  <li key={route.pattern}>
                    <Link to={route.pattern} aria-current={active ? 'page' : undefined} title={`g ${route.nav?.key}`}>
                      {route.nav?.label}
                    </Link>
                  </li>
                );
              })}
          </ul>
        </nav>
      </aside>
      <div className="main-column">
        <header className="topbar">
          <LookupBox inputRef={lookup} />
          <div className="topbar-right">
            <Button onClick={toggleTheme} aria-label={`Switch to ${theme === 'dark' ? 'light' : 'dark'} theme`}>
              {theme === 'dark' ? '☀ Light' : '☾ Dark'}
            </Button>
            <span className="who" title={who.email}>
              {who.name || who.email}
            </span>
            <Button
              onClick={() =>
                void signOut().then(() => {
                  queries.clear();
                  navigate(SIGN_IN, { replace: true });
                })
              }
            >
              Sign out
            </Button>
          </div>
        </header>
        <main id="main" tabIndex={-1}>
          <PageBoundary key={path}>
            <Suspense fallback={<Loading />}>{Current && matched?.params ? <Current params={matched.params} /> : <NotFound />}</Suspense>
          </PageBoundary>
        </main>
      </div>
    </div>
  );
}

function NotFound() {
  return (
    <div className="empty">
      No page here. <Link to="/">Back to the overview</Link>
    </div>
  );
}

/** A page that throws shows its error in place; the navigation stays usable. */
class PageBoundary extends Component<{ readonly children: ReactNode }, { readonly error: unknown }> {
  override state = { error: null as unknown };
  static getDerivedStateFromError(error: unknown) {
    return { error };
  }
  override render() {
    return this.state.error ? <ErrorNotice error={this.state.error} /> : this.props.children;
  }
}
