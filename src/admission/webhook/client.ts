// Calls a webhook: one HTTPS POST of JSON, over keep-alive connections kept
// per endpoint and trust settings, bounded by the webhook's timeout from the
// first byte sent to the last byte read. Nothing a webhook does (hang, send
// too much, close the connection) holds a request past that timeout.

import { Agent, request } from 'node:https';
import { createHash } from 'node:crypto';
import { maxRequestBodyBytes } from '../../machinery/limits.js';
import type { WebhookCredentials } from './credentials.js';

export interface WebhookEndpoint {
  url: URL;
  /** CAs that verify the webhook's certificate; the system's roots when absent. */
  caPem?: string;
  credentials?: WebhookCredentials;
}

export interface WebhookReply {
  status: number;
  body: Buffer;
}

/** A failed call: the reason upstream's client would give (`Post "<url>": <cause>`). */
export class WebhookCallError extends Error {
  override name = 'WebhookCallError';
}

/** Agents kept at most; the oldest is closed when a new endpoint needs one. */
const maxAgents = 128;

export class WebhookClient {
  private readonly agents = new Map<string, Agent>();

  post(endpoint: WebhookEndpoint, body: Buffer, timeoutMs: number): Promise<WebhookReply> {
    const { url, credentials } = endpoint;
    const headers: Record<string, string | number> = {
      'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': body.length,
      'User-Agent': 'apiserver-admission',
    };
    if (credentials?.token) headers.Authorization = `Bearer ${credentials.token}`;
    else if (credentials?.username !== undefined) {
      headers.Authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password ?? ''}`).toString('base64')}`;
    }
    const shown = `Post "${url.href}"`;
    return new Promise<WebhookReply>((resolvePromise, rejectPromise) => {
      let settled = false;
      const finish = (error: Error | undefined, reply?: WebhookReply) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) rejectPromise(new WebhookCallError(`${shown}: ${error.message}`));
        else resolvePromise(reply!);
      };
      const req = request(url, { method: 'POST', agent: this.agent(endpoint), headers }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxRequestBodyBytes) {
            req.destroy(new Error(`the response is larger than ${maxRequestBodyBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () => finish(undefined, { status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', (e) => finish(e));
        res.on('aborted', () => finish(new Error('the connection closed before the response was complete')));
      });
      const timer = setTimeout(() => {
        const error = new Error('context deadline exceeded');
        finish(error);
        req.destroy(error);
      }, timeoutMs);
      req.on('error', (e) => finish(e));
      req.end(body);
    });
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }

  private agent(endpoint: WebhookEndpoint): Agent {
    const c = endpoint.credentials;
    const key = createHash('sha256').update(JSON.stringify([endpoint.url.host, endpoint.caPem ?? '', c?.certPem ?? '', c?.keyPem ?? ''])).digest('hex');
    let agent = this.agents.get(key);
    if (agent) {
      // Most recently used last, so that the first entry is the one to close.
      this.agents.delete(key);
      this.agents.set(key, agent);
      return agent;
    }
    agent = new Agent({ keepAlive: true, ca: endpoint.caPem, cert: c?.certPem, key: c?.keyPem, maxSockets: 64 });
    this.agents.set(key, agent);
    if (this.agents.size > maxAgents) {
      const [oldestKey, oldest] = this.agents.entries().next().value as [string, Agent];
      this.agents.delete(oldestKey);
      oldest.destroy();
    }
    return agent;
  }
}
