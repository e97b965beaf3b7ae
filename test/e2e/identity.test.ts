// Identity with the real kubectl against a real server on a SQLite file:
// `kubectl create token` gives a token that `kubectl --token` uses and
// `kubectl auth whoami` names; TokenReviews by `kubectl create -f`; a token
// dies with its account; a token secret made by hand is filled in and works;
// an expired token is refused; --as, --as-group and --as-uid impersonate; a
// garbage token is a 401 even with anonymous requests on.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { kubectlWhoami, runKubectl, startTestServer, writeBareKubeconfig, tempDir, type TestServer, cliPath } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { product, vocabulary } from '../../src/machinery/vocabulary.js';
import { boundTokenClaims } from '../../src/machinery/serviceaccount.js';
import { createTokenSigner } from '../../src/pki/index.js';

let s: TestServer;
/** A kubeconfig with the cluster only: the credential comes from --token, or there is none. */
let bareConfig: string;
const ns = 'ident';

before(async () => {
  // Authentication is under test, not authorization: every authenticated identity may act (AlwaysAllow), anonymous requests too.
  s = await startTestServer({ storageBackend: 'sqlite', controllers: ['*'], anonymousAuth: true, authorizationMode: ['AlwaysAllow'] });
  bareConfig = writeBareKubeconfig(s);
  await ok(['create', 'namespace', ns]);
  await ok(['-n', ns, 'create', 'serviceaccount', 'robot']);
});

after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);


function reviewManifest(token: string, audiences: string[]): string {
  return YAML.stringify({ apiVersion: `${vocabulary.authenticationGroup}/v1`, kind: 'TokenReview', spec: { token, audiences } });
}

test('kubectl create token gives a token kubectl --token uses, named by kubectl auth whoami', async () => {
  const token = (await ok(['-n', ns, 'create', 'token', 'robot'])).trim();
  const me = await kubectlWhoami(bareConfig, token);
  assert.equal(me.username, `system:serviceaccount:${ns}:robot`);
  assert.deepEqual(me.groups, ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated']);
  assert.match(me.extra[`${vocabulary.authenticationGroup}/credential-id`][0], /^JTI=/);
  const table = await runKubectl(bareConfig, ['--token', token, 'auth', 'whoami']);
  assert.match(table.stdout, new RegExp(`^Username\\s+system:serviceaccount:${ns}:robot$`, 'm'));
  const listed = await runKubectl(bareConfig, ['--token', token, '-n', ns, 'get', 'serviceaccounts', '-o', 'name']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^serviceaccount\/robot$/m);
});

test('a TokenReview accepts the token for its audience and refuses it for another', async () => {
  const token = (await ok(['-n', ns, 'create', 'token', 'robot', '--audience', 'vault', '--duration', '20m'])).trim();
  // --validate=false: kubectl's client-side validation of a kind without PATCH asks the CRD API, not served yet.
  const yes = JSON.parse(await ok(['create', '-f', '-', '--validate=false', '-o', 'json'], reviewManifest(token, ['vault'])));
  assert.equal(yes.status.authenticated, true);
  assert.deepEqual(yes.status.audiences, ['vault']);
  assert.equal(yes.status.user.username, `system:serviceaccount:${ns}:robot`);
  const no = JSON.parse(await ok(['create', '-f', '-', '--validate=false', '-o', 'json'], reviewManifest(token, ['mail'])));
  assert.equal(no.status.authenticated, false);
  assert.match(no.status.error, /token audiences \["vault"\] is invalid for the target audiences \["mail"\]/);
  assert.equal(await kubectlWhoami(bareConfig, token), undefined, 'a token for vault does not open this server');
});

test('a token stops working when its account is deleted and recreated', async () => {
  await ok(['-n', ns, 'create', 'serviceaccount', 'ephemeral']);
  const token = (await ok(['-n', ns, 'create', 'token', 'ephemeral'])).trim();
  assert.equal((await kubectlWhoami(bareConfig, token)).username, `system:serviceaccount:${ns}:ephemeral`);
  await ok(['-n', ns, 'delete', 'serviceaccount', 'ephemeral']);
  await ok(['-n', ns, 'create', 'serviceaccount', 'ephemeral']);
  assert.equal(await kubectlWhoami(bareConfig, token), undefined);
  const review = JSON.parse(await ok(['create', '-f', '-', '--validate=false', '-o', 'json'], reviewManifest(token, [])));
  assert.match(review.status.error, /^service account UID \(.+\) does not match claim \(.+\)$/);
});

test('a token secret made by hand is filled in by the token controller, and its token works', async () => {
  await ok(['-n', ns, 'apply', '-f', '-'], YAML.stringify({
    apiVersion: 'v1', kind: 'Secret', type: vocabulary.serviceAccountTokenSecretType,
    metadata: { name: 'robot-legacy', annotations: { [vocabulary.serviceAccountNameAnnotation]: 'robot' } },
  }));
  const token = await eventually('the token filled in', async () => {
    const data = (await s.kubectl(['-n', ns, 'get', 'secret', 'robot-legacy', '-o', 'jsonpath={.data.token}'])).stdout;
    return data ? Buffer.from(data, 'base64').toString('utf8') : undefined;
  });
  assert.equal((await kubectlWhoami(bareConfig, token)).username, `system:serviceaccount:${ns}:robot`);
  const ca = Buffer.from((await ok(['-n', ns, 'get', 'secret', 'robot-legacy', '-o', 'jsonpath={.data.ca\\.crt}'])), 'base64').toString();
  assert.match(ca, /BEGIN CERTIFICATE/);
  // The account also got one of its own, listed in its secrets, and every namespace the root CA.
  const listed = await eventually('a token secret listed by robot', async () => (await s.kubectl(['-n', ns, 'get', 'sa', 'robot', '-o', 'jsonpath={.secrets[*].name}'])).stdout || undefined);
  assert.match(listed, /robot-token-/);
  await eventually('the root CA ConfigMap', async () => (await s.kubectl(['-n', ns, 'get', 'configmap', vocabulary.rootCaConfigMap])).code === 0);
});

test('an expired token is refused', async () => {
  const uid = (await ok(['-n', ns, 'get', 'sa', 'robot', '-o', 'jsonpath={.metadata.uid}'])).trim();
  const signer = await createTokenSigner(readFileSync(join(s.dataDir, 'pki', 'sa.key'), 'utf8'), `https://${product.name}.default.svc.cluster.local`);
  const sign = (now: number) => signer.sign(boundTokenClaims({
    namespace: ns, account: { name: 'robot', uid }, audiences: [`https://${product.name}.default.svc.cluster.local`], lifetimeSeconds: 600, now, id: `e2e-${now}`,
  }));
  assert.equal(await kubectlWhoami(bareConfig, await sign(Date.now() - 3600_000)), undefined);
  assert.equal((await kubectlWhoami(bareConfig, await sign(Date.now()))).username, `system:serviceaccount:${ns}:robot`, 'the same token, still valid, works');
});

test('--as, --as-group and --as-uid change who the server sees', async () => {
  const me = JSON.parse(await ok(['auth', 'whoami', '--as', 'jane', '--as-group', 'devs', '--as-group', 'ops', '--as-uid', '42', '-o', 'json'])).status.userInfo;
  assert.deepEqual(me, { username: 'jane', uid: '42', groups: ['devs', 'ops', 'system:authenticated'] });
  const sa = JSON.parse(await ok(['auth', 'whoami', '--as', `system:serviceaccount:${ns}:robot`, '-o', 'json'])).status.userInfo;
  assert.deepEqual(sa.groups, ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated']);
  assert.equal(JSON.parse(await ok(['auth', 'whoami', '-o', 'json'])).status.userInfo.username, 'admin');
});

test('a garbage bearer token answers 401 even with anonymous requests on', async () => {
  const r = await runKubectl(bareConfig, ['--token', 'garbage', 'get', '--raw', '/api/v1/namespaces', '-v=6']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /GET https:\S+\/api\/v1\/namespaces 401 Unauthorized/);
  assert.match(r.stderr, /You must be logged in to the server \(Unauthorized\)/);
  // kubectl prompts for a password when it has no credential at all; a plain client shows the anonymous side.
  const anonymous = s.client.anonymous();
  try {
    assert.equal((await anonymous.get('/api/v1/namespaces')).status, 200);
  } finally {
    anonymous.close();
  }
});

test('a malformed --token-auth-file stops the start with a message naming the line', async () => {
  const dir = tempDir();
  const file = join(dir, 'tokens.csv');
  writeFileSync(file, 't1,alice,u1\nt2,bob\n');
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(process.execPath, [cliPath, '--secure-port', '0', '--data-dir', join(dir, 'data'), '--token-auth-file', file], { timeout: 30_000 }, (err, _out, stderr) => {
      resolve({ code: err ? Number((err as { code?: unknown }).code) : 0, stderr });
    });
  });
  assert.equal(result.code, 1);
  assert.equal(result.stderr.trim(), `${product.name}-apiserver: token file '${file}' must have at least 3 columns (token, user name, user uid), found 2 on line 2`);
});
