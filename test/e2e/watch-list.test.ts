// The real kubectl reading at scale against a server on a SQLite file:
// `get -w` (table, watch events, names), `get --chunk-size` walking continue
// tokens, and `get -o wide`. Watching kubectl processes are spawned, read until
// they printed what the test expects (each wait has a deadline), then killed.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, ChildProcess } from 'node:child_process';
import { startTestServer, TestServer } from '../support/server.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
const ns = 'watch-list';
const base = `/api/v1/namespaces/${ns}/configmaps`;
const cm = (name: string, data: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

/** Every kubectl this file spawned and has not reaped yet: killed on failure too. */
const children = new Set<ChildProcess>();

before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite' });
  const r = await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  assert.equal(r.status, 201);
});
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await s.close();
});

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

/** A long-running kubectl whose output the test reads as it comes. */
class Kubectl {
  private readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  exited = false;
  private waiters: (() => void)[] = [];

  constructor(args: string[]) {
    this.child = spawn('kubectl', ['--kubeconfig', s.kubeconfigPath, ...args], {
      env: { ...process.env, KUBECONFIG: '' }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.add(this.child);
    this.child.stdout!.setEncoding('utf8').on('data', (d: string) => { this.stdout += d; this.wake(); });
    this.child.stderr!.setEncoding('utf8').on('data', (d: string) => { this.stderr += d; this.wake(); });
    this.child.on('exit', () => { this.exited = true; children.delete(this.child); this.wake(); });
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /**
   * Complete non-empty stdout lines so far (a line still being written is left out),
   * trailing spaces trimmed, without the root CA ConfigMap a controller may publish.
   */
  lines(): string[] {
    return this.stdout.split('\n').slice(0, -1).map((l) => l.trimEnd()).filter((l) => l !== '' && !l.includes(vocabulary.rootCaConfigMap));
  }

  /** Waits until `done(lines)` holds; fails with everything printed so far after `ms`. */
  async until(what: string, done: (lines: string[]) => boolean, ms = 15_000): Promise<string[]> {
    const deadline = Date.now() + ms;
    while (!done(this.lines())) {
      if (this.exited) assert.fail(`kubectl exited before ${what}:\n${this.stdout}\n${this.stderr}`);
      if (Date.now() >= deadline) assert.fail(`no ${what} within ${ms} ms:\n${this.stdout}\n${this.stderr}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => { clearTimeout(t); resolve(); });
      });
    }
    return this.lines();
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

/** Columns of a table line. */
const cols = (line: string) => line.trim().split(/\s+/);

/** Creates `name`, replaces it with two data keys, deletes it: three events. */
async function createUpdateDelete(name: string): Promise<void> {
  const created = await s.client.post(base, cm(name, { a: '1' }));
  assert.equal(created.status, 201, created.text);
  const updated = await s.client.put(`${base}/${name}`, { ...created.json, data: { a: '1', b: '2' } });
  assert.equal(updated.status, 200, updated.text);
  const deleted = await s.client.delete(`${base}/${name}`);
  assert.equal(deleted.status, 200, deleted.text);
}

test('kubectl get configmaps -w prints the listing, then a line per create, update and delete', async () => {
  assert.equal((await s.client.post(base, cm('present', { k: 'v' }))).status, 201);
  const k = new Kubectl(['-n', ns, 'get', 'configmaps', '-w']);
  try {
    // The listing comes first; the watch starts at the listing's resourceVersion,
    // so whatever the test writes from here on arrives as watch events.
    const listed = await k.until('listing', (l) => l.some((x) => cols(x)[0] === 'present'));
    assert.deepEqual(cols(listed[0]!), ['NAME', 'DATA', 'AGE']);
    assert.deepEqual(cols(listed[1]!).slice(0, 2), ['present', '1']);
    await createUpdateDelete('watched-1');
    const all = await k.until('three lines of watched-1', (l) => l.filter((x) => cols(x)[0] === 'watched-1').length >= 3);
    const rows = all.filter((x) => cols(x)[0] === 'watched-1').map((x) => cols(x).slice(0, 2));
    // Created with one key, updated to two, deleted (printed with its last state).
    assert.deepEqual(rows, [['watched-1', '1'], ['watched-1', '2'], ['watched-1', '2']]);
    assert.equal(all.filter((x) => cols(x)[0] === 'NAME').length, 1, 'one header');
    assert.equal(all.filter((x) => cols(x)[0] === 'present').length, 1, 'the listed object is not repeated');
  } finally {
    k.kill();
  }
  assert.equal(k.stderr, '', 'no errors or warnings');
});

test('kubectl get cm -w --output-watch-events shows ADDED, MODIFIED and DELETED', async () => {
  const k = new Kubectl(['-n', ns, 'get', 'cm', '-w', '--output-watch-events']);
  try {
    const listed = await k.until('listing', (l) => l.some((x) => cols(x)[1] === 'present'));
    assert.deepEqual(cols(listed[0]!), ['EVENT', 'NAME', 'DATA', 'AGE']);
    assert.deepEqual(cols(listed[1]!).slice(0, 3), ['ADDED', 'present', '1']);
    await createUpdateDelete('watched-2');
    const all = await k.until('three events of watched-2', (l) => l.filter((x) => cols(x)[1] === 'watched-2').length >= 3);
    const rows = all.filter((x) => cols(x)[1] === 'watched-2').map((x) => cols(x).slice(0, 3));
    assert.deepEqual(rows, [['ADDED', 'watched-2', '1'], ['MODIFIED', 'watched-2', '2'], ['DELETED', 'watched-2', '2']]);
  } finally {
    k.kill();
  }
  assert.equal(k.stderr, '');
});

test('kubectl get cm -w -o name prints type/name per event', async () => {
  const k = new Kubectl(['-n', ns, 'get', 'cm', '-w', '-o', 'name']);
  try {
    await k.until('listing', (l) => l.includes('configmap/present'));
    await createUpdateDelete('watched-3');
    const all = await k.until('three lines of watched-3', (l) => l.filter((x) => x === 'configmap/watched-3').length >= 3);
    assert.deepEqual(all, ['configmap/present', 'configmap/watched-3', 'configmap/watched-3', 'configmap/watched-3']);
  } finally {
    k.kill();
  }
  assert.equal(k.stderr, '');
});

test('kubectl get cm -w sees many writes in order, after a quiet start', async () => {
  const k = new Kubectl(['-n', ns, 'get', 'cm', '-w', '--output-watch-events', '-l', 'burst=yes', '-v=6']);
  try {
    // Nothing matches yet, so nothing is printed: -v=6 logs the watch request once its headers came back.
    await k.until('the watch request', () => /GET https:\S+labelSelector=burst%3Dyes\S*watch=true 200 OK/.test(k.stderr));
    const names = Array.from({ length: 10 }, (_, i) => `burst-${i}`);
    for (const n of names) {
      const r = await s.client.post(base, { ...cm(n), metadata: { name: n, labels: { burst: 'yes' } } });
      assert.equal(r.status, 201, r.text);
    }
    for (const n of names) assert.equal((await s.client.delete(`${base}/${n}`)).status, 200);
    const all = await k.until('20 events', (l) => l.filter((x) => /^(ADDED|DELETED)\s/.test(x)).length >= 20);
    const events = all.filter((x) => /^(ADDED|MODIFIED|DELETED)\s/.test(x)).map((x) => `${cols(x)[0]} ${cols(x)[1]}`);
    assert.deepEqual(events, [...names.map((n) => `ADDED ${n}`), ...names.map((n) => `DELETED ${n}`)]);
  } finally {
    k.kill();
  }
});

test('kubectl get cm NAME -w follows that one object only', async () => {
  const created = await s.client.post(base, cm('single', { a: '1' }));
  assert.equal(created.status, 201);
  const k = new Kubectl(['-n', ns, 'get', 'cm', 'single', '-w', '--output-watch-events']);
  try {
    await k.until('listing', (l) => l.some((x) => cols(x)[1] === 'single'));
    assert.equal((await s.client.post(base, cm('other'))).status, 201);
    const updated = await s.client.put(`${base}/single`, { ...created.json, data: { a: '1', b: '2', c: '3' } });
    assert.equal(updated.status, 200, updated.text);
    const all = await k.until('the update', (l) => l.some((x) => cols(x)[0] === 'MODIFIED'));
    assert.deepEqual(all.slice(1).map((x) => cols(x).slice(0, 3)), [['ADDED', 'single', '1'], ['MODIFIED', 'single', '3']]);
  } finally {
    k.kill();
  }
  for (const n of ['single', 'other']) assert.equal((await s.client.delete(`${base}/${n}`)).status, 200);
});

test('kubectl get cm --chunk-size=5 walks the continue tokens over 23 objects', async () => {
  const chunked = 'chunked';
  assert.equal((await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: chunked } })).status, 201);
  const names = Array.from({ length: 23 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
  for (const n of names) assert.equal((await s.client.post(`/api/v1/namespaces/${chunked}/configmaps`, cm(n, { i: n }))).status, 201);
  const stored = (await s.client.get(`/api/v1/namespaces/${chunked}/configmaps`)).json.items.map((i: any) => i.metadata.name);
  for (const n of names) assert.ok(stored.includes(n));

  const r = await s.kubectl(['-n', chunked, 'get', 'cm', '--chunk-size=5', '-v=6']);
  assert.equal(r.code, 0, r.stderr);
  const requests = r.stderr.split('\n').filter((l) => /GET https:\/\/\S+\/api\/v1\/namespaces\/chunked\/configmaps\?\S*limit=5\S* 200 OK/.test(l));
  const pages = Math.ceil(stored.length / 5);
  assert.equal(requests.length, pages, `one request per page of 5:\n${r.stderr}`);
  assert.equal(requests.filter((l) => /[?&]continue=/.test(l)).length, pages - 1, 'every page after the first passes a continue token');
  const printed = r.stdout.split('\n').slice(1).filter((l) => l.trim()).map((l) => cols(l)[0]);
  assert.deepEqual(printed, stored, 'every object once, in key order');
  assert.equal(cols(r.stdout.split('\n')[0]!).join(' '), 'NAME DATA AGE', 'one header for all chunks');

  // The same with a chunk size that divides nothing and with --chunk-size=0 (one request).
  const seven = await s.kubectl(['-n', chunked, 'get', 'cm', '--chunk-size=7', '-o', 'name']);
  assert.deepEqual(seven.stdout.trim().split('\n'), stored.map((n: string) => `configmap/${n}`));
  const whole = await s.kubectl(['-n', chunked, 'get', 'cm', '--chunk-size=0', '-v=6']);
  assert.equal(whole.code, 0, whole.stderr);
  assert.equal(whole.stderr.split('\n').filter((l) => /GET https:\/\/\S+\/configmaps\S* 200 OK/.test(l) && !/limit=/.test(l)).length, 1);
});

test('kubectl get cm -o wide shows the printer columns', async () => {
  const wide = 'wide';
  assert.equal((await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: wide } })).status, 201);
  for (const [n, data] of [['one', { a: '1' }], ['three', { a: '1', b: '2', c: '3' }], ['zero', {}]] as const) {
    assert.equal((await s.client.post(`/api/v1/namespaces/${wide}/configmaps`, cm(n, data))).status, 201);
  }
  const out = await ok(['-n', wide, 'get', 'cm', '-o', 'wide']);
  const lines = out.trim().split('\n');
  assert.deepEqual(cols(lines[0]!), ['NAME', 'DATA', 'AGE']);
  const rows = lines.slice(1).map((l) => cols(l)).filter((c) => c[0] !== vocabulary.rootCaConfigMap);
  assert.deepEqual(rows.map((c) => c.slice(0, 2)), [['one', '1'], ['three', '3'], ['zero', '0']]);
  for (const c of rows) assert.match(c[2]!, /^\d+s$/, 'age in seconds');
  const all = await ok(['get', 'cm', '-A', '-o', 'wide']);
  assert.deepEqual(cols(all.split('\n')[0]!), ['NAMESPACE', 'NAME', 'DATA', 'AGE']);
  assert.match(all, /^wide\s+three\s+3\s/m);
});
