import module from 'node:module';

interface ResolveResult {
  url: string;
  format?: string | null;
  shortCircuit?: boolean;
}
type NextResolve = (specifier: string, context?: unknown) => ResolveResult;
/** Node 22.15+ and 23.5+; @types/node 20 does not declare it yet. */
type RegisterHooks = (hooks: { resolve: (specifier: string, context: unknown, nextResolve: NextResolve) => ResolveResult }) => unknown;

/**
 * Node 20's only way in: off-thread hooks registered from a module of their own (here a data: URL, so nothing
 * needs transpiling or shipping beside this file). Deprecated from Node 25 in favour of registerHooks.
 */
const OFF_THREAD_HOOKS = `
let redirect;
export function initialize(data) { redirect = data; }
export async function resolve(specifier, context, nextResolve) {
  return specifier === redirect.specifier
    ? { url: redirect.url, format: 'module', shortCircuit: true }
    : nextResolve(specifier, context);
}`;

/**
 * From now on, any `import(specifier)` in this process (a package's own imports included) loads the ES module
 * at `url` instead. For a package that finds its files through a fixed import and offers no option to
 * look elsewhere; call it before that package is first imported.
 */
export function redirectImport(specifier: string, url: string): void {
  const registerHooks = (module as unknown as { registerHooks?: RegisterHooks }).registerHooks;
  if (typeof registerHooks === 'function') {
    registerHooks({
      resolve: (requested, context, nextResolve) =>
        requested === specifier ? { url, format: 'module', shortCircuit: true } : nextResolve(requested, context),
    });
    return;
  }
  module.register(`data:text/javascript,${encodeURIComponent(OFF_THREAD_HOOKS)}`, { data: { specifier, url } });
}
