// Graceful start and stop, as upstream's: /livez gives the post-start work a
// grace period; on SIGTERM /readyz fails its `shutdown` check first, requests
// are still served for --shutdown-delay-duration (or answered 429 with
// Retry-After and Connection: close with --shutdown-send-retry-after), then
// the listener closes, requests in flight finish, and open watches end
// cleanly, each given --shutdown-watch-termination-grace-period to drain.

import type { ServerResponse } from 'node:http';
import type { Server } from 'node:https';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { KindDefinition } from '../api/kind.js';
import { errors } from '../machinery/errors.js';
import type { Filter } from './filters.js';
import type { WatchHooks } from './handlers/watch.js';
import { isHealthProbe } from './inflight.js';
import type { RequestMetrics } from './requestmetrics.js';
import { whenAnswered } from './answered.js';

export interface LifecycleOptions {
  livezGracePeriodMs: number;
  shutdownDelayDurationMs: number;
  shutdownSendRetryAfter: boolean;
  shutdownWatchTerminationGracePeriodMs: number;
  /** Requests in flight get at most this long to finish. */
  requestTimeoutMs: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Lifecycle {
  private readonly startedAt = Date.now();
  /** Set on SIGTERM: /readyz fails from then on. */
  shuttingDown = false;
  private inflight = 0;
  private drained?: () => void;
  private readonly watches = new Set<() => void>();
  private readonly flushing = new Set<Socket>();
  private watchesGone?: () => void;

  constructor(private readonly o: LifecycleOptions, private readonly metrics?: RequestMetrics) {}

  /** Whether /livez still excuses unfinished post-start work. */
  inLivezGrace(): boolean {
    return Date.now() - this.startedAt < this.o.livezGracePeriodMs;
  }

  /** Counts a request until its answer is done. */
  track(res: ServerResponse): void {
    this.inflight++;
    const socket = res.socket;
    whenAnswered(res, () => {
      // A big answer may still sit in the socket's buffer after it is done: shutdown waits for it too.
      if (socket && !socket.destroyed && socket.writableLength > 0) {
        this.flushing.add(socket);
        socket.once('close', () => this.flushing.delete(socket));
      }
      if (--this.inflight === 0) this.drained?.();
    });
  }

  /** Whether some answer is still leaving its socket's buffer. */
  private stillFlushing(): boolean {
    for (const socket of this.flushing) {
      if (socket.destroyed || socket.writableLength === 0) this.flushing.delete(socket);
    }
    return this.flushing.size > 0;
  }

  /** During the shutdown delay, with --shutdown-send-retry-after: 429 and Connection: close, health probes excepted. */
  retryAfterFilter(): Filter {
    return (ctx, next) => {
      if (!this.shuttingDown || !this.o.shutdownSendRetryAfter || isHealthProbe(ctx.path)) return next();
      ctx.res.setHeader('Connection', 'close');
      throw errors.tooManyRequests('The apiserver is shutting down, please try again later.', 5);
    };
  }

  readonly watchHooks: WatchHooks = {
    opened: (kind: KindDefinition, end: () => void) => {
      const counted = this.metrics?.watchOpened(kind);
      this.watches.add(end);
      let closed = false;
      return {
        sent: (n: number) => counted?.sent(n),
        closed: () => {
          if (closed) return;
          closed = true;
          counted?.closed();
          this.watches.delete(end);
          if (this.watches.size === 0) this.watchesGone?.();
        },
      };
    },
  };

  /**
   * The shutdown sequence up to an idle server: readyz fails, the delay
   * passes, the listener closes, requests finish, watches end. The caller then
   * stops the rest (controllers, caches, store).
   */
  async drain(server: Server): Promise<void> {
    this.shuttingDown = true;
    if (this.o.shutdownDelayDurationMs > 0) await sleep(this.o.shutdownDelayDurationMs);
    // The listener closes; idle connections stay until their answers have left (the HTTP server's own close would cut them).
    const closed = new Promise<void>((resolve) => TlsServer.prototype.close.call(server, () => resolve()));
    // Watches are long-running: they end now, cleanly, and get their grace period to flush.
    const watchesDone = this.watches.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => { this.watchesGone = resolve; });
    for (const end of [...this.watches]) end();
    const grace = this.o.shutdownWatchTerminationGracePeriodMs;
    await (grace > 0 ? Promise.race([watchesDone, sleep(grace)]) : Promise.resolve());
    // Requests in flight (watch streams among them) finish before the process goes.
    // Bounded: a client that stops reading must not keep the process alive.
    const deadline = Date.now() + this.o.requestTimeoutMs;
    if (this.inflight > 0) await Promise.race([new Promise<void>((resolve) => { this.drained = resolve; }), sleep(this.o.requestTimeoutMs)]);
    while (this.stillFlushing() && Date.now() < deadline) await sleep(20);
    server.closeIdleConnections();
    await Promise.race([closed, sleep(1000)]);
  }
}
