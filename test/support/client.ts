// A small HTTPS client for tests: reads an admin kubeconfig and sends raw
// requests, so tests see exactly what a client would (status, headers, body).

import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { connect } from 'node:tls';
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

  /** Opens a watch stream; events arrive as parsed JSON lines. */
  watch(path: string, headers: Record<string, string> = {}): Promise<WatchStream> {
    const url = new URL(path, this.creds.server);
    return new Promise((resolve, reject) => {
      const req = request(url, { method: 'GET', agent: this.agent, headers }, (res) => {
        const stream = new WatchStream(res.statusCode ?? 0, res.headers as Response['headers'], () => req.destroy());
        let pending = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          pending += chunk;
          let nl: number;
          while ((nl = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, nl);
            pending = pending.slice(nl + 1);
            if (line.trim()) stream.push(JSON.parse(line));
          }
        });
        res.on('end', () => { if (pending.trim()) stream.push(JSON.parse(pending)); stream.finish(); });
        res.on('error', () => stream.finish());
        resolve(stream);
      });
      req.on('error', reject);
      req.end();
    });
  }

  get(path: string, headers?: Record<string, string>) { return this.send('GET', path, { headers }); }
  post(path: string, body: unknown, headers?: Record<string, string>) { return this.send('POST', path, { body, headers }); }
  put(path: string, body: unknown, headers?: Record<string, string>) { return this.send('PUT', path, { body, headers }); }
  delete(path: string, body?: unknown) { return this.send('DELETE', path, { body }); }

  /**
   * Sends bytes as they are on a fresh TLS connection (for requests Node's
   * client would not form) and parses the one HTTP answer.
   */
  raw(bytes: string | Buffer): Promise<{ status: number; head: string; json: any }> {
    const url = new URL(this.creds.server);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: url.hostname, port: Number(url.port), ca: this.creds.ca, cert: this.creds.cert, key: this.creds.key }, () => socket.end(bytes));
      const chunks: Buffer[] = [];
      socket.on('data', (c) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const split = text.indexOf('\r\n\r\n');
        const head = split < 0 ? text : text.slice(0, split);
        let json: any;
        try { json = JSON.parse(text.slice(split + 4)); } catch { json = undefined; }
        resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0), head, json });
      });
    });
  }
}

/** Events of one watch, readable in order with a deadline. */
export class WatchStream {
  readonly events: any[] = [];
  ended = false;
  private waiters: (() => void)[] = [];
  constructor(readonly status: number, readonly headers: Response['headers'], private readonly abort: () => void) {}

  push(event: any): void {
    this.events.push(event);
    this.wake();
  }

  finish(): void {
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Waits until `count` events arrived (or the stream ended), at most `ms`. */
  async waitFor(count: number, ms = 5000): Promise<any[]> {
    const deadline = Date.now() + ms;
    while (this.events.length < count && !this.ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
    return this.events;
  }

  /** Waits for the stream to end, at most `ms`. */
  async waitEnd(ms = 5000): Promise<any[]> {
    return this.waitFor(Number.MAX_SAFE_INTEGER, ms);
  }

  close(): void {
    this.abort();
  }
}
