// JSON from the remote services authentication and authorization ask: a
// webhook (POST of a review, to a kubeconfig's endpoint) or an identity
// provider (GET of its discovery document and keys). One request, bounded by
// a timeout from the first byte sent to the last byte read, by the body
// limit and by the nesting limit; anything else is an Error with the reason.

import { request as httpsRequest, type Agent, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import { jsonTextExceedsDepth, maxRequestBodyBytes } from '../machinery/limits.js';
import type { RemoteEndpoint } from '../machinery/endpoint.js';

export interface JsonCall {
  method: 'GET' | 'POST';
  url: string;
  body?: unknown;
  /** TLS: CAs that verify the remote (host roots when absent), client certificate and key. */
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  insecureSkipTlsVerify?: boolean;
  /** Keeps connections open between calls to the same remote. */
  agent?: Agent;
  timeoutMs: number;
  /** Who answers, in messages: `the webhook`, `the provider`. */
  remote: string;
}

export function callJson(call: JsonCall): Promise<unknown> {
  const url = new URL(call.url);
  const payload = call.body === undefined ? undefined : Buffer.from(JSON.stringify(call.body));
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (payload) Object.assign(headers, { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) });
  if (call.token) headers.Authorization = `Bearer ${call.token}`;
  const https = url.protocol !== 'http:';
  const options: RequestOptions = { method: call.method, headers };
  if (https) {
    Object.assign(options, { ca: call.caPem, cert: call.certPem, key: call.keyPem, rejectUnauthorized: !call.insecureSkipTlsVerify });
    if (call.agent) options.agent = call.agent;
  }
  const send = https ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (error: Error | undefined, value?: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(value);
    };
    const req = send(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxRequestBodyBytes) req.destroy(new Error(`${call.remote}'s answer is too large`));
        else chunks.push(c);
      });
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code >= 300) return finish(new Error(`${call.remote} answered HTTP ${code}`));
        if (jsonTextExceedsDepth(text)) return finish(new Error(`${call.remote}'s answer is nested too deeply`));
        try {
          finish(undefined, JSON.parse(text));
        } catch {
          finish(new Error(`${call.remote}'s answer is not JSON`));
        }
      });
      res.on('error', (e) => finish(e));
      res.on('aborted', () => finish(new Error('the connection closed before the answer was complete')));
    });
    const timer = setTimeout(() => {
      const error = new Error(`no answer within ${call.timeoutMs} ms`);
      finish(error);
      req.destroy(error);
    }, call.timeoutMs);
    req.on('error', (e) => finish(e));
    req.end(payload);
  });
}

/** POSTs a review to a webhook as its kubeconfig names it; resolves with the parsed answer. */
export function postReview(endpoint: RemoteEndpoint, body: unknown, timeoutMs: number, agent?: Agent): Promise<unknown> {
  return callJson({
    method: 'POST', url: endpoint.server, body, timeoutMs, agent, remote: 'the webhook',
    caPem: endpoint.caPem, certPem: endpoint.certPem, keyPem: endpoint.keyPem, token: endpoint.token, insecureSkipTlsVerify: endpoint.insecureSkipTlsVerify,
  });
}
