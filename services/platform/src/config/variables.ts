import { SDK_VARIABLES } from '../telemetry/telemetry-asked.ts';
import { settingVariables } from './index.ts';
import { takesSecretFile } from './secret-files.ts';

/**
 * The OpenTelemetry SDK's own variables that a deployment sets (besides those that ask for export), read by
 * the SDK rather than by loadConfig: docs/operations.md#telemetry.
 */
const openTelemetryVariables = [
  ...SDK_VARIABLES,
  'OTEL_SDK_DISABLED',
  'OTEL_SERVICE_NAME',
  'OTEL_RESOURCE_ATTRIBUTES',
  'OTEL_EXPORTER_OTLP_PROTOCOL',
  'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL',
  'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL',
  'OTEL_EXPORTER_OTLP_HEADERS',
  'OTEL_EXPORTER_OTLP_TRACES_HEADERS',
  'OTEL_EXPORTER_OTLP_METRICS_HEADERS',
  'OTEL_EXPORTER_OTLP_TIMEOUT',
  'OTEL_TRACES_SAMPLER',
  'OTEL_TRACES_SAMPLER_ARG',
  'OTEL_PROPAGATORS',
  'OTEL_METRIC_EXPORT_INTERVAL',
  'OTEL_METRIC_EXPORT_TIMEOUT',
  'OTEL_LOG_LEVEL',
];

/** Node's own: heap size and the like (`--max-old-space-size`), set per deployment. */
const runtimeVariables = ['NODE_OPTIONS'];

/** `AUTH_OIDC_<NAME>_CLIENT_ID` → a pattern whose placeholder is what a name becomes in a variable. */
function patternOf(documented: string): RegExp {
  const [before = '', after = ''] = documented.split('<NAME>');
  return new RegExp(`^${before}[A-Z][A-Z0-9_]*${after}$`);
}

const { names, patterns } = settingVariables();
const accepted = new Set<string>([
  ...names,
  ...openTelemetryVariables,
  ...runtimeVariables,
]);
const acceptedPatterns = patterns.map(patternOf);

/**
 * Whether a deployment's variable is one Portcullis reads: a setting, a secret's `_FILE` twin, a variable of
 * a provider named at deployment, or one the runtime honours. A name that is none of these is a typo or a
 * leftover, which nothing would otherwise report: configuration ignores what it does not know.
 */
export function isAcceptedVariable(name: string): boolean {
  if (name.endsWith('_FILE') && takesSecretFile(name.slice(0, -'_FILE'.length))) return true;
  return accepted.has(name) || acceptedPatterns.some((pattern) => pattern.test(name));
}
