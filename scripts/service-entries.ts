/**
 * Every built entry (`services/<service>/dist/<entry>.js`, bundled by scripts/build.ts from the `.ts` beside
 * it under `src/`) and the image's commands that run them. Plain data, imported by the build, the tests and
 * the `portcullis` dispatcher the image runs (bundled, so it must import nothing of the build's tools).
 */
export interface ServiceEntry {
  readonly source: string;
  readonly built: string;
}

function entry(service: string, name: string): ServiceEntry {
  return { source: `services/${service}/src/${name}.ts`, built: `services/${service}/dist/${name}.js` };
}

/**
 * A long-running service is started by its `launch` entry, which sets up tracing (when asked) before it
 * imports the service's program: see services/platform/src/telemetry/launch.ts.
 */
function launched(service: string): ServiceEntry {
  return entry(service, 'launch');
}

export const serviceEntries = {
  api: launched('api'),
  projector: launched('projector'),
  rebuildProjection: entry('projector', 'rebuild'),
  mailer: launched('mailer'),
  audit: entry('audit', 'cli'),
  keys: entry('audit', 'keys'),
  import: entry('audit', 'import'),
  migrate: entry('platform', 'migrate-cli'),
  // What the entries above import once tracing is set up (see services/platform/src/telemetry/launch.ts).
  apiProgram: entry('api', 'server'),
  projectorProgram: entry('projector', 'main'),
  mailerProgram: entry('mailer', 'main'),
} as const;

/**
 * `portcullis <command> [arguments]` (bin/portcullis.js in the image, scripts/portcullis.ts): each command
 * runs one built entry, by its path from the installation's root. A command whose entry this build lacks
 * says so.
 */
export const portcullisCommands: Readonly<Record<string, { readonly entry: string; readonly does: string }>> = {
  api: { entry: serviceEntries.api.built, does: 'the HTTP API (PORT, HOST)' },
  projector: { entry: serviceEntries.projector.built, does: 'the read models, the session cache and the mail relay' },
  mailer: { entry: serviceEntries.mailer.built, does: 'mail jobs to SMTP' },
  migrate: { entry: serviceEntries.migrate.built, does: 'bring the database to this build’s schema, then exit' },
  audit: { entry: serviceEntries.audit.built, does: 'the audit trail: verify, head, export, replay, rebuild' },
  'rebuild-projection': { entry: serviceEntries.rebuildProjection.built, does: 'rebuild a read model beside the served one' },
  keys: { entry: serviceEntries.keys.built, does: 'the secret ring: rotate (re-wrap data keys under the newest), status' },
  import: { entry: serviceEntries.import.built, does: 'read a better-auth database in: import better-auth <postgres url> [--keep-sessions]' },
};
