// How much work the server takes at once, and for how long: the in-flight
// limits of upstream's max-in-flight filter (non-mutating and mutating pools,
// 429 with Retry-After beyond them; long-running requests, health probes and
// system:masters exempt, as upstream, so that neither a flood of other users
// nor an administrator's own script is refused), and the 504 for requests
// past --request-timeout.

import { errors } from '../machinery/errors.js';
import { systemGroups } from '../machinery/user.js';
import { parseDuration } from '../machinery/time.js';
import type { Filter, RequestContext } from './filters.js';
import type { RequestInfo } from './requestinfo.js';

/** Sub-resources that stream for as long as the client wants (upstream's long-running set). */
const longRunningSubresources = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** Watches and proxy-like requests hold their connection open: no limit or timeout applies to them. */
export function isLongRunning(info: RequestInfo): boolean {
  if (info.verb === 'watch' || info.verb === 'proxy') return true;
  return info.subresource !== undefined && longRunningSubresources.has(info.subresource);
}

/** As upstream, everything but reads counts as mutating. */
const readVerbs = new Set(['get', 'list', 'watch', 'head']);

export function isMutating(info: RequestInfo): boolean {
  return !readVerbs.has(info.verb);
}

/** Health probes are answered by the server itself and must answer under any load. */
export function isHealthProbe(path: string): boolean {
  return /^\/(?:healthz|livez|readyz)(?:\/|$)/.test(path);
}

export interface InflightLimits {
  /** 0: no limit. */
  readOnly: number;
  mutating: number;
}

/** The in-flight counters; the metrics read them when scraped. */
export class InflightGate {
  readOnly = 0;
  mutating = 0;

  constructor(readonly limits: InflightLimits) {}

  /** The filter: after authentication (who asks decides the pool), before authorization. */
  filter(): Filter {
    return (ctx, next) => {
      // Upstream's filter lets system:masters through uncounted, whatever the load.
      if (ctx.longRunning || isHealthProbe(ctx.path) || ctx.user?.groups.includes(systemGroups.masters)) return next();
      return this.counted(isMutating(ctx.info!) ? 'mutating' : 'readOnly', next);
    };
  }

  private async counted(pool: 'mutating' | 'readOnly', next: () => Promise<void>): Promise<void> {
    const limit = this.limits[pool];
    if (limit > 0 && this[pool] >= limit) {
      // As upstream: come back in a second.
      throw errors.tooManyRequests('Too many requests, please try again later.', 1);
    }
    this[pool]++;
    try {
      await next();
    } finally {
      this[pool]--;
    }
  }
}

/** Marks long-running requests, for the limits, the timeout and the metrics; after request info. */
export function markLongRunning(): Filter {
  return (ctx, next) => {
    ctx.longRunning = isLongRunning(ctx.info!);
    return next();
  };
}

/** The request's own `timeout` (a Go duration) when shorter than the server's; 400 when it does not parse, as upstream. */
function deadlineOf(query: URLSearchParams, timeoutMs: number): number {
  const asked = query.get('timeout');
  if (asked === null || asked === '') return timeoutMs;
  let ms: number;
  try {
    ms = parseDuration(asked);
  } catch {
    throw errors.badRequest(`invalid timeout specified in the request URL - time: invalid duration ${JSON.stringify(asked)}`);
  }
  return ms > 0 && ms < timeoutMs ? ms : timeoutMs;
}

/**
 * 504 Timeout for a request that is not answered within `timeoutMs`, or its
 * own shorter `timeout` parameter (not long-running ones). The handler may still finish: its late answer goes
 * nowhere (nothing is written once the answer began), its failure is dropped.
 * An answer already streaming when the time is up is left to finish.
 */
export function requestTimeout(timeoutMs: number): Filter {
  return (ctx: RequestContext, next) => {
    if (ctx.longRunning) return next();
    const ms = deadlineOf(ctx.query, timeoutMs);
    const work = next();
    // One promise and one timer a request (no race of two promises): whichever comes first settles it.
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (ctx.res.headersSent) return; // the answer is streaming: let it finish
        work.catch(() => undefined);
        reject(errors.timeout('request did not complete within requested timeout - context deadline exceeded', 0));
      }, ms);
      work.then(
        () => { clearTimeout(timer); resolve(); },
        (e: unknown) => { clearTimeout(timer); reject(e); },
      );
    });
  };
}
