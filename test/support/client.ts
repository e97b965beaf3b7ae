// A small HTTPS client for tests: reads an admin kubeconfig and sends raw
// requests, so tests see exactly what a client would (status, headers, body).

import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import YAML from 'yaml';

export interface Credentials {
  server: string;
  ca: string;
  cert?: string;
  key?: string;
}

export function credentialsFromKubeconfig(path: string): Credentials {
  const cfg = YAML.parse(readFileSync(path, 'utf8'));
  const b64 = (s: string | undefined) => (s ? Buffer.from(s, 'base64').toString('utf8') : undefined);
  return {
    server: cfg.clusters[0].cluster.server,
    ca: b64(cfg.clusters[0].cluster['certificate-authority-data'])!,
    cert: b64(cfg.users[0].user['client-certificate-data']),
    key: b64(cfg.users[0].user['client-key-data']),
  };
}

export interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body as received. */
  body: Buffer;
  /** The body parsed as JSON, when it is JSON. */
  json: any;
}

export interface RequestOptions {
  body?: unknown;
  /** Raw body bytes/text, sent as is. */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export class TestClient {
  private readonly agent: Agent;
  constructor(readonly creds: Credentials, anonymous = false) {
    this.agent = new Agent({
      keepAlive: true, ca: creds.ca,
      cert: anonymous ? undefined : creds.cert, key: anonymous ? undefined : creds.key,
    });
  }

  static fromKubeconfig(path: string): TestClient {
    return new TestClient(credentialsFromKubeconfig(path));
  }

  anonymous(): TestClient {
    return new TestClient(this.creds, true);
  }

  close(): void {
    this.agent.destroy();
  }

  send(method: string, path: string, opts: RequestOptions = {}): Promise<Response> {
    const url = new URL(path, this.creds.server);
    let payload: Buffer | undefined;
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.raw !== undefined) payload = Buffer.isBuffer(opts.raw) ? opts.raw : Buffer.from(opts.raw);
    else if (opts.body !== undefined) {
      payload = Buffer.from(JSON.stringify(opts.body));
      headers['Content-Type'] ??= 'application/json';
    }
    if (payload) headers['Content-Length'] = String(payload.length);
    return new Promise((resolve, reject) => {
      const req = request(url, { method, agent: this.agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          const text = body.toString('utf8');
          let json: any;
          try { json = JSON.parse(text); } catch { json = undefined; }
          resolve({ status: res.statusCode ?? 0, headers: res.headers as Response['headers'], text, body, json });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
  }

  get(path: string, headers?: Record<string, string>) { return this.send('GET', path, { headers }); }
  post(path: string, body: unknown, headers?: Record<string, string>) { return this.send('POST', path, { body, headers }); }
  put(path: string, body: unknown, headers?: Record<string, string>) { return this.send('PUT', path, { body, headers }); }
  delete(path: string, body?: unknown) { return this.send('DELETE', path, { body }); }
}
