import { errorCatalogue, type ErrorCode } from './catalogue.ts';

/** A refusal the caller can act on; rendered as `{ code, message }` with the catalogue's status. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Particulars for the caller (which fields failed), never secrets. */
  readonly details: string | undefined;
  /** How long until the refusal lifts (a rate limit, a sign-in lock): sent as Retry-After and better-auth's X-Retry-After. */
  readonly retryAfterSeconds: number | undefined;

  /**
   * `status` replaces the catalogue's only where better-auth answers one code with two statuses depending
   * on the route (the organization plugin does), so clients see the status they expect from each route.
   */
  constructor(code: ErrorCode, options?: { details?: string; cause?: unknown; status?: number; retryAfterSeconds?: number }) {
    const entry = errorCatalogue[code];
    super(entry.message, { cause: options?.cause });
    this.name = 'DomainError';
    this.code = code;
    this.status = options?.status ?? entry.status;
    this.details = options?.details;
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
}

