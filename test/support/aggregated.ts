// An aggregated API server for tests, as a real one behaves: HTTPS on
// 127.0.0.1 with a CA of its own, serving certificate for its Service's
// name (`<service>.<namespace>.svc`); it believes the user in the
// X-Remote-* headers only of a client certificate that chains to the
// request-header CA and carries an allowed name, both read from the
// `extension-apiserver-authentication` ConfigMap, as the sample-apiserver
// does. It serves `wardle.example.com/v1alpha1` flunders (list, get, watch)
// and `metrics.k8s.io/v1beta1` pod and node metrics, as metrics-server.

import { createServer, type Server } from 'node:https';
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { generateEcKeyPair, issueCertificate } from '../../src/pki/index.js';
import { newCa, type CertPair } from './certs.js';

export interface ProxiedCall {
  method: string;
  path: string;
  user?: string;
  groups: string[];
  extra: Record<string, string[]>;
  /** Whether the request carried the client's own credentials (it never should). */
  authorization: boolean;
}

export interface TrustSettings {
  requestHeaderCaPem: string;
  allowedNames: string[];
}

export interface TestAggregatedServer {
  port: number;
  ca: CertPair;
  caBundle: string;
  calls: ProxiedCall[];
  /** Open watch streams; `emit` sends an event on each. */
  emit(type: string, object: Record<string, unknown>): void;
  close(): Promise<void>;
}

export const wardle = { group: 'wardle.example.com', version: 'v1alpha1' };

const resourceList = (groupVersion: string, resources: Record<string, unknown>[]) => ({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources });

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startAggregatedServer(serviceName: string, namespace: string, trust: () => TrustSettings): Promise<TestAggregatedServer> {
  const ca = await newCa('aggregated server CA');
  const keys = await generateEcKeyPair();
  const cert = await issueCertificate({
    commonName: `${serviceName}.${namespace}.svc`, dnsNames: [`${serviceName}.${namespace}.svc`], ipAddresses: ['127.0.0.1'],
    usages: ['digital signature', 'key encipherment', 'server auth'],
    publicKey: keys.publicKeyPem, issuerKeyPem: ca.key, issuerCertPem: ca.cert,
  });
  const calls: ProxiedCall[] = [];
  const watchers = new Set<ServerResponse>();

  /** The user the proxy names, when its certificate is one the ConfigMap says to believe. */
  const proxiedUser = (req: IncomingMessage): ProxiedCall | undefined => {
    const peer = (req.socket as TLSSocket).getPeerX509Certificate?.();
    if (!peer) return undefined;
    const { requestHeaderCaPem, allowedNames } = trust();
    const anchors = requestHeaderCaPem.split(/(?=-----BEGIN CERTIFICATE-----)/).filter((p) => p.includes('BEGIN CERTIFICATE')).map((p) => new X509Certificate(p));
    if (!anchors.some((anchor) => peer.checkIssued(anchor) && peer.verify(anchor.publicKey))) return undefined;
    const cn = /CN=([^\n,]+)/.exec(peer.subject)?.[1] ?? '';
    if (allowedNames.length && !allowedNames.includes(cn)) return undefined;
    const header = (name: string) => { const v = req.headers[name]; return v === undefined ? [] : Array.isArray(v) ? v : [v]; };
    const extra: Record<string, string[]> = {};
    for (const name of Object.keys(req.headers)) {
      if (name.startsWith('x-remote-extra-')) extra[decodeURIComponent(name.slice('x-remote-extra-'.length))] = header(name).flatMap((v) => v.split(',').map((s) => s.trim()));
    }
    return {
      method: req.method ?? '', path: req.url ?? '', user: header('x-remote-user')[0],
      groups: header('x-remote-group').flatMap((v) => v.split(',').map((s) => s.trim())), extra,
      authorization: req.headers.authorization !== undefined,
    };
  };

  const flunder = (name: string, ns: string) => ({ apiVersion: `${wardle.group}/${wardle.version}`, kind: 'Flunder', metadata: { name, namespace: ns, resourceVersion: '7' }, spec: {} });

  const server: Server = createServer({ key: keys.privateKeyPem, cert, requestCert: true, rejectUnauthorized: false }, (req, res) => {
    const call = proxiedUser(req);
    if (!call) return send(res, 401, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    calls.push(call);
    const url = new URL(req.url ?? '/', 'https://localhost');
    const path = url.pathname;
    if (path === `/apis/${wardle.group}/${wardle.version}`) {
      return send(res, 200, resourceList(`${wardle.group}/${wardle.version}`, [
        { name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['get', 'list', 'watch', 'create'], shortNames: ['fl'] },
      ]));
    }
    if (path === '/openapi/v2') {
      return send(res, 200, {
        swagger: '2.0', info: { title: 'wardle', version: 'v0' },
        paths: { [`/apis/${wardle.group}/${wardle.version}/namespaces/{namespace}/flunders`]: { get: { operationId: 'listFlunders', responses: { 200: { description: 'OK' } } } } },
        definitions: { 'com.example.wardle.v1alpha1.Flunder': { type: 'object', properties: { spec: { type: 'object' } }, 'x-kubernetes-group-version-kind': [{ group: wardle.group, version: wardle.version, kind: 'Flunder' }] } },
      });
    }
    if (path === `/openapi/v3/apis/${wardle.group}/${wardle.version}`) {
      return send(res, 200, { openapi: '3.0.0', info: { title: 'wardle', version: 'v0' }, paths: {}, components: { schemas: {} } });
    }
    const flunders = new RegExp(`^/apis/${wardle.group.replace(/\./g, '\\.')}/${wardle.version}/namespaces/([^/]+)/flunders(?:/([^/]+))?$`).exec(path);
    if (flunders) {
      const ns = flunders[1]!;
      if (flunders[2]) return send(res, 200, flunder(flunders[2], ns));
      if (url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1') {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
        res.write(`${JSON.stringify({ type: 'ADDED', object: flunder('first', ns) })}\n`);
        watchers.add(res);
        res.on('close', () => watchers.delete(res));
        return;
      }
      return send(res, 200, { apiVersion: `${wardle.group}/${wardle.version}`, kind: 'FlunderList', metadata: { resourceVersion: '7' }, items: [flunder('first', ns), flunder('second', ns)] });
    }
    if (path === '/apis/metrics.k8s.io/v1beta1') {
      return send(res, 200, resourceList('metrics.k8s.io/v1beta1', [
        { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
        { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
      ]));
    }
    const podMetrics = /^\/apis\/metrics\.k8s\.io\/v1beta1\/namespaces\/([^/]+)\/pods$/.exec(path);
    if (podMetrics) {
      return send(res, 200, {
        kind: 'PodMetricsList', apiVersion: 'metrics.k8s.io/v1beta1', metadata: {},
        items: [{
          metadata: { name: 'web', namespace: podMetrics[1], creationTimestamp: new Date().toISOString() },
          timestamp: new Date().toISOString(), window: '10.5s',
          containers: [{ name: 'app', usage: { cpu: '250m', memory: '64Mi' } }],
        }],
      });
    }
    send(res, 404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'the server could not find the requested resource', reason: 'NotFound', code: 404 });
  });
  // An exec-style stream: the switch to an echo protocol, for a user the proxy names.
  server.on('upgrade', (req: IncomingMessage, socket: import('node:stream').Duplex, head: Buffer) => {
    const call = proxiedUser(req);
    if (!call || req.headers.upgrade !== 'echo') { socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n'); return; }
    calls.push(call);
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n');
    if (head.length) socket.write(head);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    ca, caBundle: Buffer.from(ca.cert).toString('base64'), calls,
    emit(type, object) { for (const w of watchers) w.write(`${JSON.stringify({ type, object })}\n`); },
    async close() {
      for (const w of watchers) w.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
