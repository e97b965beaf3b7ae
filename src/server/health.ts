// /healthz, /livez and /readyz: named checks, ?verbose, repeatable ?exclude=,
// and /livez/{check}. Machines read the status code; people read the lines.

import type { ServerResponse } from 'node:http';

export interface HealthCheck {
  name: string;
  /** Resolves when healthy; throws (with a reason kept out of the response) when not. */
  check(): Promise<void> | void;
}

export type HealthEndpoint = 'healthz' | 'livez' | 'readyz';

export class Health {
  private readonly checks = new Map<HealthEndpoint, HealthCheck[]>([['healthz', []], ['livez', []], ['readyz', []]]);

  /** Adds a check to the given endpoints. */
  add(check: HealthCheck, endpoints: HealthEndpoint[] = ['healthz', 'livez', 'readyz']): void {
    for (const e of endpoints) this.checks.get(e)!.push(check);
  }

  /** Serves /{endpoint} and /{endpoint}/{check}; returns false for other paths. */
  async serve(path: string, query: URLSearchParams, res: ServerResponse): Promise<boolean> {
    const m = /^\/(healthz|livez|readyz)(?:\/(.+))?$/.exec(path);
    if (!m) return false;
    const endpoint = m[1] as HealthEndpoint;
    const checks = this.checks.get(endpoint)!;
    if (m[2] !== undefined) {
      const check = checks.find((c) => c.name === m[2]);
      if (!check) { write(res, 404, '404 page not found\n'); return true; }
      const failure = await run(check);
      write(res, failure === undefined ? 200 : 500, failure === undefined ? 'ok' : `internal server error: ${check.name} check failed\n`);
      return true;
    }
    const verbose = query.has('verbose') && query.get('verbose') !== 'false';
    const excluded = new Set(query.getAll('exclude'));
    const lines: string[] = [];
    let failed = false;
    for (const check of checks) {
      if (excluded.delete(check.name)) { lines.push(`[+]${check.name} excluded: ok`); continue; }
      const failure = await run(check);
      if (failure === undefined) lines.push(`[+]${check.name} ok`);
      else { failed = true; lines.push(`[-]${check.name} failed: reason withheld`); }
    }
    if (excluded.size) lines.push(`warn: some health checks cannot be excluded: no matches for ${[...excluded].map((e) => `"${e}"`).join(',')}`);
    if (failed) {
      write(res, 500, `${lines.join('\n')}\n${endpoint} check failed\n`);
    } else if (verbose) {
      write(res, 200, `${lines.join('\n')}\n${endpoint} check passed\n`);
    } else {
      write(res, 200, 'ok');
    }
    return true;
  }
}

async function run(check: HealthCheck): Promise<string | undefined> {
  try {
    await check.check();
    return undefined;
  } catch (e) {
    return (e as Error).message ?? String(e);
  }
}

function write(res: ServerResponse, code: number, text: string): void {
  const body = Buffer.from(text);
  res.writeHead(code, {
    'Content-Type': 'text/plain; charset=utf-8',
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-cache, private',
    'Content-Length': body.length,
  });
  res.end(body);
}
