import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv, type ErrorObject } from 'ajv';
import { describe, expect, it } from 'vitest';
import { composeFiles, parseYaml, readRepositoryFile } from '../support/deployment-files.ts';

/**
 * The Compose Specification's JSON schema, as dclint (a maintained Compose linter) ships it: the file the
 * compose-spec project publishes, so `docker compose config` and this check read the same rules.
 */
function composeSpecSchema(): object {
  const packageJson = createRequire(import.meta.url).resolve('dclint/package.json');
  return JSON.parse(readFileSync(join(dirname(packageJson), 'schemas', 'compose.schema.json'), 'utf8')) as object;
}

/** The schema names draft-07's meta-schema by its https address, which ajv knows by its http one. */
function draft07UnderHttps(): object {
  const draft07 = createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-07.json') as object;
  return { ...draft07, $id: 'https://json-schema.org/draft-07/schema' };
}

// The schema names formats (durations) that ajv does not define; their values are checked by compose.
const validate = new Ajv({ allErrors: true, strict: false, validateFormats: false }).addMetaSchema(draft07UnderHttps()).compile(composeSpecSchema());

function problems(document: unknown): string[] {
  if (validate(document)) return [];
  return (validate.errors ?? []).map((e: ErrorObject) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
}

describe('the compose files follow the Compose Specification', () => {
  it.each(composeFiles)('%s', (file) => {
    expect(problems(parseYaml(readRepositoryFile(file)))).toEqual([]);
  });

  it('refuses a file that strays from it (the check can fail)', () => {
    const compose = parseYaml(readRepositoryFile('docker-compose.yml')) as { services: Record<string, Record<string, unknown>> };
    compose.services.api!.depends_on = { migrate: { condition: 'service_finished' } };
    compose.services.api!.restart_policy = 'always';
    expect(problems(compose).join('\n')).toMatch(/depends_on[\s\S]*restart_policy|restart_policy[\s\S]*depends_on/);
  });
});
