// The audit webhook backend (--audit-webhook-config-file, a kubeconfig naming
// the remote server): events are buffered (at most --audit-webhook-batch-
// buffer-size; more are dropped and counted) and posted as an
// audit-group v1 EventList when a batch is full (--audit-webhook-batch-
// max-size) or its first event has waited --audit-webhook-batch-max-wait.
// One batch is in flight at a time, and at most --audit-webhook-batch-
// throttle-qps batches a second (bursts of --audit-webhook-batch-throttle-
// burst). A batch the webhook failed to take for a passing reason (a reset
// connection, 429, 500, 504, or any answer with Retry-After) is tried again
// after --audit-webhook-initial-backoff, then 1.5 times longer each time, five
// tries in all, as upstream's generic webhook; after that, or for any other
// failure, it is dropped, counted and logged. Requests never wait for a batch.
// In the blocking modes (--audit-webhook-mode) each event is posted on its
// own, with the same retries but neither buffer nor throttle, and the caller
// learns when it is through, as upstream's blocking webhook.

import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { RemoteEndpoint } from '../../machinery/endpoint.js';
import { auditApiVersion } from './policy.js';
import type { AuditMode } from '../options.js';

export interface WebhookBackendOptions {
  endpoint: RemoteEndpoint;
  bufferSize: number;
  maxBatchSize: number;
  maxWaitMs: number;
  /** How long one post may take. */
  timeoutMs: number;
  /** Wait before the first retry of a batch; each further one waits 1.5 times longer. */
  initialBackoffMs: number;
  /** Batches a second on average, and at once after a quiet while; absent: no limit. */
  throttle?: { qps: number; burst: number };
  mode?: AuditMode;
  onError(lost: number, err: unknown): void;
}

/** Answers after which a batch is tried again: an internal error, a timeout upstream of the webhook, too many requests. */
const passingCodes = new Set([429, 500, 504]);

/** Tries of one batch in all, and the growth of the wait between them (upstream's default webhook backoff). */
const tries = 5;
const backoffFactor = 1.5;
/** Each wait is lengthened by up to this share, at random, so that servers restarted together do not retry together. */
const backoffJitter = 0.2;

/** A failed post, and whether trying again later may help. */
class PostError extends Error {
  constructor(message: string, readonly passing: boolean) {
    super(message);
  }
}

/** Allows `qps` takes a second on average, `burst` of them at once after a quiet while. */
class TokenBucket {
  private tokens: number;
  private at = Date.now();

  constructor(private readonly qps: number, private readonly burst: number) {
    this.tokens = burst;
  }

  /** Milliseconds to wait before the next take (0: now); takes the token. */
  take(): number {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.qps);
    this.at = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }
}

export class WebhookBackend {
  private buffer: string[] = [];
  private timer?: NodeJS.Timeout;
  private sending?: Promise<void>;
  private closed = false;
  private readonly bucket?: TokenBucket;
  /** End the waits of retries or of the throttle early (on close). */
  private readonly wakes = new Set<() => void>();

  constructor(private readonly o: WebhookBackendOptions) {
    if (o.throttle && o.throttle.qps > 0) this.bucket = new TokenBucket(o.throttle.qps, Math.max(1, o.throttle.burst));
  }

  /** Posts of the blocking modes under way, for close(). */
  private readonly blocking = new Set<Promise<boolean>>();

  /**
   * An event's JSON text, whole or in two parts (see AuditSink). In the
   * blocking modes it settles once the webhook took the event: with false
   * when it did not and the mode is blocking-strict.
   */
  process(head: string, rest = ''): Promise<boolean> | undefined {
    if (this.closed) return undefined;
    if (this.o.mode === 'blocking' || this.o.mode === 'blocking-strict') {
      const posted = this.postWithRetries([head + rest], false).then(() => true, (err) => {
        this.o.onError(1, err);
        return this.o.mode !== 'blocking-strict';
      });
      this.blocking.add(posted);
      void posted.finally(() => this.blocking.delete(posted));
      return posted;
    }
    this.enqueue(head, rest);
    return undefined;
  }

  private enqueue(head: string, rest: string): void {
    if (this.buffer.length >= Math.max(1, this.o.bufferSize)) {
      this.o.onError(1, new Error('the audit webhook buffer is full; event dropped'));
      return;
    }
    this.buffer.push(head + rest);
    if (this.buffer.length >= this.batchSize) this.flushSoon();
    else this.timer ??= setTimeout(() => this.flushSoon(), this.o.maxWaitMs);
  }

  private get batchSize(): number {
    return Math.max(1, this.o.maxBatchSize);
  }

  private flushSoon(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // Only with events to send: a send of nothing would settle before `sending` is set, and stay set.
    if (!this.sending && this.buffer.length) this.sending = this.sendAll();
  }

  /** Sends full batches, then the rest, one post at a time. */
  private async sendAll(): Promise<void> {
    try {
      while (this.buffer.length) {
        const batch = this.buffer.splice(0, this.batchSize);
        try {
          await this.postWithRetries(batch);
        } catch (err) {
          this.o.onError(batch.length, err);
        }
        // A partial batch waits for more unless the backend is closing.
        if (!this.closed && this.buffer.length < this.batchSize) break;
      }
    } finally {
      this.sending = undefined;
      if (this.buffer.length && !this.closed) this.timer ??= setTimeout(() => this.flushSoon(), this.o.maxWaitMs);
    }
  }

  /** Waits `ms`, or less if the backend closes meanwhile. */
  private pause(ms: number): Promise<void> {
    if (ms <= 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakes.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakes.add(done);
    });
  }

  /** Posts a batch within the throttle, trying again after a passing failure; a closing backend tries once more at most. */
  private async postWithRetries(items: string[], throttled = true): Promise<void> {
    if (this.bucket && throttled) await this.pause(this.bucket.take());
    let wait = this.o.initialBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.post(items);
      } catch (err) {
        if (!(err instanceof PostError) || !err.passing || attempt >= tries || this.closed) throw err;
      }
      await this.pause(wait * (1 + Math.random() * backoffJitter));
      wait *= backoffFactor;
    }
  }

  private post(items: string[]): Promise<void> {
    const { endpoint, timeoutMs } = this.o;
    const url = new URL(endpoint.server);
    const payload = Buffer.from(`{"kind":"EventList","apiVersion":"${auditApiVersion}","metadata":{},"items":[${items.join(',')}]}`);
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': String(payload.length) };
    if (endpoint.token) headers.Authorization = `Bearer ${endpoint.token}`;
    const options: RequestOptions = {
      method: 'POST', headers,
      ca: endpoint.caPem, cert: endpoint.certPem, key: endpoint.keyPem,
      rejectUnauthorized: !endpoint.insecureSkipTlsVerify,
    };
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, options, (res) => {
        res.resume();
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) resolve();
          else reject(new PostError(`the audit webhook answered HTTP ${code}`, passingCodes.has(code) || res.headers['retry-after'] !== undefined));
        });
        res.on('error', (err) => reject(new PostError(err.message, true)));
      });
      req.setTimeout(timeoutMs, () => req.destroy(new PostError(`the audit webhook did not answer within ${timeoutMs} ms`, false)));
      req.on('error', (err: NodeJS.ErrnoException) => reject(err instanceof PostError ? err : new PostError(err.message, err.code === 'ECONNRESET')));
      req.end(payload);
    });
  }

  /** Sends everything buffered (without waiting out a retry's backoff), then stops taking events. */
  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.wakes) wake();
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.sending) await this.sending;
    if (this.buffer.length) await (this.sending = this.sendAll());
    await Promise.all(this.blocking);
  }
}
