// What an operator finds in the log at the default level: every answer of
// 5xx, with its audit ID, method, path and what failed (never the body nor
// the credentials of the request), and every panic recovered, with its stack.
// The app is built with createApp from parts of the test's own (a handler
// that fails as asked, a health check that fails) and the server's logger.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { builtinKinds } from '../../src/api/catalog.js';
import { UnionAuthenticator } from '../../src/auth/authn/authenticator.js';
import { X509Authenticator } from '../../src/auth/authn/x509.js';
import { errors } from '../../src/machinery/errors.js';
import { ensureKeyMaterial } from '../../src/pki/index.js';
import { Registry } from '../../src/registry/registry.js';
import { createApp } from '../../src/server/app.js';
import { Health } from '../../src/server/health.js';
import { createLogger } from '../../src/server/logging.js';
import { defaultServerOptions } from '../../src/server/options.js';
import { MemoryBackend } from '../../src/storage/memory/store.js';
import { TestClient } from '../support/client.js';
import { assertStatus } from '../support/hostile.js';
import { tempDir } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { whoAmIBody, whoAmIPath, whoAmIRest } from '../support/whoami.js';

let dir: string;
let server: Server;
let backend: MemoryBackend;
let admin: TestClient;
const logLines: string[] = [];
let ready = true;

before(async () => {
  dir = tempDir('ops-logging-');
  const keys = await ensureKeyMaterial(dir, { serviceAccountKeyFiles: [] });
  backend = new MemoryBackend();
  const registry = new Registry(builtinKinds, backend);
  registry.addRest(whoAmIRest((review) => {
    const name = review.metadata?.name ?? '';
    if (name === 'unavailable') throw errors.serviceUnavailable('the store is away');
    if (name === 'explode') throw new TypeError('handler exploded');
  }));
  const health = new Health();
  health.add({ name: 'store', check: () => { if (!ready) throw new Error('not yet'); } });
  // The server's own logger, at the server's default level, in JSON to read it back.
  const log = createLogger({ level: defaultServerOptions.logLevel, format: 'json', destination: { write: (line: string) => logLines.push(line) } });
  const app = createApp({
    registry, health, log, packageVersion: '0.0.0-test', serverAddress: () => '127.0.0.1',
    authenticator: new UnionAuthenticator([new X509Authenticator()], { anonymous: true }),
    authorizer: { name: 'all', authorize: () => ({ decision: 'allow', reason: '' }) },
  });
  server = createServer({ key: keys.servingKeyPem, cert: keys.servingCertPem, ca: keys.clientCaPem, requestCert: true, rejectUnauthorized: false }, app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  admin = new TestClient({ server: url, ca: keys.caCertPem, cert: keys.adminCertPem, key: keys.adminKeyPem });
});

after(async () => {
  admin.close();
  await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The log lines written for what `fn` asked (a line is written once its answer is done, which the client may see first). */
async function loggedDuring(fn: () => Promise<void>): Promise<Record<string, any>[]> {
  const before = logLines.length;
  await fn();
  await eventually('a log line', async () => logLines.length > before);
  return logLines.slice(before).map((l) => JSON.parse(l));
}

test('a 503 answered to a client is a warning with its audit ID, method, path, reason and message, and nothing of the body', async () => {
  let auditID = '';
  const logged = await loggedDuring(async () => {
    const r = await admin.post(whoAmIPath, { ...whoAmIBody, metadata: { name: 'unavailable', annotations: { secret: 's3cr3t-body' } } });
    assertStatus(r, 503, 'ServiceUnavailable');
    auditID = r.headers['audit-id'] as string;
  });
  assert.equal(logged.length, 1, JSON.stringify(logged));
  const [line] = logged;
  assert.equal(line!.level, 40);
  assert.equal(line!.msg, 'request answered with a server error');
  assert.deepEqual({ ...line, time: undefined, level: undefined, msg: undefined }, {
    time: undefined, level: undefined, msg: undefined,
    auditID, method: 'POST', path: whoAmIPath, status: 503, reason: 'ServiceUnavailable', err: 'the store is away',
  });
  assert.doesNotMatch(JSON.stringify(logged), /s3cr3t-body|BEGIN|PRIVATE/);
});

test('a panic recovered is one error line with its audit ID, method, path and stack; no second warning', async () => {
  let auditID = '';
  const logged = await loggedDuring(async () => {
    const r = await admin.post(whoAmIPath, { ...whoAmIBody, metadata: { name: 'explode' } });
    assertStatus(r, 500, 'InternalError');
    auditID = r.headers['audit-id'] as string;
  });
  assert.equal(logged.length, 1, JSON.stringify(logged));
  assert.equal(logged[0]!.level, 50);
  assert.equal(logged[0]!.auditID, auditID);
  assert.equal(logged[0]!.method, 'POST');
  assert.equal(logged[0]!.path, whoAmIPath);
  assert.match(logged[0]!.err.stack, /TypeError: handler exploded/);
});

test('a 5xx that is not a thrown failure (a failed health check) is logged too; answers below 500 are not', async () => {
  ready = false;
  try {
    const logged = await loggedDuring(async () => {
      assert.equal((await admin.get('/readyz')).status, 500);
      assertStatus(await admin.get('/api/v1/namespaces/default/configmaps/none'), 404, 'NotFound');
      assert.equal((await admin.post(whoAmIPath, { ...whoAmIBody, metadata: { name: 'fine' } })).status, 201);
    });
    assert.equal(logged.length, 1, JSON.stringify(logged));
    assert.equal(logged[0]!.level, 40);
    assert.equal(logged[0]!.status, 500);
    assert.equal(logged[0]!.path, '/readyz');
    assert.match(logged[0]!.auditID, /^[0-9a-f-]{36}$/);
  } finally {
    ready = true;
  }
});
