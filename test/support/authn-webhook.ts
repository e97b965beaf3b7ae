// A token authentication webhook for tests: HTTPS on 127.0.0.1 with a CA of
// its own, which insists on a client certificate from a client CA of its own
// too; a handler the test sets per request; every review and the client's CN
// recorded; and a kubeconfig file (cluster server and CA, user certificate
// and key) that points a server at it.

import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateEcKeyPair, issueCertificate } from '../../src/pki/index.js';
import { clientCert, newCa } from './certs.js';

export type TokenWebhookHandler = (review: any, req: IncomingMessage, res: ServerResponse) => void;

export interface TestTokenWebhook {
  url: string;
  /** Reviews received, with the CN of the client certificate that sent each. */
  received: { review: any; clientCn: string }[];
  handler: TokenWebhookHandler;
  kubeconfigPath: string;
  close(): Promise<void>;
}

export async function startTokenWebhook(dir: string, handler: TokenWebhookHandler): Promise<TestTokenWebhook> {
  const serverCa = await newCa('token webhook CA');
  const clientCa = await newCa('token webhook client CA');
  const keys = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName: 'token-webhook', ipAddresses: ['127.0.0.1'], usages: ['digital signature', 'key encipherment', 'server auth'],
    publicKey: keys.publicKeyPem, issuerKeyPem: serverCa.key, issuerCertPem: serverCa.cert,
  });
  const apiserver = await clientCert(clientCa, 'apiserver');
  const hook: TestTokenWebhook = { url: '', received: [], handler, kubeconfigPath: join(dir, 'token-webhook.kubeconfig'), close: async () => undefined };
  const server: Server = createServer({ key: keys.privateKeyPem, cert, ca: clientCa.cert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      hook.received.push({ review, clientCn: String((req.socket as TLSSocket).getPeerCertificate().subject?.CN) });
      hook.handler(review, req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authenticate`;
  hook.close = () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  const b64 = (pem: string) => Buffer.from(pem).toString('base64');
  writeFileSync(hook.kubeconfigPath, [
    'apiVersion: v1', 'kind: Config',
    'clusters:', '- name: token-webhook', '  cluster:', `    server: ${hook.url}`, `    certificate-authority-data: ${b64(serverCa.cert)}`,
    'users:', '- name: apiserver', '  user:', `    client-certificate-data: ${b64(apiserver.cert)}`, `    client-key-data: ${b64(apiserver.key)}`,
    'contexts:', '- name: webhook', '  context:', '    cluster: token-webhook', '    user: apiserver',
    'current-context: webhook', '',
  ].join('\n'));
  return hook;
}

/** Answers a TokenReview with this status, in the apiVersion it came in. */
export function answerReview(res: ServerResponse, review: any, status: Record<string, unknown>): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'TokenReview', status }));
}
