import importX from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

/**
 * The api's areas import in one direction: leaves (the better-auth endpoints and plugins) over shared cores
 * (read-model progress, http glue, mail jobs, sessions, identity), over contracts and platform. A leaf that needs another leaf's behaviour
 * gets it through an extension the composition root (app.ts, api-context.ts) registers, never by import.
 */
const api = 'services/api/src';
const cores = ['read-models', 'http', 'mail', 'session', 'identity'];
const leaves = ['account', 'credentials', 'username', 'user', 'organization', 'perimeter', 'ops', 'openapi', 'admin', 'audit', 'console'];

const areaImports = (area) => [`../${area}/*`, `../${area}/**`];

/** `area` may import only the areas in `allowed` (and root modules, contracts, platform). */
function boundary(area, allowed) {
  const forbidden = [...cores, ...leaves].filter((other) => other !== area && !allowed.includes(other));
  return {
    files: [`${api}/${area}/**/*.ts`],
    ignores: [`${api}/${area}/**/*.spec.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: forbidden.flatMap(areaImports),
              message: `${area} may import only ${allowed.length > 0 ? allowed.join(', ') : 'no other area'} (see eslint.config.js: leaves over cores)`,
            },
            // The whole context is the composition root's: an area asks for the ports it uses (`<area>/ports.ts`).
            ...(area === 'http' ? [] : [{ group: ['../context.ts'], message: `${area} takes the ports it uses (${area}/ports.ts), not the whole ApiContext` }]),
          ],
        },
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'coverage/**', '.data/**', 'console/dist/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [...tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // `_name` says a parameter or binding is there for its position (a handler's unused request).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // Fastify plugins and test bodies are async by contract (a plugin without `done` must return a
      // promise), whether or not they await.
      '@typescript-eslint/require-await': 'off',
      // A server's handler closes over the instance it is built before: `let` until it exists.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    // Specs read answers as parsed JSON and reach into them; the assertions are what type them.
    files: ['**/*.spec.ts', 'tests/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
    },
  },
  {
    files: ['**/*.ts', '**/*.tsx'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver-next': [
        // A workspace package that publishes built files is read from its sources (client/package.json).
        importX.createNodeResolver({ extensions: ['.ts', '.tsx'], conditionNames: ['portcullis-source', 'types', 'import', 'module', 'default', 'node'] }),
      ],
    },
    rules: {
      // Every workspace lists what it imports (in its own package.json): nothing works only because npm hoists.
      // Development dependencies are for specs, test support, benchmarks and build scripts alone.
      'import-x/no-extraneous-dependencies': [
        'error',
        { devDependencies: ['**/*.spec.ts', '**/*.spec.tsx', '**/*.test-support.ts', 'tests/**', 'bench/**', 'scripts/**', '*.config.ts', '*.config.js', 'console/vite.config.ts', 'examples/*/vite.config.ts'] },
      ],
    },
  },
  {
    files: [`${api}/**/*.ts`],
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    // The client package is published: contracts are compiled into its build (so they are a development
    // dependency of it), and it imports nothing else of the workspaces, nor packages its users do not get.
    files: ['client/src/**/*.ts'],
    ignores: ['client/src/**/*.spec.ts'],
    rules: {
      'import-x/no-extraneous-dependencies': ['error', { devDependencies: true }],
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!\\.{1,2}/|@portcullis/contracts/|better-auth/|zod$)',
              message: 'the client imports only its own modules, @portcullis/contracts (compiled in), better-auth (its peer) and zod',
            },
          ],
        },
      ],
    },
  },
  {
    // The console is a browser app: it knows the server only through the declarations in contracts and the
    // client package that calls them (@portcullis/client derives paths, requests and answers from them), never
    // through the server's own code.
    files: ['console/**/*.ts', 'console/**/*.tsx'],
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './console',
              from: './',
              except: ['./console', './contracts', './client', './node_modules'],
              message: 'the console imports only contracts, the client package, its own code and npm packages',
            },
          ],
        },
      ],
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: '^@portcullis/(?!(contracts|client)(/|$))', message: 'the console imports only @portcullis/contracts and @portcullis/client of the workspaces' }] },
      ],
    },
  },
  boundary('read-models', []),
  boundary('http', []),
  boundary('mail', []),
  boundary('session', ['http']),
  boundary('identity', ['http', 'mail', 'session']),
  ...leaves.map((leaf) => boundary(leaf, cores)),
  {
    // Route files keep to HTTP: a write is a named command module (<area>/<verb>.command.ts) the route calls,
    // so no route runs a command of its own or appends to a stream.
    files: [`${api}/**/*.routes.ts`],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.property.name='handle'][callee.object.property.name='commands']",
          message: 'a route calls a command module (<area>/<verb>.command.ts); it does not run a command itself',
        },
        {
          selector: "CallExpression[callee.property.name='append']",
          message: 'a route appends nothing; the command module it calls does',
        },
      ],
    },
  },
  {
    // Deciders and the folds they decide on are pure: the events and shapes of contracts, and other
    // deciders' folds, nothing else.
    files: ['**/*.decider.ts', '**/*.state.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!@portcullis/contracts$|(\\.|\\.\\./[\\w-]+)/[\\w.-]+\\.(decider|state)\\.ts$)',
              message: 'a decider or fold imports only contracts and other deciders and folds (no I/O, no framework, no clock)',
            },
          ],
        },
      ],
    },
  },
);
