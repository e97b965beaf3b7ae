// /metrics: every metric of the server in the Prometheus text format, the
// process and Node.js runtime ones included. It is a non-resource path like
// any other: the authorizer decides who reads it (`get` on /metrics).
//
// Each metric of ours is declared with its stability level and, once
// deprecated, the release that deprecated it (`declareMetric`), as upstream's
// metric framework does: the help text says both (`[STABLE] ...`,
// `[ALPHA] (Deprecated since 1.32.0) ...`); a metric deprecated in an earlier
// release is hidden (never registered), unless it was deprecated in the
// previous minor and --show-hidden-metrics-for-version names that minor.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { errors } from '../machinery/errors.js';
import { compatibleRelease, parseMinor } from '../machinery/release.js';
import { product } from '../machinery/vocabulary.js';
import type { FeatureGates } from '../machinery/featuregates.js';

export type StabilityLevel = 'INTERNAL' | 'ALPHA' | 'BETA' | 'STABLE';

export interface MetricDeclaration {
  /** Absent: ALPHA, as upstream. */
  stability?: StabilityLevel;
  /** The release that deprecated the metric (`1.31.0`). */
  deprecatedVersion?: string;
}

/** A --show-hidden-metrics-for-version the server refuses to start with; the message is the one line the CLI prints. */
export class MetricsConfigError extends Error {
  override name = 'MetricsConfigError';
}

const currentMinor = Number(compatibleRelease.minor);
const previousMinor = `${compatibleRelease.major}.${currentMinor - 1}`;

/** Registries whose server shows the previous minor's hidden metrics. */
const showingHidden = new WeakSet<Registry>();

/** Whether a metric deprecated in `deprecatedVersion` is hidden on a server with this registry. */
function hidden(registry: Registry, deprecatedVersion: string | undefined): boolean {
  const deprecated = deprecatedVersion === undefined ? undefined : parseMinor(deprecatedVersion);
  if (!deprecated) return false;
  const [major, minor] = deprecated;
  const before = major < Number(compatibleRelease.major) || (major === Number(compatibleRelease.major) && minor < currentMinor);
  if (!before) return false;
  return !(showingHidden.has(registry) && `${major}.${minor}` === previousMinor);
}

/**
 * The options of a prom-client metric declared with its stability and
 * deprecation: its help text annotated as upstream's, registered with
 * `registry` unless hidden.
 */
export function declareMetric<T extends { name: string; help: string }>(registry: Registry, declaration: T & MetricDeclaration): T & { registers: Registry[] } {
  const { stability = 'ALPHA', deprecatedVersion, ...options } = declaration;
  const help = `[${stability}] ${deprecatedVersion ? `(Deprecated since ${deprecatedVersion}) ` : ''}${options.help}`;
  return { ...(options as unknown as T), help, registers: hidden(registry, deprecatedVersion) ? [] : [registry] };
}

export interface MetricsOptions {
  /** Exposed as `<product>_feature_enabled{name,stage}`, as upstream's kubernetes_feature_enabled. */
  features?: FeatureGates;
  /** --show-hidden-metrics-for-version: only the previous minor is accepted. */
  showHiddenMetricsForVersion?: string;
}

export class Metrics {
  /** The server's own registry: several servers in one process keep their figures apart. */
  readonly registry = new Registry();

  constructor(opts: MetricsOptions = {}) {
    const show = opts.showHiddenMetricsForVersion;
    if (show !== undefined && show !== '') {
      if (show !== previousMinor) throw new MetricsConfigError(`--show-hidden-metrics-for-version must be omitted or have the value '${previousMinor}'. Only the previous minor version is allowed`);
      showingHidden.add(this.registry);
    }
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which `promtool check metrics` rejects; each repeats a gauge without the suffix.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) this.registry.removeSingleMetric(name);
    if (opts.features) {
      const gauge = new Gauge(declareMetric(this.registry, {
        name: `${product.name}_feature_enabled`, help: 'Whether each feature gate is enabled (1) or not (0), with its stage (empty for GA).',
        labelNames: ['name', 'stage'], stability: 'BETA',
      }));
      // Upstream's stage label: empty for GA.
      for (const f of opts.features.list()) gauge.set({ name: f.name, stage: f.stage === 'GA' ? '' : f.stage }, f.enabled ? 1 : 0);
    }
  }

  async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw errors.methodNotAllowed();
    const body = Buffer.from(await this.registry.metrics());
    res.writeHead(200, {
      'Content-Type': this.registry.contentType,
      'Content-Length': body.length,
      'Cache-Control': 'no-cache, private',
      'X-Content-Type-Options': 'nosniff',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}
