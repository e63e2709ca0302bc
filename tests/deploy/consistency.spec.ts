import { BlockList } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Config } from '@portcullis/platform/config/index';
import { containersOf, resolveComposeService, resolveContainer, workloadsOf, type Workload } from '../support/deployment-environment.ts';
import {
  commandOf,
  composedEnvironment,
  composeOverrides,
  dispatcherCommands,
  longRunningServices,
  parseYaml,
  readCompose,
  readRepositoryFile,
  repositoryRoot,
  type LongRunningService,
} from '../support/deployment-files.ts';
import { exportedMetricNames, metricNamesIn } from '../support/exported-metrics.ts';
import { renderKustomization, type KubernetesObject } from '../support/kustomize.ts';
import { imageRuntime } from '../support/dockerfile.ts';

const image = imageRuntime();

/** The port each process serves /healthz and /readyz on, as its configuration says. */
function healthPortOf(service: LongRunningService, config: Config): number {
  if (service === 'api') return config.port;
  return service === 'projector' ? config.projectorMetricsPort : config.mailerMetricsPort;
}

function configOf(serviceName: string, overrides: string[] = []): Config {
  const resolved = resolveComposeService(readCompose('docker-compose.yml'), serviceName, composedEnvironment(serviceName, overrides));
  if (!resolved.config) throw new Error(`${serviceName}: ${resolved.problems.join('; ')}`);
  return resolved.config;
}

function blockListOf(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix] = entry.split('/');
    if (prefix === undefined) list.addAddress(address!);
    else list.addSubnet(address!, Number(prefix));
  }
  return list;
}

describe('docker-compose.yml holds together', () => {
  const compose = readCompose('docker-compose.yml');

  it.each(longRunningServices)('%s runs its own dispatcher command, after the migrate step, healthy on its configured port', (name) => {
    const service = compose.services[name]!;
    expect(commandOf(service)).toEqual([name]);
    expect(service.depends_on).toMatchObject({ migrate: { condition: 'service_completed_successfully' } });
    const test = [service.healthcheck?.test ?? []].flat().join(' ');
    const probe = /http:\/\/127\.0\.0\.1:(\d+)\/readyz/.exec(test);
    expect(probe, `${name}'s healthcheck reads /readyz`).not.toBeNull();
    expect(Number(probe![1])).toBe(healthPortOf(name, configOf(name)));
  });

  it('every service that runs the image runs a dispatcher command', () => {
    const image = compose.services.api!.image;
    const running = Object.entries(compose.services).filter(([, service]) => service.image === image);
    expect(running.map(([name]) => name).sort()).toEqual(['api', 'mailer', 'migrate', 'projector']);
    for (const [, service] of running) expect(dispatcherCommands).toContain(commandOf(service)[0]);
  });

  it('nginx forwards to every api on its port and is the one proxy the apis believe', () => {
    const nginx = readRepositoryFile('deploy/compose/nginx.conf');
    const proxy = compose.services.proxy!;
    expect(proxy.volumes).toContain('./deploy/compose/nginx.conf:/etc/nginx/nginx.conf:ro');

    const upstream = /upstream\s+(\w+)\s*\{([^}]*)\}/.exec(nginx);
    expect(upstream).not.toBeNull();
    expect([...upstream![2]!.matchAll(/server\s+([\w.-]+):(\d+)/g)].map((m) => `${m[1]}:${m[2]}`)).toEqual([`api:${configOf('api').port}`]);
    expect(/location \/ \{[^}]*proxy_pass\s+http:\/\/(\w+);/.exec(nginx)?.[1]).toBe(upstream![1]);
    // The edge replaces whatever X-Forwarded-For a client sent: the apis trust one hop, nginx's.
    expect(/proxy_set_header\s+X-Forwarded-For\s+(\S+);/.exec(nginx)?.[1]).toBe('$remote_addr');

    const address = (proxy.networks as Record<string, { ipv4_address?: string }>).portcullis?.ipv4_address;
    expect(address).toBeDefined();
    expect(configOf('api').trustedProxies).toEqual([address]);
    const [ipam] = compose.networks?.portcullis?.ipam?.config ?? [];
    expect(blockListOf([ipam!.subnet!]).check(address!)).toBe(true);
    // Outside the range Docker hands out, so no other container can come to hold the trusted address.
    expect(blockListOf([ipam!.ip_range!]).check(address!)).toBe(false);
  });

  it.each(composeOverrides)('%s only adds to services the main file runs', (file) => {
    for (const [name, service] of Object.entries(readCompose(file).services)) {
      expect(longRunningServices, `${file}: ${name}`).toContain(name);
      expect(Object.keys(service).filter((field) => field !== 'environment' && field !== 'depends_on'), `${file}: ${name}`).toEqual([]);
      for (const dependency of Object.keys((service.depends_on as Record<string, unknown> | undefined) ?? {})) {
        expect(compose.services[dependency], `${file}: ${name} depends on ${dependency}`).toBeDefined();
      }
    }
  });

  it('the Kafka override points the services at the broker its profile starts', () => {
    const kafka = compose.services.kafka!;
    expect(kafka.profiles).toEqual(['kafka']);
    const advertised = String((kafka.environment as Record<string, string>).KAFKA_ADVERTISED_LISTENERS);
    for (const name of longRunningServices) {
      const config = configOf(name, ['docker-compose.kafka.yml']);
      expect(config.kafka?.brokers).toEqual(['kafka:9092']);
      expect(advertised).toContain(`//${config.kafka!.brokers[0]}`);
    }
  });

  it('the observability override sends traces to the collector its profile starts', () => {
    const collector = parseYaml(readRepositoryFile('deploy/compose/otel-collector.yaml')) as {
      receivers: { otlp: { protocols: { http: { endpoint: string } } } };
      service: { pipelines: Record<string, { receivers: string[] }> };
    };
    expect(compose.services['otel-collector']?.profiles).toEqual(['observability']);
    const port = collector.receivers.otlp.protocols.http.endpoint.split(':').at(-1);
    expect(collector.service.pipelines.traces?.receivers).toContain('otlp');
    for (const name of longRunningServices) {
      expect(composedEnvironment(name, ['docker-compose.observability.yml']).OTEL_EXPORTER_OTLP_ENDPOINT).toBe(`http://otel-collector:${port}`);
    }
  });

  it("Prometheus scrapes every process on its configured port, the apis with the operators' key", () => {
    const prometheus = parseYaml(readRepositoryFile('deploy/compose/prometheus.yml')) as {
      scrape_configs: Array<{ job_name: string; dns_sd_configs: Array<{ names: string[]; port: number }>; http_headers?: Record<string, { files?: string[] }> }>;
    };
    for (const name of longRunningServices) {
      const job = prometheus.scrape_configs.find((j) => j.job_name === `portcullis-${name}`);
      expect(job?.dns_sd_configs).toEqual([{ names: [name], type: 'A', port: healthPortOf(name, configOf(name)) }]);
    }
    const api = prometheus.scrape_configs.find((j) => j.job_name === 'portcullis-api')!;
    const keyFile = api.http_headers?.['x-api-key']?.files?.[0];
    expect(keyFile).toBe(composedEnvironment('api', []).AUTH_SERVER_API_KEY_FILE);
    expect(compose.services.prometheus?.secrets).toContain(keyFile!.replace('/run/secrets/', ''));
  });

  it("Grafana's dashboard reads only metrics the services export, from the provisioned Prometheus", async () => {
    const dashboard = JSON.parse(readRepositoryFile('deploy/compose/grafana/dashboards/portcullis.json')) as {
      panels: Array<{ title: string; datasource: { uid: string }; targets: Array<{ expr: string }> }>;
    };
    const datasources = parseYaml(readRepositoryFile('deploy/compose/grafana/provisioning/datasources/prometheus.yaml')) as { datasources: Array<{ uid: string; url: string }> };
    const exported = await exportedMetricNames();
    // Prometheus' own: whether it could scrape the target (the process is up).
    exported.add('up');
    const read = dashboard.panels.flatMap((panel) => panel.targets.flatMap((target) => metricNamesIn(target.expr).map((metric) => ({ panel: panel.title, metric }))));
    expect(read.length).toBeGreaterThanOrEqual(dashboard.panels.length);
    expect(read.filter(({ metric }) => !exported.has(metric))).toEqual([]);
    // The console overview's figures: sign-ins, sign-ups, get-session rate and p99, refusals, mail, projection
    // lag, and the processes' health.
    for (const figure of [
      'portcullis_sign_ins_total',
      'portcullis_sign_ups_total',
      'http_server_request_duration_count',
      'http_server_request_duration_bucket',
      'portcullis_refusals_total',
      'portcullis_mail_deliveries_total',
      'portcullis_projection_lag_events',
      'up',
    ]) {
      expect(read.map(({ metric }) => metric), figure).toContain(figure);
    }
    expect(new Set(dashboard.panels.map((panel) => panel.datasource.uid))).toEqual(new Set(datasources.datasources.map((d) => d.uid)));
    expect(datasources.datasources[0]?.url).toBe('http://prometheus:9090');
  });

  it('a dashboard query naming a metric nobody exports is caught (the check can fail)', async () => {
    const exported = await exportedMetricNames();
    expect(metricNamesIn('sum(rate(portcullis_sign_in_total[5m]))').filter((metric) => !exported.has(metric))).toEqual(['portcullis_sign_in_total']);
  });
});

describe('the Kubernetes manifests hold together', () => {
  const objects = renderKustomization(join(repositoryRoot, 'deploy/kubernetes/overlays/example'));
  const workloads = workloadsOf(objects);
  const componentOf = (object: KubernetesObject) => object.metadata.labels?.['app.kubernetes.io/component'];

  function workload(component: string): Workload {
    const found = workloads.find((w) => componentOf(w.object) === component);
    if (!found) throw new Error(`no workload of component ${component}`);
    return found;
  }

  function configIn(w: Workload, containerName: string): Config {
    const container = containersOf(w).find((c) => c.name === containerName)!;
    const resolved = resolveContainer(objects, w, container);
    if (!resolved.config) throw new Error(`${containerName}: ${resolved.problems.join('; ')}`);
    return resolved.config;
  }

  it.each(longRunningServices)('%s runs its own dispatcher command after `migrate`, probed on its configured port', (name) => {
    const w = workload(name);
    const [container] = w.pod.containers;
    expect(w.pod.containers).toHaveLength(1);
    expect(container!.args).toEqual([name]);
    expect(w.pod.initContainers?.map((c) => c.args)).toEqual([['migrate']]);

    const port = healthPortOf(name, configIn(w, name));
    const portOf = (probe: { httpGet: { port: string | number } }) =>
      typeof probe.httpGet.port === 'number' ? probe.httpGet.port : container!.ports?.find((p) => p.name === probe.httpGet.port)?.containerPort;
    const probes = container as unknown as Record<'livenessProbe' | 'readinessProbe', { httpGet: { path: string; port: string | number } }>;
    expect([probes.livenessProbe.httpGet.path, portOf(probes.livenessProbe)]).toEqual(['/healthz', port]);
    expect([probes.readinessProbe.httpGet.path, portOf(probes.readinessProbe)]).toEqual(['/readyz', port]);
  });

  it('the migrate Job runs the dispatcher\'s migrate', () => {
    const job = workloads.find((w) => w.object.kind === 'Job')!;
    expect(job.pod.containers.map((c) => c.args)).toEqual([['migrate']]);
    for (const w of workloads) for (const c of containersOf(w)) expect(dispatcherCommands).toContain(c.args?.[0]);
  });

  it('every container runs locked down, with resources requested and limited', () => {
    for (const w of workloads) {
      expect(w.pod.securityContext, w.object.metadata.name).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
      // The image's files are readable by its own user; a pod run as another would start only by luck.
      expect(w.pod.securityContext, w.object.metadata.name).toMatchObject({ runAsUser: image.uid, runAsGroup: image.gid });
      expect(w.pod.automountServiceAccountToken).toBe(false);
      for (const c of containersOf(w)) {
        expect(c.securityContext, `${w.object.metadata.name}/${c.name}`).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
        expect(c.resources, `${w.object.metadata.name}/${c.name}`).toMatchObject({ requests: { cpu: expect.any(String), memory: expect.any(String) }, limits: { memory: expect.any(String) } });
      }
    }
  });

  it('Services, the Ingress, the autoscaler and the disruption budgets reach what exists', () => {
    const podLabels = (w: Workload) => (w.object.spec as { template: { metadata: { labels: Record<string, string> } } }).template.metadata.labels;
    const selects = (selector: Record<string, string>) => workloads.filter((w) => w.object.kind === 'Deployment' && Object.entries(selector).every(([k, v]) => podLabels(w)[k] === v));

    const services = objects.filter((o) => o.kind === 'Service');
    for (const service of services) {
      const spec = service.spec as { selector: Record<string, string>; ports: Array<{ name: string; targetPort: string }> };
      const [target] = selects(spec.selector);
      expect(target, service.metadata.name).toBeDefined();
      const ports = target!.pod.containers.flatMap((c) => c.ports ?? []).map((p) => p.name);
      for (const port of spec.ports) expect(ports).toContain(port.targetPort);
    }

    const ingress = objects.find((o) => o.kind === 'Ingress')!;
    const backends = (ingress.spec as { rules: Array<{ http: { paths: Array<{ backend: { service: { name: string; port: { name: string } } } }> } }> }).rules.flatMap((r) => r.http.paths.map((p) => p.backend.service));
    for (const backend of backends) {
      const service = services.find((s) => s.metadata.name === backend.name);
      expect((service?.spec as { ports: Array<{ name: string }> } | undefined)?.ports.map((p) => p.name)).toContain(backend.port.name);
      expect(componentOf(service!)).toBe('api');
    }

    const autoscaler = objects.find((o) => o.kind === 'HorizontalPodAutoscaler')!;
    expect(autoscaler.apiVersion).toBe('autoscaling/v2');
    const target = (autoscaler.spec as { scaleTargetRef: { kind: string; name: string } }).scaleTargetRef;
    expect(objects.find((o) => o.kind === target.kind && o.metadata.name === target.name && componentOf(o) === 'api')).toBeDefined();

    for (const budget of objects.filter((o) => o.kind === 'PodDisruptionBudget')) {
      expect(selects((budget.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels), budget.metadata.name).toHaveLength(1);
    }
  });

  it('the NetworkPolicies deny by default and open the configured ports', () => {
    const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
    type Rule = { ports?: Array<{ port: number }> };
    const spec = (name: string) => policies.find((p) => p.metadata.name === name)!.spec as { podSelector: object; policyTypes: string[]; ingress?: Rule[] };
    expect(spec('portcullis-default-deny')).toEqual({ podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    const api = workload('api');
    expect(spec('portcullis-api-ingress').ingress?.flatMap((r) => r.ports?.map((p) => p.port))).toEqual([configIn(api, 'api').port]);
    expect(spec('portcullis-worker-metrics').ingress?.flatMap((r) => r.ports?.map((p) => p.port))).toEqual([
      configIn(workload('projector'), 'projector').projectorMetricsPort,
      configIn(workload('mailer'), 'mailer').mailerMetricsPort,
    ]);
  });
});
