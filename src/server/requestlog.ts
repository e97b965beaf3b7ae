// One log line per request at -v 3 or more, with the fields of upstream's
// httplog: verb, URI, latency, user agent, audit ID, source address, status.

import type { Logger } from 'pino';
import type { Filter } from './filters.js';
import { verbLabel } from './requestmetrics.js';

/** Go's Duration.String for the latencies people read: `812.4µs`, `12.03ms`, `1.2s`. */
function latencyText(ms: number): string {
  if (ms < 1) return `${Number((ms * 1000).toFixed(1))}µs`;
  if (ms < 1000) return `${Number(ms.toFixed(3))}ms`;
  return `${Number((ms / 1000).toFixed(3))}s`;
}

export function requestLog(log: Logger): Filter {
  return (ctx, next) => {
    const started = performance.now();
    ctx.res.once('close', () => {
      const req = ctx.req;
      log.info({
        verb: ctx.info ? verbLabel(ctx, ctx.info) : req.method,
        URI: req.url,
        latency: latencyText(performance.now() - started),
        userAgent: req.headers['user-agent'] ?? '',
        auditID: ctx.auditID,
        srcIP: `${req.socket.remoteAddress ?? ''}:${req.socket.remotePort ?? ''}`,
        resp: ctx.res.headersSent ? ctx.res.statusCode : 0,
      }, 'HTTP');
    });
    return next();
  };
}
