import { consoleOpsEndpoints, type OpsLookupMatch } from '@portcullis/contracts/api/console-ops';
import { useState, type FormEvent, type RefObject } from 'react';
import { ApiError, call } from './api/client.ts';
import { navigate } from './router.tsx';
import { formText } from './ui/format.ts';

/** Where the console shows what an id names. */
export function pathOfMatch(match: OpsLookupMatch): string {
  switch (match.kind) {
    case 'user':
      return `/users/${encodeURIComponent(match.id)}`;
    case 'session':
      return `/users/${encodeURIComponent(match.user.id)}`;
    case 'organization':
      return `/organizations/${encodeURIComponent(match.id)}`;
    case 'invitation':
    case 'team':
      return `/organizations/${encodeURIComponent(match.organizationId)}`;
    case 'mail-job':
      return `/mail?job=${encodeURIComponent(match.id)}`;
    case 'event':
      return `/audit/events/${match.position}`;
  }
}

/** Paste an id from a log line, press Enter, land on its page (or a choice when the id names several things). */
export function LookupBox({ inputRef }: { readonly inputRef: RefObject<HTMLInputElement | null> }) {
  const [message, setMessage] = useState<string | null>(null);
  const [choices, setChoices] = useState<readonly OpsLookupMatch[]>([]);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const id = formText(new FormData(event.currentTarget), 'id').trim();
    if (id === '') return;
    setMessage(null);
    setChoices([]);
    try {
      const answer = await call(consoleOpsEndpoints.opsLookup, { query: { id } });
      const [only, ...more] = answer.matches;
      if (only && more.length === 0) navigate(pathOfMatch(only));
      else setChoices(answer.matches);
    } catch (error) {
      setMessage(error instanceof ApiError && error.status === 404 ? `Nothing has the id ${id}` : error instanceof Error ? error.message : String(error));
    }
  };
  return (
    <form className="lookup" role="search" onSubmit={(event) => void submit(event)}>
      <input ref={inputRef} name="id" placeholder="Look up an id from a log  ( / )" aria-label="Look up an id" spellCheck={false} />
      {message ? (
        <span className="lookup-message" role="status">
          {message}
        </span>
      ) : null}
      {choices.length > 0 ? (
        <ul className="lookup-choices" aria-label="What the id names">
          {choices.map((match) => (
            <li key={`${match.kind}-${match.id}`}>
              <button type="button" onClick={() => (setChoices([]), navigate(pathOfMatch(match)))}>
                {match.kind}: {match.id}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </form>
  );
}
