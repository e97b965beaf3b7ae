// Requests for an aggregated group version, authenticated and authorized
// here, forwarded to the backend as upstream's aggregator forwards them:
// over TLS with this server's proxy client certificate, the user in the
// authenticating-proxy headers (X-Remote-User, X-Remote-Group,
// X-Remote-Extra-<key>) the backend trusts through the
// extension-apiserver-authentication ConfigMap, the client's own
// credentials never passed on. Bodies stream both ways, so a watch stays
// open as long as the client and the backend keep it.

import { Agent, request, type RequestOptions } from 'node:https';
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
  agentFor(apiService: KubeObject, target: BackendTarget): Agent {
    const caBundle = typeof apiService.spec?.caBundle === 'string' ? Buffer.from(apiService.spec.caBundle, 'base64').toString('utf8') : '';
    const insecure = apiService.spec?.insecureSkipTLSVerify === true;
    const key = createHash('sha256').update(JSON.stringify([target.host, target.port, target.serverName, caBundle, insecure])).digest('hex');
    let agent = this.agents.get(key);
    if (!agent) {
      // One agent per backend setting; settings that changed leave theirs behind, so the oldest go past a bound.
      if (this.agents.size >= maxAgents) {
        const [oldest, old] = this.agents.entries().next().value as [string, Agent];
        this.agents.delete(oldest);
        old.destroy();
      }
      agent = new Agent({
        keepAlive: true, maxSockets: 64,
        cert: this.identity.certPem, key: this.identity.keyPem,
        // Without a caBundle the system's roots decide, as upstream (and a test server's own CA is not among them).
        ...(caBundle ? { ca: caBundle } : {}),
        rejectUnauthorized: !insecure,
        servername: target.serverName,
      });
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

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}
