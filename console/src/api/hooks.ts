import type { Endpoint } from '@portcullis/contracts/api/endpoint';
import { keepPreviousData, useMutation, useQuery, useQueryClient, type UseQueryOptions } from '@tanstack/react-query';
import { call, type Answer, type CallInput } from './client.ts';

/** The cache key of a call: the operation and what it was asked, so equal calls share one fetch. */
export function keyOf<E extends Endpoint>(endpoint: E, input: CallInput<E>): readonly unknown[] {
  return [endpoint.operationId, input];
}

type ReadOptions<E extends Endpoint> = Omit<UseQueryOptions<Answer<E>, Error, Answer<E>, readonly unknown[]>, 'queryKey' | 'queryFn'>;

/** A read through the one cache; a page changing its filters keeps the previous rows until the new ones come. */
export function useRead<E extends Endpoint>(endpoint: E, input: CallInput<E>, options: ReadOptions<E> = {}) {
  return useQuery({
    queryKey: keyOf(endpoint, input),
    queryFn: ({ signal }) => call(endpoint, input, signal),
    placeholderData: keepPreviousData,
    ...options,
  });
}

/**
 * A write; on success every cached read is marked stale so what the page shows follows (a ban shows on the
 * user, the list and the audit timeline alike).
 */
export function useWrite<E extends Endpoint>(endpoint: E) {
  const queries = useQueryClient();
  return useMutation({
    mutationKey: [endpoint.operationId],
    mutationFn: (input: CallInput<E>) => call(endpoint, input),
    onSuccess: () => queries.invalidateQueries(),
  });
}
