import { errorCatalogue, type ErrorCode } from './catalogue.ts';

/** A refusal the caller can act on; rendered as `{ code, message }` with the catalogue's status. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Particulars for the caller (which fields failed), never secrets. */
  readonly details: string | undefined;

  constructor(code: ErrorCode, options?: { details?: string; cause?: unknown }) {
    const entry = errorCatalogue[code];
    super(entry.message, { cause: options?.cause });
    this.name = 'DomainError';
    this.code = code;
    this.status = entry.status;
    this.details = options?.details;
  }
}

export function isDomainError(value: unknown): value is DomainError {
  return value instanceof DomainError;
}
