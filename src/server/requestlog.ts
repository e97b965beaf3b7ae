// One log line per request at -v 3 or more, with the fields of upstream's
// httplog: verb, URI, latency, user agent, audit ID, source address, status.

import type { Logger } from 'pino';
import type { Filter } from './filters.js';
import { verbLabel } from './requestmetrics.js';
import { formatDuration } from '../machinery/time.js';
import { whenAnswered } from './answered.js';

export function requestLog(log: Logger): Filter {
  return (ctx, next) => {
    const started = performance.now();
    whenAnswered(ctx.res, () => {
      const req = ctx.req;
      log.info({
        verb: ctx.info ? verbLabel(ctx, ctx.info) : req.method,
        URI: req.url,
        latency: formatDuration(performance.now() - started),
        userAgent: req.headers['user-agent'] ?? '',
        auditID: ctx.auditID,
        srcIP: `${req.socket.remoteAddress ?? ''}:${req.socket.remotePort ?? ''}`,
        resp: ctx.res.headersSent ? ctx.res.statusCode : 0,
      }, 'HTTP');
    });
    return next();
  };
}
