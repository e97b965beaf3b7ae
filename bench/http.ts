// One JSON request over a keep-alive HTTPS agent (which carries the admin
// certificate): status and body, with a deadline.

import { Agent, request } from 'node:https';

export interface Reply {
  status: number;
  body: Buffer;
}

export function sendJson(agent: Agent, port: number, method: string, path: string, body: unknown, timeoutMs: number, extraHeaders?: Record<string, string>): Promise<Reply> {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const headers: Record<string, string> = { Accept: 'application/json', ...extraHeaders };
  if (payload) {
    headers['Content-Type'] = extraHeaders?.['Content-Type'] ?? 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path} timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}
