export { errorCatalogue, isErrorCode, wireCode, type ErrorCode } from './catalogue.ts';
export { DomainError, isDomainError } from './domain-error.ts';
