// Requests for an aggregated group version, authenticated and authorized
// here, forwarded to the backend as upstream's aggregator forwards them:
// over TLS with this server's proxy client certificate, the user in the
// authenticating-proxy headers (X-Remote-User, X-Remote-Group,
// X-Remote-Extra-<key>) the backend trusts through the
// extension-apiserver-authentication ConfigMap, the client's own
// credentials never passed on. Bodies stream both ways, so a watch stays
// open as long as the client and the backend keep it.

import { Agent, request, type RequestOptions } from 'node:https';
import { connect, type ConnectionOptions } from 'node:tls';
import type { Duplex } from 'node:stream';
import type { IncomingMessage, ServerResponse, IncomingHttpHeaders } from 'node:http';
import { createHash } from 'node:crypto';
import type { KubeObject } from '../../api/kind.js';
import type { UserInfo } from '../../machinery/user.js';
import { errors } from '../../machinery/errors.js';
import type { BackendTarget } from './backends.js';

export interface ProxyIdentity {
  certPem: string;
  keyPem: string;
}

/** Headers of the hop, not of the message: never forwarded either way. */
const hopHeaders = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'proxy-authorization', 'proxy-authenticate']);
/** What the client sent that the backend must not take from it: its credentials, and headers only the proxy may set. */
const strippedRequestHeaders = (name: string) =>
  hopHeaders.has(name) || name === 'authorization' || name === 'host' || name.startsWith('impersonate-') || name.startsWith('x-remote-');

/** The authenticating-proxy headers naming `user` (extra keys percent-encoded, as upstream). */
export function userHeaders(user: UserInfo): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = { 'X-Remote-User': user.username };
  if (user.groups.length) headers['X-Remote-Group'] = [...user.groups];
  for (const [key, values] of Object.entries(user.extra ?? {})) {
    headers[`X-Remote-Extra-${encodeURIComponent(key)}`] = [...values];
  }
  return headers;
}

const maxAgents = 64;

export class AggregatorProxy {
  private readonly agents = new Map<string, Agent>();

  constructor(private readonly identity: ProxyIdentity) {}

  /** The TLS settings to reach `target` for `apiService`: its CA bundle and the Service's name, or no verification when it says so. */
  private tlsOptions(apiService: KubeObject, target: BackendTarget): ConnectionOptions {
    const caBundle = typeof apiService.spec?.caBundle === 'string' ? Buffer.from(apiService.spec.caBundle, 'base64').toString('utf8') : '';
    return {
      cert: this.identity.certPem, key: this.identity.keyPem,
      // Without a caBundle the system's roots decide, as upstream (and a test server's own CA is not among them).
      ...(caBundle ? { ca: caBundle } : {}),
      rejectUnauthorized: apiService.spec?.insecureSkipTLSVerify !== true,
      servername: target.serverName,
    };
  }

  agentFor(apiService: KubeObject, target: BackendTarget): Agent {
    const tls = this.tlsOptions(apiService, target);
    const key = createHash('sha256').update(JSON.stringify([target.host, target.port, tls.servername, tls.ca ?? '', tls.rejectUnauthorized])).digest('hex');
    let agent = this.agents.get(key);
    if (!agent) {
      // One agent per backend setting; settings that changed leave theirs behind, so the oldest go past a bound.
      if (this.agents.size >= maxAgents) {
        const [oldest, old] = this.agents.entries().next().value as [string, Agent];
        this.agents.delete(oldest);
        old.destroy();
      }
      agent = new Agent({ keepAlive: true, maxSockets: 64, ...tls });
      this.agents.set(key, agent);
    }
    return agent;
  }

  /** A request of this server's own to the backend (discovery, availability probes), answered as its status and body. */
  fetch(apiService: KubeObject, target: BackendTarget, path: string, timeoutMs: number, user?: UserInfo): Promise<{ status: number; body: Buffer; contentType?: string }> {
    return new Promise((resolve, reject) => {
      const options: RequestOptions = {
        host: target.host, port: target.port, path, method: 'GET', agent: this.agentFor(apiService, target),
        headers: { Accept: 'application/json', ...(user ? userHeaders(user) : {}) }, timeout: timeoutMs,
      };
      const req = request(options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), contentType: res.headers['content-type'] }));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end();
    });
  }

  /**
   * Forwards the client's request (method, path, query, body) as `user` and
   * streams the backend's answer back. Resolves when the exchange ends; a
   * failure before the answer began is thrown for the caller's Status.
   */
  forward(req: IncomingMessage, res: ServerResponse, apiService: KubeObject, target: BackendTarget, user: UserInfo): Promise<void> {
    const headers: IncomingHttpHeaders & Record<string, string | string[] | undefined> = {};
    for (const [name, value] of Object.entries(req.headers)) if (!strippedRequestHeaders(name)) headers[name] = value;
    Object.assign(headers, userHeaders(user));
    return new Promise((resolve, reject) => {
      let answered = false;
      const upstream = request({
        host: target.host, port: target.port, path: req.url, method: req.method, headers, agent: this.agentFor(apiService, target),
      }, (answer) => {
        answered = true;
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(answer.headers)) if (value !== undefined && !hopHeaders.has(name)) out[name] = value;
        res.writeHead(answer.statusCode ?? 502, out);
        // A watch's events reach the client as they come.
        res.flushHeaders();
        answer.on('data', (chunk: Buffer) => res.write(chunk));
        answer.on('end', () => { res.end(); resolve(); });
        answer.on('error', () => { res.destroy(); resolve(); });
      });
      // The client gone, the backend's stream is closed too.
      res.on('close', () => { if (!res.writableFinished) upstream.destroy(); });
      upstream.on('error', (e) => {
        if (answered) { res.destroy(); resolve(); return; }
        reject(errors.serviceUnavailable(`error trying to reach service: ${e.message}`));
      });
      req.pipe(upstream);
    });
  }

  /**
   * Takes over an upgrade request's connection (exec-style streams): the
   * request head goes to the backend as the client sent it, as `user` and
   * without its credentials, then bytes flow both ways untouched, the
   * backend's answer (101 or a refusal) included. Fails, before anything is
   * sent to the client, when the backend cannot be reached.
   */
  upgrade(req: IncomingMessage, client: { socket: Duplex; head: Buffer }, apiService: KubeObject, target: BackendTarget, user: UserInfo): Promise<void> {
    const lines = [`${req.method} ${req.url} HTTP/1.1`, `Host: ${target.serverName}`];
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i]!;
      const lower = name.toLowerCase();
      // The switch itself is what is asked for: Connection and Upgrade go on.
      if (lower !== 'connection' && lower !== 'upgrade' && strippedRequestHeaders(lower)) continue;
      lines.push(`${name}: ${req.rawHeaders[i + 1]}`);
    }
    for (const [name, value] of Object.entries(userHeaders(user))) for (const v of [value].flat()) lines.push(`${name}: ${v}`);
    return new Promise((resolve, reject) => {
      const backend = connect({ host: target.host, port: target.port, ...this.tlsOptions(apiService, target) });
      let connected = false;
      backend.once('secureConnect', () => {
        connected = true;
        backend.write(`${lines.join('\r\n')}\r\n\r\n`);
        if (client.head.length) backend.write(client.head);
        backend.pipe(client.socket);
        client.socket.pipe(backend);
        const close = () => { backend.destroy(); client.socket.destroy(); };
        backend.on('close', close);
        client.socket.on('close', close);
        client.socket.on('error', close);
        resolve();
      });
      backend.on('error', (e) => {
        if (connected) { client.socket.destroy(); return; }
        reject(errors.serviceUnavailable(`error trying to reach service: ${e.message}`));
      });
    });
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
