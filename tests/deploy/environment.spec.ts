import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { containersOf, resolveComposeService, resolveContainer, workloadsOf } from '../support/deployment-environment.ts';
import { composedEnvironment, composeOverrides, readCompose, readRepositoryFile, repositoryRoot } from '../support/deployment-files.ts';
import { renderKustomization } from '../support/kustomize.ts';

/** The compose services that run the image (the migrate step and the three processes). */
const composeProcesses = ['migrate', 'api', 'projector', 'mailer'];

/** Each override alone and all together: every way the docs start the system. */
const overrideSets: string[][] = [[], ...composeOverrides.map((file) => [file]), [...composeOverrides]];

describe('every variable the compose files set is one the configuration reads, and the processes start with them', () => {
  const compose = readCompose('docker-compose.yml');
  const cases = composeProcesses.flatMap((service) => overrideSets.map((overrides) => ({ service, overrides, label: `${service} with ${['docker-compose.yml', ...overrides].join(' + ')}` })));

  it.each(cases)('$label', ({ service, overrides }) => {
    const resolved = resolveComposeService(compose, service, composedEnvironment(service, overrides));
    expect(resolved.problems).toEqual([]);
    expect(resolved.config?.env).toBe('production');
  });

  it('the secret files it mounts are the ones `npm run compose:secrets` makes', () => {
    const made = [...readRepositoryFile('scripts/compose-secrets.ts').matchAll(/^ {2}(\w+): \(\) =>/gm)].map((m) => m[1]);
    const declared = Object.entries(compose.secrets ?? {}).map(([name, secret]) => {
      expect(secret.file).toBe(`./deploy/compose/secrets/${name}`);
      return name;
    });
    expect(new Set(made)).toEqual(new Set(declared));
  });

  it('refuses what the configuration would not read or could not start with (the check can fail)', () => {
    const environment = composedEnvironment('api', []);
    environment.AUTH_TRUSTED_PROXY = '172.30.0.10';
    environment.DATABASE_URL_FILE = '/run/secrets/database-url';
    const problems = resolveComposeService(compose, 'api', environment).problems.join('\n');
    expect(problems).toMatch(/AUTH_TRUSTED_PROXY: no setting reads it/);
    expect(problems).toMatch(/DATABASE_URL_FILE: \/run\/secrets\/database-url is none of the service's secrets/);
    // Its file is not mounted, so the process has no database: the required setting is missing.
    expect(problems).toMatch(/DATABASE_URL: .*received undefined/);

    const withoutSecret = composedEnvironment('api', []);
    delete withoutSecret.AUTH_SECRET_FILE;
    expect(resolveComposeService(compose, 'api', withoutSecret).problems).toEqual(['AUTH_SECRET: is required in production (or AUTH_SECRETS)']);
  });
});

describe('every variable the Kubernetes manifests set is one the configuration reads, and the processes start with them', () => {
  const objects = renderKustomization(join(repositoryRoot, 'deploy/kubernetes/overlays/example'));
  const cases = workloadsOf(objects).flatMap((workload) =>
    containersOf(workload).map((container) => ({ workload, container, label: `${workload.object.kind} ${workload.object.metadata.name}, container ${container.name}` })),
  );

  it('has the three processes and the migrate step', () => {
    expect(cases.map((c) => c.label)).toHaveLength(7);
  });

  it.each(cases)('$label', ({ workload, container }) => {
    const resolved = resolveContainer(objects, workload, container);
    expect(resolved.problems).toEqual([]);
    expect(resolved.config?.env).toBe('production');
  });

  it('refuses a file outside the mounted Secret and a variable no setting reads (the check can fail)', () => {
    const broken = structuredClone(objects);
    const configMap = broken.find((o) => o.kind === 'ConfigMap')!;
    (configMap.data as Record<string, string>).SMTP_URL_FILE = '/run/secrets/portcullis/smtp';
    (configMap.data as Record<string, string>).MAILER_CONCURENCY = '8';
    const [workload] = workloadsOf(broken).filter((w) => w.object.metadata.name === 'portcullis-mailer');
    const problems = resolveContainer(broken, workload!, workload!.pod.containers[0]!).problems.join('\n');
    expect(problems).toMatch(/SMTP_URL_FILE: \/run\/secrets\/portcullis\/smtp: no key smtp in the Secret portcullis-secrets/);
    expect(problems).toMatch(/MAILER_CONCURENCY: no setting reads it/);
  });
});
