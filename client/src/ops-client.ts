import type { Endpoint } from '@portcullis/contracts/api/endpoint';
import { auditEndpoints, type AuditEvent } from '@portcullis/contracts/api/audit';
import { auditVerificationEndpoints } from '@portcullis/contracts/api/audit-verification';
import { mailOpsEndpoints } from '@portcullis/contracts/api/mail-ops';
import { projectionOpsEndpoints, type ProjectionRebuild } from '@portcullis/contracts/api/projection-ops';
import { callEndpoint, endpointUrl, mergeFetchOptions, type Answer, type CallArguments, type CallInput, type EndpointTarget } from './endpoint-call.ts';
import { pause, type FetchOptions } from './fetch.ts';

/**
 * The operators' endpoints the ops client calls, as declared in contracts: the audit trail (search, one
 * event, export, the signed head, time travel and its history, the hash-chain check), projections (status,
 * rebuild, a rebuild's progress) and mail (the delivery log, dead-letter retry, the queue, the dev mailbox).
 */
export const opsClientEndpoints = {
  ...auditEndpoints,
  ...auditVerificationEndpoints,
  ...projectionOpsEndpoints,
  ...mailOpsEndpoints,
};
type OpsEndpoints = typeof opsClientEndpoints;

type Calls<T extends Readonly<Record<string, Endpoint>>> = {
  readonly [K in keyof T]: (...args: CallArguments<T[K]>) => Promise<Answer<T[K]>>;
};

export interface OpsClientOptions extends FetchOptions {
  /** Where the api answers (`https://auth.example.com`); empty for the page's own origin. */
  readonly baseURL: string;
  /** The auth API's base path (AUTH_BASE_PATH), `/api/auth` unless the server says otherwise. */
  readonly authBasePath?: string;
  /** The server key (AUTH_SERVER_API_KEY), sent as `x-api-key`: a backend's way in. An admin's session is the other (`auth`, or cookies). */
  readonly apiKey?: string;
}

export interface FollowRebuildOptions {
  /** Milliseconds between readings of the rebuild's progress; 1000 unless said. */
  readonly intervalMs?: number;
  readonly signal?: AbortSignal;
}

export type OpsClient = Omit<Calls<OpsEndpoints>, 'auditExport'> & {
  /** The audit trail with the search's filters, as the server streams it: NDJSON, one AuditEvent a line. */
  readonly auditExport: (...args: CallArguments<OpsEndpoints['auditExport']>) => Promise<string>;
  /** The export, each line parsed. */
  readonly auditExportEvents: (...args: CallArguments<OpsEndpoints['auditExport']>) => Promise<AuditEvent[]>;
  /**
   * A rebuild's progress, read again every `intervalMs` until it has succeeded or failed: each reading that
   * differs from the one before (status, position, percent), the last one the finished rebuild (also returned).
   */
  readonly followRebuild: (id: string, options?: FollowRebuildOptions) => AsyncGenerator<ProjectionRebuild, ProjectionRebuild>;
  /** The URL of an endpoint for this input (a link to the export, say). */
  readonly urlOf: <E extends Endpoint>(endpoint: E, input: CallInput<E>) => string;
};

/**
 * A typed client of the ops API. Operators only: pass `apiKey` (a backend), or an admin's session as
 * `auth: { type: 'Bearer', token }` (the token sign-in answers) or as cookies (a browser, `credentials`).
 */
export function createOpsClient(options: OpsClientOptions): OpsClient {
  const { baseURL, authBasePath, apiKey, ...fetchOptions } = options;
  const target: EndpointTarget = { baseURL, ...(authBasePath !== undefined ? { authBasePath } : {}) };
  const defaults: FetchOptions = apiKey ? { ...fetchOptions, headers: { ...fetchOptions.headers, 'x-api-key': apiKey } } : fetchOptions;
  const bind = <E extends Endpoint>(endpoint: E) =>
    (...[input, call]: CallArguments<E>): Promise<Answer<E>> => callEndpoint(target, endpoint, (input ?? {}) as CallInput<E>, mergeFetchOptions(defaults, call));
  const calls = Object.fromEntries(Object.entries(opsClientEndpoints).map(([name, endpoint]) => [name, bind(endpoint)])) as unknown as Calls<OpsEndpoints>;

  const auditExport = async (...args: CallArguments<OpsEndpoints['auditExport']>): Promise<string> => {
    const text = await calls.auditExport(...args);
    return typeof text === 'string' ? text : text === null ? '' : JSON.stringify(text);
  };

  return {
    ...calls,
    auditExport,
    auditExportEvents: async (...args) =>
      (await auditExport(...args))
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as AuditEvent),
    followRebuild: async function* (id, follow = {}) {
      let last: ProjectionRebuild | undefined;
      for (;;) {
        const rebuild = await calls.projectionRebuild({ params: { id } }, follow.signal ? { signal: follow.signal } : undefined);
        const finished = rebuild.status === 'succeeded' || rebuild.status === 'failed';
        if (finished) {
          yield rebuild;
          return rebuild;
        }
        if (!last || last.status !== rebuild.status || last.position !== rebuild.position || last.percent !== rebuild.percent) yield rebuild;
        last = rebuild;
        await pause(follow.intervalMs ?? 1000, follow.signal);
      }
    },
    urlOf: (endpoint, input) => endpointUrl(target, endpoint, input),
  };
}
