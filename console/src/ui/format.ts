/** A submitted form's text field ('' when absent). */
export function formText(form: FormData, name: string): string {
  const value = form.get(name);
  return typeof value === 'string' ? value : '';
}

/** Times as an operator reads them: local, to the second, with how long ago. */
export function formatInstant(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return '—';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return String(value);
  return date.toLocaleString(undefined, { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function formatAgo(value: string | number | null | undefined, now: number = Date.now()): string {
  if (value === null || value === undefined || value === '') return '—';
  const seconds = Math.round((now - new Date(value).getTime()) / 1000);
  const future = seconds < 0;
  const span = Math.abs(seconds);
  const text =
    span < 60 ? `${span} s` : span < 3600 ? `${Math.floor(span / 60)} min` : span < 86_400 ? `${Math.floor(span / 3600)} h` : `${Math.floor(span / 86_400)} d`;
  return future ? `in ${text}` : `${text} ago`;
}

export function formatCount(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : new Intl.NumberFormat().format(value);
}

/** A value of any shape in one line, for before/after cells. */
export function formatValue(value: unknown): string {
  if (value === undefined) return '(absent)';
  if (value === null) return 'null';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
