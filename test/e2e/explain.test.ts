// kubectl against a real server: explain reads the OpenAPI v3 documents (and,
// with the v2 template, the protobuf v2 document); create and apply fetch the
// v3 document of the group version to decide on server-side field validation
// and to compute strategic-merge patches. The -v=6 log shows every URL fetched.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startServer } from '../../src/apiserver/start.js';
import { testControllers } from '../support/server.js';
import { namespaces, secrets, serviceAccounts } from '../../src/api/core/v1/index.js';
import { resolve, type Schema } from '../../src/api/schema.js';

const run = promisify(execFile);
let dir: string;
let server: Awaited<ReturnType<typeof startServer>>;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'explain-e2e-'));
  // testControllers: no token controller adding its secret to the account's `secrets` this test merges.
  server = await startServer({ securePort: 0, storageBackend: 'memory', dataDir: join(dir, 'data'), logLevel: 'silent', controllers: testControllers });
});

after(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Runs kubectl with its own, initially empty HTTP cache so that every document is really fetched. */
async function kubectl(args: string[], cache = 'cache'): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run('kubectl', ['--kubeconfig', server.kubeconfigPath, '--cache-dir', join(dir, cache), ...args],
      { encoding: 'utf8', timeout: 60_000 });
  } catch (e: any) {
    assert.fail(`kubectl ${args.join(' ')} failed: ${e.stderr || e.message}`);
  }
}

/** The description of a field of a kind's schema, as declared. */
function describe(schema: Schema, path: string[]): string {
  let s = schema;
  for (const p of path) s = resolve(s).properties![p];
  return s.description!;
}

/** kubectl wraps descriptions at 80 columns; compare on single spaces. */
const flat = (text: string) => text.replace(/\s+/g, ' ');

test('explain a list field shows its type, description and the fields of its items', async () => {
  const { stdout } = await kubectl(['explain', 'serviceaccount.secrets']);
  assert.match(stdout, /KIND:\s+ServiceAccount/);
  assert.match(stdout, /VERSION:\s+v1/);
  assert.match(stdout, /FIELD: secrets <\[\]ObjectReference>/);
  assert.ok(flat(stdout).includes(describe(serviceAccounts.schema, ['secrets'])));
  for (const field of ['apiVersion', 'fieldPath', 'kind', 'name', 'namespace', 'resourceVersion', 'uid']) {
    assert.match(stdout, new RegExp(`^\\s+${field}\\s+<string>`, 'm'), field);
  }
});

test('explain --recursive lists every field, nested ones too', async () => {
  const { stdout } = await kubectl(['explain', 'secrets', '--recursive']);
  assert.match(stdout, /KIND:\s+Secret/);
  assert.ok(flat(stdout).includes(secrets.schema.description!));
  for (const line of [/^ {2}data\s+<map\[string\]string>/m, /^ {2}stringData\s+<map\[string\]string>/m, /^ {2}type\s+<string>/m,
    /^ {2}immutable\s+<boolean>/m, /^ {2}metadata\s+<ObjectMeta>/m, /^ {4}annotations\s+<map\[string\]string>/m,
    /^ {4}ownerReferences\s+<\[\]OwnerReference>/m, /^ {6}uid\s+<string> -required-/m]) {
    assert.match(stdout, line);
  }
});

test('explain a nested scalar shows its enum and description', async () => {
  const { stdout } = await kubectl(['explain', 'namespaces.status.phase']);
  assert.match(stdout, /KIND:\s+Namespace/);
  assert.match(stdout, /FIELD: phase <string>/);
  assert.match(stdout, /ENUM:\s+Active\s+Terminating/);
  assert.ok(flat(stdout).includes(describe(namespaces.schema, ['status', 'phase'])));
});

test('explain with the v2 template reads the protobuf v2 document', async () => {
  const { stdout, stderr } = await kubectl(['explain', '--output=plaintext-openapiv2', 'serviceaccount.secrets', '-v=6']);
  assert.match(stderr, /GET https:\/\/[^ ]+\/openapi\/v2\?timeout=\d+s 200 OK/);
  assert.match(stdout, /RESOURCE: secrets <\[\]Object>/);
  assert.ok(flat(stdout).includes(describe(serviceAccounts.schema, ['secrets'])));
});

/** `GET <url> <code> <text>` lines of kubectl's -v=6 log for OpenAPI documents. */
function openapiFetches(log: string): { url: string; status: number }[] {
  return [...log.matchAll(/round_trippers\.go:\d+\] GET (https:\/\/\S+\/openapi\/\S+) (\d{3}) /g)]
    .map((m) => ({ url: new URL(m[1]).pathname + new URL(m[1]).search.replace(/&?timeout=\d+s/, '').replace(/\?$/, ''), status: Number(m[2]) }));
}

const manifest = (secretNames: string[]) => [
  'apiVersion: v1', 'kind: ServiceAccount', 'metadata:', '  name: robot', '  namespace: default', 'secrets:',
  ...secretNames.map((n) => `- name: ${n}`), '',
].join('\n');

test('create -f fetches the v3 documents, every fetch succeeds, and validation is left to the server', async () => {
  const file = join(dir, 'sa.yaml');
  await writeFile(file, manifest(['one']));
  const created = await kubectl(['create', '-f', file, '-v=6'], 'cache-write');
  assert.match(created.stdout, /serviceaccount\/robot created/);
  const fetches = openapiFetches(created.stderr);
  assert.deepEqual(fetches.map((f) => f.url.replace(/hash=[0-9A-F]{128}$/, 'hash=H')), ['/openapi/v3', '/openapi/v3/api/v1?hash=H']);
  for (const f of fetches) assert.equal(f.status, 200, f.url);
  assert.doesNotMatch(created.stderr, /openapi\/v2/, 'no fallback to the v2 document');
  // The v3 PATCH operation of the kind takes fieldValidation, so kubectl asks the server to validate.
  assert.match(created.stderr, /POST https:\/\/\S+\/api\/v1\/namespaces\/default\/serviceaccounts\?fieldManager=kubectl-create&fieldValidation=Strict 201 /);
});

/** The verbs discovery lists for service accounts; apply needs `patch`. */
async function serviceAccountVerbs(): Promise<string[]> {
  const { stdout } = await kubectl(['get', '--raw', '/api/v1'], 'cache-write');
  const list = JSON.parse(stdout) as { resources: { name: string; verbs: string[] }[] };
  return list.resources.find((r) => r.name === 'serviceaccounts')?.verbs ?? [];
}

test('apply -f computes a strategic-merge patch from the v3 document', async () => {
  // A verb missing from discovery is a bug to report, not a reason to skip.
  const verbs = await serviceAccountVerbs();
  assert.ok(verbs.includes('patch'), `discovery lists patch for serviceaccounts, got ${JSON.stringify(verbs)}`);
  const file = join(dir, 'sa-2.yaml');
  await writeFile(file, manifest(['two', 'one']));
  const applied = await kubectl(['apply', '-f', file, '-v=6'], 'cache-write');
  assert.match(applied.stdout, /serviceaccount\/robot configured/);
  for (const f of openapiFetches(applied.stderr)) {
    assert.ok(f.status === 200 || f.status === 304, `${f.url} answered ${f.status}`);
    assert.ok(f.url.startsWith('/openapi/v3'), `unexpected fetch of ${f.url}`);
  }
  assert.doesNotMatch(applied.stderr, /openapi\/v2/, 'no fallback to the v2 document');
  assert.match(applied.stderr, /PATCH https:\/\/\S+\/serviceaccounts\/robot\?fieldManager=kubectl-client-side-apply&fieldValidation=Strict 200 /);

  const { stdout } = await kubectl(['get', 'serviceaccount', 'robot', '-o', 'jsonpath={.secrets[*].name}'], 'cache-write');
  // secrets merge on name: the patch adds `two` and keeps `one`, in the order of the manifest.
  assert.equal(stdout, 'two one');
});
