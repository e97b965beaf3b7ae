// The controllers' work queues on /metrics, as upstream's controllers export
// them: every workqueue_* family, one series per queue name, and the adds of
// the service account controller's queue growing when a namespace appears.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';

let s: TestServer;
before(async () => { s = await startTestServer({ controllers: ['*'] }); });
after(async () => { await s.close(); });

const families = [
  'workqueue_depth', 'workqueue_adds_total', 'workqueue_queue_duration_seconds', 'workqueue_work_duration_seconds',
  'workqueue_retries_total', 'workqueue_unfinished_work_seconds', 'workqueue_longest_running_processor_seconds',
];

async function scrape(): Promise<string> {
  const r = await s.client.get('/metrics');
  assert.equal(r.status, 200, r.text);
  return r.text;
}

/** The value of `metric{name="<queue>"}`, or undefined. */
function sample(text: string, metric: string, queue: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${metric}{name="${queue}"}`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('every workqueue_* family is exported, labelled by queue name', async () => {
  const text = await scrape();
  for (const family of families) assert.match(text, new RegExp(`^# TYPE ${family} (gauge|counter|histogram)$`, 'm'), family);
  for (const queue of ['namespace', 'serviceaccount', 'garbage_collector_attempt_to_delete', 'csrsigning']) {
    assert.notEqual(sample(text, 'workqueue_depth', queue), undefined, `depth of ${queue}`);
    assert.notEqual(sample(text, 'workqueue_retries_total', queue), undefined, `retries of ${queue}`);
  }
  assert.match(text, /^workqueue_work_duration_seconds_bucket\{le="1e-8",name="serviceaccount"\} \d+$/m);
});

test('a new namespace is an add to the service account controller\'s queue, and its sync is timed', async () => {
  const before = sample(await scrape(), 'workqueue_adds_total', 'serviceaccount') ?? 0;
  const worked = (text: string) => sample(text, 'workqueue_work_duration_seconds_count', 'serviceaccount') ?? 0;
  const workedBefore = worked(await scrape());
  const r = await s.client.post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'counted' } });
  assert.equal(r.status, 201, r.text);
  await eventually('the add and its sync are counted', async () => {
    const text = await scrape();
    return (sample(text, 'workqueue_adds_total', 'serviceaccount') ?? 0) > before && worked(text) > workedBefore;
  });
});
