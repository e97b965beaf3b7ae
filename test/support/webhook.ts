// A real HTTPS admission webhook for tests, with a CA of its own: every path
// is a webhook whose behaviour the test sets (allow, deny, patch, hang, any
// answer at all) and whose calls it records.

import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import { generateEcKeyPair, issueCertificate } from '../../src/pki/index.js';
import { newCa, type CertPair } from './certs.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { after, before } from 'node:test';
import { startTestServer, type TestServer } from './server.js';
import { eventually } from './eventually.js';

/** The suite's one poller, here too for the tests that take it from this module. */
export { eventually };

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

/** What a test needs to configure webhooks on a running server: its client, and the webhook server. */
export interface WebhookScene {
  client: import('./client.js').TestClient;
  hooks: TestWebhookServer;
}

export type ConfigurationKind = 'mutating' | 'validating';

const configurationGroup = () => vocabulary.admissionRegistrationGroup;
export const configurations = (which: ConfigurationKind) => `/apis/${configurationGroup()}/v1/${which}webhookconfigurations`;
export const configMaps = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

/** A namespace of the test, labelled so that only the test's webhooks see it. */
export async function labelledNamespace(scene: WebhookScene, name: string, labels: Record<string, string> = { suite: name }): Promise<string> {
  const r = await scene.client.post('/api/v1/namespaces', { metadata: { name, labels } });
  if (r.status !== 201) throw new Error(`creating namespace ${name}: ${r.status} ${r.text}`);
  return name;
}

/** One webhook of a configuration: configmap writes in namespaces labelled `suite`, unless `extra` says otherwise. */
export function webhookEntry(scene: WebhookScene, name: string, path: string, suite: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name, clientConfig: { url: scene.hooks.url(path), caBundle: scene.hooks.caBundle },
    rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
    namespaceSelector: { matchLabels: { suite } },
    sideEffects: 'None', admissionReviewVersions: ['v1'], timeoutSeconds: 1, ...extra,
  };
}

export async function configure(scene: WebhookScene, which: ConfigurationKind, name: string, ...webhooks: Record<string, unknown>[]): Promise<void> {
  const kind = `${which === 'mutating' ? 'Mutating' : 'Validating'}WebhookConfiguration`;
  const r = await scene.client.post(configurations(which), { apiVersion: `${configurationGroup()}/v1`, kind, metadata: { name }, webhooks });
  if (r.status !== 201) throw new Error(`creating ${kind} ${name}: ${r.status} ${r.text}`);
}

export async function unconfigure(scene: WebhookScene, which: ConfigurationKind, name: string): Promise<void> {
  const r = await scene.client.delete(`${configurations(which)}/${name}`);
  if (r.status !== 200) throw new Error(`deleting ${which} configuration ${name}: ${r.status} ${r.text}`);
}

/** Dry-run creates at `collection` until the webhook at `path` has been called: its configuration is in effect. */
export async function active(scene: WebhookScene, path: string, collection: string, body: Record<string, unknown> = { data: {} }): Promise<void> {
  const seen = scene.hooks.callsTo(path).length;
  await eventually(`webhook ${path} is called`, async () => {
    const metadata = { generateName: 'probe-', ...((body.metadata as object | undefined) ?? {}) };
    await scene.client.post(`${collection}?dryRun=All`, { ...body, metadata });
    return scene.hooks.callsTo(path).length > seen;
  });
}

/** A test file's API server and webhook server, started before its tests and closed after them. */
export interface WebhookSuite {
  readonly server: TestServer;
  readonly hooks: TestWebhookServer;
  scene(): WebhookScene;
}

export function webhookSuite(): WebhookSuite {
  let server: TestServer | undefined;
  let hooks: TestWebhookServer | undefined;
  before(async () => {
    server = await startTestServer();
    hooks = await startWebhookServer();
  });
  after(async () => {
    await hooks?.close();
    await server?.close();
  });
  return {
    get server() { return server!; },
    get hooks() { return hooks!; },
    scene: () => ({ client: server!.client, hooks: hooks! }),
  };
}
