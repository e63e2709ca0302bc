/**
 * The mail templates' language, small on purpose: `{{name}}` puts a variable in, `{{#name}}…{{/name}}` keeps
 * its inside only when the variable is not empty, `{{^name}}…{{/name}}` only when it is. Nothing else: no
 * raw output, no expressions, no partials, so a template an operator writes can neither run code nor put
 * unescaped user input into HTML. Templates are checked once, when the mailer starts: a variable the mail does
 * not have, or a section left open, refuses the start instead of failing each send.
 */

type Node =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'variable'; readonly name: string }
  | { readonly kind: 'section'; readonly name: string; readonly inverted: boolean; readonly body: readonly Node[] };

export interface CompiledTemplate {
  readonly nodes: readonly Node[];
}

/** What is wrong with a template, with where (`line`, from 1) in the words of whoever wrote it. */
export class TemplateSyntaxError extends Error {
  constructor(
    readonly line: number,
    readonly problem: string,
  ) {
    super(`line ${line}: ${problem}`);
    this.name = 'TemplateSyntaxError';
  }
}

const TAG = /\{\{(.*?)\}\}/gs;
const NAME = /^[A-Za-z][A-Za-z0-9]*$/;

function lineAt(source: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index; i += 1) if (source.charCodeAt(i) === 10) line += 1;
  return line;
}

/**
 * Parses `source`, accepting only the variables in `known` (listed in the error, so the fix is in the
 * message).
 */
export function compileTemplate(source: string, known: readonly string[]): CompiledTemplate {
  const root: Node[] = [];
  const open: { name: string; inverted: boolean; body: Node[]; line: number }[] = [];
  const current = (): Node[] => open.at(-1)?.body ?? root;
  const checkName = (name: string, line: number): void => {
    if (!NAME.test(name)) throw new TemplateSyntaxError(line, `"{{${name}}}" is not a tag: write {{name}}, {{#name}}, {{^name}} or {{/name}}`);
    if (!known.includes(name)) throw new TemplateSyntaxError(line, `unknown variable "${name}"; this mail has ${known.join(', ')}`);
  };
  let last = 0;
  for (const match of source.matchAll(TAG)) {
    const line = lineAt(source, match.index);
    if (match.index > last) current().push({ kind: 'text', text: source.slice(last, match.index) });
    last = match.index + match[0].length;
    const tag = match[1]!.trim();
    if (tag.startsWith('{')) throw new TemplateSyntaxError(line, 'raw output ({{{…}}}) is not offered: every variable is escaped in HTML');
    const sigil = tag[0];
    if (sigil === '#' || sigil === '^') {
      const name = tag.slice(1).trim();
      checkName(name, line);
      const section = { name, inverted: sigil === '^', body: [] as Node[], line };
      open.push(section);
    } else if (sigil === '/') {
      const name = tag.slice(1).trim();
      const section = open.pop();
      if (!section) throw new TemplateSyntaxError(line, `{{/${name}}} closes no section`);
      if (section.name !== name) throw new TemplateSyntaxError(line, `{{/${name}}} closes {{${section.inverted ? '^' : '#'}${section.name}}} of line ${section.line}`);
      current().push({ kind: 'section', name, inverted: section.inverted, body: section.body });
    } else {
      checkName(tag, line);
      current().push({ kind: 'variable', name: tag });
    }
  }
  const rest = source.slice(last);
  if (rest.includes('{{')) throw new TemplateSyntaxError(lineAt(source, last + rest.indexOf('{{')), '"{{" is never closed by "}}"');
  if (rest !== '') current().push({ kind: 'text', text: rest });
  const unclosed = open.at(-1);
  if (unclosed) throw new TemplateSyntaxError(unclosed.line, `{{${unclosed.inverted ? '^' : '#'}${unclosed.name}}} is never closed by {{/${unclosed.name}}}`);
  return { nodes: root };
}

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** Fills a compiled template in; `escape` is applied to every variable's value (escapeHtml for HTML). */
export function renderTemplate(template: CompiledTemplate, values: Readonly<Record<string, string>>, escape: (value: string) => string): string {
  const render = (nodes: readonly Node[]): string =>
    nodes
      .map((node) => {
        if (node.kind === 'text') return node.text;
        const value = values[node.name] ?? '';
        if (node.kind === 'variable') return escape(value);
        return (value !== '') !== node.inverted ? render(node.body) : '';
      })
      .join('');
  return render(template.nodes);
}
