export { errorCatalogue, isErrorCode, type ErrorCode } from './catalogue.ts';
export { DomainError, isDomainError } from './domain-error.ts';
