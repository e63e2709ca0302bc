export interface PrometheusSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a Prometheus text exposition (comments skipped), as another process' /metrics answers it. */
export function parsePrometheusText(text: string): PrometheusSample[] {
  const samples: PrometheusSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(LABEL)) labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    const value = Number(match[3] === '+Inf' ? Infinity : match[3] === '-Inf' ? -Infinity : match[3]);
    samples.push({ name: match[1]!, labels, value });
  }
  return samples;
}

/** Reads another process' /metrics, giving up after `timeoutMs`; null when it cannot be read. */
export async function scrapePrometheus(url: string, timeoutMs: number, headers: Record<string, string> = {}): Promise<PrometheusSample[] | null> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) {
      await response.body?.cancel();
      return null;
    }
    return parsePrometheusText(await response.text());
  } catch {
    return null;
  }
}
