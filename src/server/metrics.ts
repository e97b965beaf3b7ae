// /metrics: every metric of the server in the Prometheus text format, the
// process and Node.js runtime ones included. It is a non-resource path like
// any other: the authorizer decides who reads it (`get` on /metrics).

import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { errors } from '../machinery/errors.js';

export class Metrics {
  /** The server's own registry: several servers in one process keep their figures apart. */
  readonly registry = new Registry();

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // Gauges named like counters, which `promtool check metrics` rejects; each repeats a gauge without the suffix.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) this.registry.removeSingleMetric(name);
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
