// Post-start hooks, as upstream's (pkg/server/hooks.go): the work a server
// does once it listens (the reserved namespaces, the default RBAC policy, the
// system priority classes). Registering a hook is what makes its health
// check, poststarthook/<name>, on /healthz and /readyz, and on /livez once
// --livez-grace-period is over: one name, and whether it ran is known only
// here. Admission may refuse these writes (AlwaysDeny, a webhook not up yet):
// the server then serves, not ready, and tries again every 2 s until done.

import type { Health } from '../server/health.js';
import { WorkQueue } from '../client/workqueue.js';
import { ItemExponentialRateLimiter } from '../client/ratelimit.js';
import type { Clock } from '../client/clock.js';

export interface PostStartHook {
  /** Its name, and its health check's after `poststarthook/`. */
  name: string;
  /** What the log says, with the error, when the first try fails. */
  failure: string;
  run(): Promise<unknown>;
}

export interface PostStartHookOptions {
  /** Whether /livez still excuses unfinished hooks (--livez-grace-period). */
  inLivezGrace(): boolean;
  log(message: string, extra?: object): void;
  /** The retries' clock (tests move it). */
  clock?: Clock;
}

const retryEveryMs = 2_000;

export class PostStartHooks {
  private readonly hooks = new Map<string, PostStartHook>();
  private readonly done = new Set<string>();
  private readonly retries: WorkQueue;

  constructor(private readonly health: Health, private readonly o: PostStartHookOptions) {
    this.retries = new WorkQueue((name) => this.run(name), {
      name: 'poststarthooks', workers: 1, maxRetries: Infinity, failure: 'post-start work failed; trying again',
      rateLimiter: new ItemExponentialRateLimiter(retryEveryMs, retryEveryMs), log: o.log, describe: (hook, err) => ({ err, hook }), clock: o.clock,
    });
  }

  /** A hook the server is not ready without. */
  add(hook: PostStartHook): void {
    this.register(hook);
    const name = `poststarthook/${hook.name}`;
    const check = () => { if (!this.done.has(hook.name)) throw new Error(`post-start hook ${hook.name} has not completed`); };
    this.health.add({ name, check }, ['healthz', 'readyz']);
    // As upstream: within the grace period, unfinished post-start work does not make the server not live.
    this.health.add({ name, check: () => (this.o.inLivezGrace() ? undefined : check()) }, ['livez']);
  }

  /** Work that is not a readiness condition (what clients find once it is there): run and retried as a hook, with no health check. */
  addUnchecked(hook: PostStartHook): void {
    this.register(hook);
  }

  /** The first try of each hook, in the order added, before the server says it serves; a failed one is left to the retries. */
  async start(): Promise<void> {
    for (const hook of this.hooks.values()) {
      try {
        await this.run(hook.name);
      } catch (err) {
        this.o.log(`${hook.failure}; trying again`, { err });
        this.retries.addRateLimited(hook.name);
      }
    }
  }

  /** Stops the retries; resolves once a running try is done. */
  shutDown(): Promise<void> {
    return this.retries.shutDown();
  }

  private register(hook: PostStartHook): void {
    if (this.hooks.has(hook.name)) throw new Error(`post-start hook ${hook.name} is registered twice`);
    this.hooks.set(hook.name, hook);
  }

  private async run(name: string): Promise<void> {
    await this.hooks.get(name)!.run();
    this.done.add(name);
  }
}
