// /metrics after a scripted sequence, parsed with a strict Prometheus text
// parser: request counts, durations and sizes under upstream's names and
// labels, long-running requests and watchers while a watch is open, watch
// events, stored objects, storage call latencies, and no label value taken
// from a resource the server does not serve; the dry_run label as upstream,
// and promtool's lint is clean.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { startTestServer, type TestServer } from '../support/server.js';
import { parsePrometheusText, samples, value } from '../support/prometheus.js';

let s: TestServer;
before(async () => { s = await startTestServer(); });
after(async () => { await s.close(); });

const cms = '/api/v1/namespaces/default/configmaps';
const labels = (verb: string, resource: string, scope: string, extra: Record<string, string> = {}) =>
  ({ verb, group: '', version: 'v1', resource, subresource: '', scope, component: 'apiserver', ...extra });
/** apiserver_request_total and _duration_seconds carry dry_run as well, as upstream. */
const requestLabels = (verb: string, resource: string, scope: string, dryRun = '') => labels(verb, resource, scope, { dry_run: dryRun });

async function scrape() {
  const r = await s.client.get('/metrics');
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(r.text);
}

test('the parser refuses malformed text', () => {
  assert.throws(() => parsePrometheusText('x_total 1\n'), /no declared family/);
  assert.throws(() => parsePrometheusText('# TYPE x counter\nx{a="b} 1\n'), /unterminated/);
  assert.throws(() => parsePrometheusText('# TYPE x counter\nx{a="b"} one\n'), /bad value/);
  assert.throws(() => parsePrometheusText('# TYPE x histogram\nx_bucket 1\n'), /without le/);
  assert.equal(value(parsePrometheusText('# TYPE x counter\nx{a="q\\"\\n"} 2\n'), 'x', { a: 'q"\n' }), 2);
});

test('a scripted sequence shows in the request, watch and storage metrics', async () => {
  const watch = await s.client.watch(`${cms}?watch=true`);
  assert.equal(watch.status, 200);
  for (const name of ['m1', 'm2']) {
    assert.equal((await s.client.post(cms, { metadata: { name }, data: { k: 'v' } })).status, 201);
  }
  assert.equal((await s.client.get(`${cms}/m1`)).status, 200);
  assert.equal((await s.client.get(`${cms}/missing`)).status, 404);
  assert.equal((await s.client.get(cms)).status, 200);
  assert.equal((await s.client.get('/api/v1/configmaps')).status, 200);
  // Unknown resources and paths never become label values.
  assert.equal((await s.client.get('/api/v1/namespaces/default/nosuchthings-x1')).status, 404);
  assert.equal((await s.client.get('/apis/made.up.example/v1/widgets-x2')).status, 404);
  assert.equal((await s.client.get('/some/random/path-x3')).status, 404);
  await watch.waitFor(2);

  const m = await scrape();
  const total = 'apiserver_request_total';
  assert.ok(value(m, total, { ...requestLabels('POST', 'configmaps', 'resource'), code: '201' })! >= 2);
  assert.equal(value(m, total, { ...requestLabels('GET', 'configmaps', 'resource'), code: '200' }), 1);
  assert.equal(value(m, total, { ...requestLabels('GET', 'configmaps', 'resource'), code: '404' }), 1);
  assert.equal(value(m, total, { ...requestLabels('LIST', 'configmaps', 'namespace'), code: '200' }), 1);
  assert.equal(value(m, total, { ...requestLabels('LIST', 'configmaps', 'cluster'), code: '200' }), 1);
  for (const family of m.values()) {
    for (const sample of family.samples) {
      const text = JSON.stringify(sample.labels);
      assert.ok(!/nosuchthings|made\.up|widgets|random|path-x3/.test(text), `${sample.name} ${text}`);
    }
  }
  assert.ok(samples(m, total, { resource: '', group: '', subresource: '', code: '404' }).length >= 1, 'unknown requests are counted without their names');

  const getLabels = labels('GET', 'configmaps', 'resource');
  assert.equal(value(m, 'apiserver_request_duration_seconds_count', requestLabels('GET', 'configmaps', 'resource')), 2);
  assert.equal(value(m, 'apiserver_request_duration_seconds_bucket', { ...requestLabels('GET', 'configmaps', 'resource'), le: '+Inf' }), 2);
  assert.equal(value(m, 'apiserver_response_sizes_count', getLabels), 2);
  assert.ok(value(m, 'apiserver_response_sizes_sum', getLabels)! > 0);

  const watchLabels = labels('WATCH', 'configmaps', 'namespace');
  assert.equal(value(m, 'apiserver_longrunning_requests', watchLabels), 1);
  assert.equal(value(m, 'apiserver_registered_watchers', { group: '', version: 'v1', kind: 'ConfigMap' }), 1);
  assert.ok(value(m, 'apiserver_watch_events_total', { group: '', version: 'v1', kind: 'ConfigMap' })! >= 2);
  // The two created here, beside what the server keeps itself (cluster-info in the public namespace).
  const stored = JSON.parse((await s.client.get('/api/v1/configmaps')).text).items.length;
  assert.ok(stored >= 2);
  assert.equal(value(m, 'apiserver_storage_objects', { resource: 'configmaps' }), stored);
  assert.equal(value(m, 'apiserver_storage_objects', { resource: 'namespaces' }), 3, 'the reserved namespaces');
  assert.ok(value(m, 'etcd_request_duration_seconds_count', { operation: 'create', type: 'configmaps' })! >= 2);
  assert.ok(value(m, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' }) !== undefined);
  assert.ok(value(m, 'apiserver_current_inflight_requests', { request_kind: 'mutating' }) !== undefined);
  // Health and /metrics itself are counted by path.
  assert.equal(m.get('apiserver_request_total')!.type, 'counter');
  assert.equal(m.get('apiserver_request_duration_seconds')!.type, 'histogram');

  watch.close();
  await watch.waitEnd();
  await waitUntil(async () => value(await scrape(), 'apiserver_registered_watchers', { group: '', version: 'v1', kind: 'ConfigMap' }) === 0);
  const after = await scrape();
  assert.equal(value(after, 'apiserver_longrunning_requests', watchLabels), 0);
  assert.ok(value(after, 'apiserver_request_total', { verb: 'GET', group: '', version: '', resource: '', subresource: '/metrics', scope: '', component: 'apiserver', dry_run: '', code: '200' })! >= 1);
});

async function waitUntil(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition never held');
}

test('dry_run labels requests as upstream: All, invalid for unknown values, empty without the parameter', async () => {
  assert.equal((await s.client.post(`${cms}?dryRun=All`, { metadata: { name: 'dry' } })).status, 201);
  assert.equal((await s.client.post(`${cms}?dryRun=All&dryRun=All`, { metadata: { name: 'dry' } })).status, 201);
  assert.equal((await s.client.post(`${cms}?dryRun=Some`, { metadata: { name: 'dry' } })).status, 422);
  const m = await scrape();
  assert.equal(value(m, 'apiserver_request_total', { ...requestLabels('POST', 'configmaps', 'resource', 'All'), code: '201' }), 2);
  assert.equal(value(m, 'apiserver_request_total', { ...requestLabels('POST', 'configmaps', 'resource', 'invalid'), code: '422' }), 1);
  assert.equal(value(m, 'apiserver_request_duration_seconds_count', requestLabels('POST', 'configmaps', 'resource', 'All')), 2);
  assert.equal(samples(m, 'apiserver_response_sizes_count', { dry_run: 'All' }).length, 0, 'sizes are not split by dry_run');
});

test('promtool check metrics finds nothing to report', async () => {
  const text = (await s.client.get('/metrics')).text;
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.ok(!r.error, `promtool is needed on the PATH (Debian package prometheus): ${String(r.error)}`);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(r.stdout + r.stderr, '');
});
