export { errorCatalogue, wireCode, type ErrorCode } from './catalogue.ts';
export { DomainError } from './domain-error.ts';
