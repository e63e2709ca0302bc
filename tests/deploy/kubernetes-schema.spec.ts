import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/deployment-files.ts';
import { renderKustomization, type KubernetesObject } from '../support/kustomize.ts';

type Model = new (data: unknown) => { validate(): void };

/** `apps/v1` → `kubernetes-models/apps/v1/Deployment`; the core group (`v1`) is `kubernetes-models/v1/…`. */
async function modelOf(object: KubernetesObject): Promise<Model> {
  const specifier = `kubernetes-models/${object.apiVersion}/${object.kind}`;
  const module = (await import(specifier).catch(() => {
    throw new Error(`${object.kind}/${object.metadata.name}: kubernetes-models has no ${specifier}`);
  })) as Record<string, Model | undefined>;
  const model = module[object.kind];
  if (!model) throw new Error(`${specifier} exports no ${object.kind}`);
  return model;
}

/** What the Kubernetes schemas (as kubernetes-models compiles them) say is wrong with each object. */
async function schemaProblems(objects: readonly KubernetesObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const object of objects) {
    const Model = await modelOf(object);
    try {
      new Model(object).validate();
    } catch (error) {
      problems.push(`${object.kind}/${object.metadata.name}: ${(error as Error).message}`);
    }
  }
  return problems;
}

const kustomizations = ['deploy/kubernetes/base', 'deploy/kubernetes/overlays/example'];

describe('the Kubernetes manifests follow the Kubernetes schemas', () => {
  it.each(kustomizations)('%s renders to valid objects', async (directory) => {
    const objects = renderKustomization(join(repositoryRoot, directory));
    expect(objects.length).toBeGreaterThan(0);
    expect(await schemaProblems(objects)).toEqual([]);
  });

  it('the overlay puts everything in its namespace and runs its image', () => {
    const objects = renderKustomization(join(repositoryRoot, 'deploy/kubernetes/overlays/example'));
    expect(objects.filter((o) => o.kind !== 'Namespace' && o.metadata.namespace !== 'portcullis')).toEqual([]);
    const images = objects.flatMap((o) => {
      const template = (o.spec as { template?: { spec?: { containers?: Array<{ image: string }>; initContainers?: Array<{ image: string }> } } } | undefined)?.template?.spec;
      return [...(template?.containers ?? []), ...(template?.initContainers ?? [])].map((c) => c.image);
    });
    expect(new Set(images)).toEqual(new Set(['registry.example.com/portcullis:0.1.0']));
    expect(objects.find((o) => o.kind === 'ConfigMap')?.data).toMatchObject({ BASE_URL: 'https://auth.example.com' });
  });

  it('refuses an object that strays from the schema (the check can fail)', async () => {
    const objects = renderKustomization(join(repositoryRoot, 'deploy/kubernetes/base'));
    const deployment = structuredClone(objects.find((o) => o.kind === 'Deployment')!) as KubernetesObject & { spec: { replicas: unknown } };
    deployment.spec.replicas = 'two';
    const budget = structuredClone(objects.find((o) => o.kind === 'PodDisruptionBudget')!) as KubernetesObject & { spec: { minAvailable: unknown } };
    budget.spec.minAvailable = { count: 1 };
    const problems = await schemaProblems([deployment, budget]);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/replicas/);
  });
});

describe('the kustomization renderer', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'portcullis-kustomize-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  /** A copy of the example overlay and the base beside it, with the overlay's kustomization changed. */
  function overlayWith(change: (kustomization: string) => string): string {
    const root = mkdtempSync(join(scratch, 'tree-'));
    cpSync(join(repositoryRoot, 'deploy/kubernetes'), root, { recursive: true });
    const path = join(root, 'overlays/example/kustomization.yaml');
    writeFileSync(path, change(readFileSync(path, 'utf8')));
    return join(root, 'overlays/example');
  }

  it('fails loudly on a field it does not implement', () => {
    const directory = overlayWith((k) => `${k}\nnamePrefix: staging-\n`);
    expect(() => renderKustomization(directory)).toThrow(/does not implement: namePrefix/);
  });

  it('fails loudly on a patch that misses', () => {
    const directory = overlayWith((k) => k.replace('name: portcullis-config', 'name: portcullis-settings'));
    expect(() => renderKustomization(directory)).toThrow(/matches nothing/);
  });

  it('applies a patch where it says', () => {
    const directory = overlayWith((k) => k.replace('value: https://auth.example.com', 'value: https://login.example.org'));
    const configMap = renderKustomization(directory).find((o) => o.kind === 'ConfigMap');
    expect(configMap?.data).toMatchObject({ BASE_URL: 'https://login.example.org' });
  });
});
