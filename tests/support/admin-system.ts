import { createAuthClient } from 'better-auth/client';
import { adminClient } from 'better-auth/client/plugins';
import { DEFAULT_PASSWORD, uniqueEmail } from './auth.ts';
import { cookieJarFetch } from './better-auth-fetch.ts';
import type { HttpClient } from './system.ts';
import { spawnService, waitFor, type ServiceProcess } from './processes.ts';
import { startSystem, type StartSystemOptions, type System } from './system.ts';
import { serviceEntries } from '../../scripts/build.ts';
import { pickFreePort } from '@portcullis/platform/free-port';

/** A better-auth client with the admin plugin, and the cookie jar it keeps. */
export type AdminAuthClient = ReturnType<typeof adminAuthClient>;

function adminAuthClient(baseURL: string, fetchOptions: ReturnType<typeof cookieJarFetch>['fetchOptions']) {
  return createAuthClient({ baseURL, fetchOptions, plugins: [adminClient()] });
}

export interface AdminSystem<S extends System = System> {
  readonly system: S;
  /** The second api process, the one whose ADMIN_USER_IDS names the root admin. */
  readonly adminUrl: string;
  readonly rootEmail: string;
  readonly rootId: string;
  /** A client with a cookie jar of its own against the users' api or the admin api (the Origin stays the system's). */
  client(on: 'users' | 'admin'): AdminAuthClient;
  /** The cookies a client holds, to send on calls it has no method for (the ops endpoints). */
  cookiesOf(client: AdminAuthClient): string;
  /** A client on the admin api, signed in as the root admin. */
  signedInRoot(): Promise<AdminAuthClient>;
  stop(): Promise<void>;
}

/**
 * The whole system with a root admin: a user signed up on the first api process, then a second api process on
 * the same log whose ADMIN_USER_IDS names them. An admin id must be configured before it exists, so the
 * root admin's process starts once the root has signed up.
 */
export async function startAdminSystem<S extends System = System>(
  options: StartSystemOptions = {},
  start: (options: StartSystemOptions) => Promise<S> = startSystem as (options: StartSystemOptions) => Promise<S>,
): Promise<AdminSystem<S>> {
  const system = await start(options);
  let adminApi: ServiceProcess | undefined;
  try {
    const rootEmail = uniqueEmail('root');
    const signedUp = await createAuthClient({ baseURL: system.baseUrl, fetchOptions: cookieJarFetch(system).fetchOptions }).signUp.email({
      email: rootEmail,
      password: DEFAULT_PASSWORD,
      name: 'Root',
    });
    if (!signedUp.data) throw new Error(`the root admin could not sign up: ${JSON.stringify(signedUp.error)}`);
    const rootId = signedUp.data.user.id;
    const port = await pickFreePort();
    const adminUrl = `http://127.0.0.1:${port}`;
    adminApi = spawnService({ name: 'admin-api', entry: serviceEntries.api.built, env: {
        ...system.env,
        PORT: String(port),
        ADMIN_USER_IDS: rootId,
        // A browser on the admin api (the ops console) sends that api's own origin.
        TRUSTED_ORIGINS: [system.env.TRUSTED_ORIGINS, adminUrl].filter(Boolean).join(','),
      },
    });
    await waitFor(
      async () => {
        const response = await fetch(`${adminUrl}/readyz`).catch(() => null);
        await response?.body?.cancel();
        return response?.status === 200;
      },
      { timeoutMs: 60_000, intervalMs: 100, message: 'the second api to be ready' },
    );
    const jars = new WeakMap<AdminAuthClient, HttpClient>();
    const client = (on: 'users' | 'admin'): AdminAuthClient => {
      const base = on === 'admin' ? adminUrl : system.baseUrl;
      const { jar, fetchOptions } = cookieJarFetch({ baseUrl: system.baseUrl, authUrl: `${base}/api/auth` });
      const made = adminAuthClient(base, fetchOptions);
      jars.set(made, jar);
      return made;
    };
    const started = adminApi;
    return {
      system,
      adminUrl,
      rootEmail,
      rootId,
      client,
      cookiesOf: (made) => jars.get(made)?.cookieHeader() ?? '',
      signedInRoot: async () => {
        const root = client('admin');
        const signedIn = await root.signIn.email({ email: rootEmail, password: DEFAULT_PASSWORD });
        if (signedIn.error) throw new Error(`the root admin could not sign in: ${JSON.stringify(signedIn.error)}`);
        return root;
      },
      stop: async () => {
        await started.stop();
        await system.stop();
      },
    };
  } catch (error) {
    await adminApi?.stop();
    await system.stop();
    throw error;
  }
}
