// /metrics: every metric of the server in the Prometheus text format, the
// process and Node.js runtime ones included. It is a non-resource path like
// any other: the authorizer decides who reads it (`get` on /metrics). Each
// metric of ours is declared with its stability (machinery/metricdeclaration.ts).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';
import { errors } from '../machinery/errors.js';
import { product } from '../machinery/vocabulary.js';
import type { FeatureGates } from '../machinery/featuregates.js';
import { declareMetric, MetricsConfigError, previousMinor, showHiddenMetrics } from '../machinery/metricdeclaration.js';


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
      showHiddenMetrics(this.registry);
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
