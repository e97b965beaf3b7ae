// The audit webhook backend (--audit-webhook-config-file, a kubeconfig naming
// the remote server): events are buffered (at most --audit-webhook-batch-
// buffer-size; more are dropped and counted) and posted as an
// audit-group v1 EventList when a batch is full (--audit-webhook-batch-
// max-size) or its first event has waited --audit-webhook-batch-max-wait.
// One batch is in flight at a time; a batch the webhook does not take with a
// 2xx is dropped, counted and logged, as upstream's batch backend does once
// its retries are spent. Requests never wait for it.

import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { RemoteEndpoint } from '../../machinery/endpoint.js';
import { auditApiVersion } from './policy.js';

export interface WebhookBackendOptions {
  endpoint: RemoteEndpoint;
  bufferSize: number;
  maxBatchSize: number;
  maxWaitMs: number;
  /** How long one post may take. */
  timeoutMs: number;
  onError(lost: number, err: unknown): void;
}

export class WebhookBackend {
  private buffer: string[] = [];
  private timer?: NodeJS.Timeout;
  private sending?: Promise<void>;
  private closed = false;

  constructor(private readonly o: WebhookBackendOptions) {}

  /** An event's JSON text, whole or in two parts (see AuditSink). */
  process(head: string, rest = ''): void {
    if (this.closed) return;
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
          await this.post(batch);
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
          else reject(new Error(`the audit webhook answered HTTP ${code}`));
        });
        res.on('error', reject);
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`the audit webhook did not answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** Sends everything buffered, then stops taking events. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.sending) await this.sending;
    if (this.buffer.length) await (this.sending = this.sendAll());
  }
}
