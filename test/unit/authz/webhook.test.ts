// The webhook authorizer when its webhook cannot answer: no opinion, with the
// failure as evaluation error, and a log line saying why (nothing cached).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { WebhookAuthorizer } from '../../../src/auth/authz/webhook.js';

/** A port nothing listens on: one a server held a moment ago. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('a webhook that cannot be reached is no opinion, logged with its reason, and asked again next time', async () => {
  const logged: { message: string; extra: Record<string, unknown> }[] = [];
  const authorizer = new WebhookAuthorizer({
    endpoint: { server: `https://127.0.0.1:${await closedPort()}/authorize` }, version: 'v1',
    authorizedTtlMs: 60_000, unauthorizedTtlMs: 60_000, timeoutMs: 2_000,
    log: (message, extra) => logged.push({ message, extra: extra as Record<string, unknown> }),
  });
  const attrs = { user: { username: 'jane', groups: [] }, verb: 'get', isResourceRequest: true, apiGroup: '', apiVersion: 'v1', resource: 'pods', namespace: 'ns', path: '/api/v1/namespaces/ns/pods' };
  for (let i = 1; i <= 2; i++) {
    const d = await authorizer.authorize(attrs as never);
    assert.equal(d.decision, 'no-opinion');
    assert.match(d.evaluationError ?? '', /^error contacting the authorization webhook: .*ECONNREFUSED/);
    assert.equal(logged.length, i, 'failures are not cached: each request asks and logs again');
  }
  assert.equal(logged[0]!.message, 'authorization webhook failed; no opinion');
  assert.equal(logged[0]!.extra.user, 'jane');
  assert.match(String(logged[0]!.extra.err), /ECONNREFUSED/);
});
