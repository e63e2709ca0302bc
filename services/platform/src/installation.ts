import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder a service's files are read from at run time (the migrations, the console's build, the README).
 * A checkout and the runtime set the image holds share one layout (`services/<service>/dist/*.js`,
 * `services/platform/migrations/`, `console/dist/`), so it is found by walking up from the calling module to
 * the folder holding `services/platform/migrations`: from a source file under tsx, from a bundle in a
 * checkout, and from a bundle in the image alike, where no workspace package can be resolved.
 */
export function installationRoot(moduleUrl: string): string {
  const start = path.dirname(fileURLToPath(moduleUrl));
  for (let folder = start; ; folder = path.dirname(folder)) {
    if (existsSync(path.join(folder, 'services', 'platform', 'migrations'))) return folder;
    if (path.dirname(folder) === folder) throw new Error(`no services/platform/migrations above ${start}: this installation is incomplete`);
  }
}

/** The SQL migrations the build ships, one file a step (`services/platform/migrations/`). */
export function migrationsFolder(moduleUrl: string): string {
  return path.join(installationRoot(moduleUrl), 'services', 'platform', 'migrations');
}
