// A real HTTPS admission webhook for tests, with a CA of its own: every path
// is a webhook whose behaviour the test sets (allow, deny, patch, hang, any
// answer at all) and whose calls it records.

import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import { generateEcKeyPair, issueCertificate } from '../../src/pki/index.js';
import { newCa, type CertPair } from './certs.js';

export interface WebhookCall {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The AdmissionReview received. */
  review: any;
  /** The client certificate's subject, when one was presented. */
  clientSubject?: string;
}

/** What a webhook path answers: a review response, raw bytes, or nothing until the server closes. */
export type WebhookAnswer =
  | { response: Record<string, unknown>; apiVersion?: string }
  | { status: number; raw: string }
  | { hang: true };

export type WebhookBehaviour = (review: any, call: WebhookCall) => WebhookAnswer;

export interface TestWebhookServer {
  port: number;
  ca: CertPair;
  /** caBundle for a webhook configuration: the CA's PEM in base64. */
  caBundle: string;
  url(path: string): string;
  calls: WebhookCall[];
  callsTo(path: string): WebhookCall[];
  /** Sets how `path` answers (default: allow). */
  on(path: string, behaviour: WebhookBehaviour): void;
  close(): Promise<void>;
}

/** Allows, echoing the uid; `extra` adds response fields (warnings, auditAnnotations, status). */
export const allow = (extra: Record<string, unknown> = {}): WebhookBehaviour => (review) => ({ response: { uid: review.request.uid, allowed: true, ...extra } });

export const deny = (status?: Record<string, unknown>): WebhookBehaviour => (review) => ({ response: { uid: review.request.uid, allowed: false, ...(status ? { status } : {}) } });

/** Allows with a JSON patch. */
export const patchWith = (ops: (review: any) => unknown[]): WebhookBehaviour => (review) => ({
  response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops(review))).toString('base64') },
});

/** JSON patch operations that set a label, creating the labels map when the object has none. */
export function setLabel(object: any, key: string, value: string): unknown[] {
  if (!object?.metadata?.labels) return [{ op: 'add', path: '/metadata/labels', value: { [key]: value } }];
  return [{ op: 'add', path: `/metadata/labels/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, value }];
}

export async function startWebhookServer(): Promise<TestWebhookServer> {
  const ca = await newCa('test webhook CA');
  const keys = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName: 'webhook', ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'],
    usages: ['digital signature', 'key encipherment', 'server auth'],
    publicKey: keys.publicKeyPem, issuerKeyPem: ca.key, issuerCertPem: ca.cert,
  });
  const behaviours = new Map<string, WebhookBehaviour>();
  const calls: WebhookCall[] = [];
  const hanging = new Set<() => void>();
  const server: Server = createServer({ key: keys.privateKeyPem, cert, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'https://localhost');
      const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate?.();
      const call: WebhookCall = {
        path: url.pathname, query: url.searchParams, headers: req.headers,
        review: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        clientSubject: peer && peer.subject ? `CN=${peer.subject.CN}` : undefined,
      };
      calls.push(call);
      const answer = (behaviours.get(url.pathname) ?? allow())(call.review, call);
      if ('hang' in answer) {
        const release = () => res.destroy();
        hanging.add(release);
        res.on('close', () => hanging.delete(release));
        return;
      }
      if ('raw' in answer) {
        res.writeHead(answer.status, { 'Content-Type': 'application/json' });
        res.end(answer.raw);
        return;
      }
      const apiVersion = answer.apiVersion ?? call.review.apiVersion;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ apiVersion, kind: 'AdmissionReview', response: answer.response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port, ca,
    caBundle: Buffer.from(ca.cert).toString('base64'),
    url: (path) => `https://127.0.0.1:${port}${path}`,
    calls,
    callsTo: (path) => calls.filter((c) => c.path === path),
    on: (path, behaviour) => { behaviours.set(path, behaviour); },
    async close() {
      for (const release of hanging) release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Polls `condition` until it holds (every 20 ms, for up to 10 s); fails with `what` otherwise. */
export async function eventually(what: string, condition: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting until ${what}`);
}
