// A webhook server for tests: HTTPS on 127.0.0.1 with a CA of its own, a
// handler the test sets per request, every request body recorded, and a
// kubeconfig file that points a server at it.

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateEcKeyPair, issueCertificate } from '../../src/pki/index.js';
import { newCa } from './certs.js';

export type WebhookHandler = (body: any, req: IncomingMessage, res: ServerResponse) => void;

export interface TestWebhook {
  url: string;
  /** Bodies received, parsed. */
  received: any[];
  handler: WebhookHandler;
  kubeconfigPath: string;
  close(): Promise<void>;
}

export async function startWebhook(dir: string, handler: WebhookHandler): Promise<TestWebhook> {
  const ca = await newCa('test webhook CA');
  const keys = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName: 'webhook', ipAddresses: ['127.0.0.1'], usages: ['digital signature', 'key encipherment', 'server auth'],
    publicKey: keys.publicKeyPem, issuerKeyPem: ca.key, issuerCertPem: ca.cert,
  });
  const hook: TestWebhook = { url: '', received: [], handler, kubeconfigPath: join(dir, 'webhook.kubeconfig'), close: async () => undefined };
  const server: Server = createServer({ key: keys.privateKeyPem, cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      hook.received.push(body);
      hook.handler(body, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`;
  hook.close = () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  writeFileSync(hook.kubeconfigPath, [
    'apiVersion: v1', 'kind: Config',
    'clusters:', '- name: webhook', '  cluster:', `    server: ${hook.url}`, `    certificate-authority-data: ${Buffer.from(ca.cert).toString('base64')}`,
    'users:', '- name: apiserver', '  user:', '    token: webhook-secret',
    'contexts:', '- name: webhook', '  context:', '    cluster: webhook', '    user: apiserver',
    'current-context: webhook', '',
  ].join('\n'));
  return hook;
}

/** Answers a SubjectAccessReview with this status, in the apiVersion it came in. */
export function answer(res: ServerResponse, body: any, status: Record<string, unknown>): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ apiVersion: body.apiVersion, kind: 'SubjectAccessReview', status }));
}
