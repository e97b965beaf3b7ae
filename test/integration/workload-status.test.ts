// The status sub-resource of the apps, batch and autoscaling kinds validates
// what it is sent as upstream's ValidateXStatusUpdate functions do (1.32, with
// the Job options its strategy turns on), with upstream's messages, and never
// changes the spec. Table-driven, one write per row, against a real server.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { assertStatusWrite, startTestServer, TestServer, createdAt, writeStatus } from '../support/server.js';

let s: TestServer;
after(async () => { await s.close(); });

type Obj = Record<string, any>;
const apps = '/apis/apps/v1/namespaces/default';
const batch = '/apis/batch/v1/namespaces/default';
const labels = { app: 'a' };
const template = (restartPolicy = 'Always') => ({ metadata: { labels }, spec: { restartPolicy, containers: [{ name: 'c', image: 'nginx' }] } });

const paths: Record<string, string> = {};
before(async () => {
  s = await startTestServer();
  const selector = { matchLabels: labels };
  paths.deploy = await createdAt(s, `${apps}/deployments`, { metadata: { name: 'd' }, spec: { selector, template: template() } });
  paths.rs = await createdAt(s, `${apps}/replicasets`, { metadata: { name: 'rs' }, spec: { selector, template: template() } });
  paths.ss = await createdAt(s, `${apps}/statefulsets`, { metadata: { name: 'ss' }, spec: { selector, serviceName: 'ss', template: template() } });
  paths.ds = await createdAt(s, `${apps}/daemonsets`, { metadata: { name: 'ds' }, spec: { selector, template: template() } });
  paths.job = await createdAt(s, `${batch}/jobs`, { metadata: { name: 'job' }, spec: { template: template('Never') } });
  paths.indexed = await createdAt(s, `${batch}/jobs`, { metadata: { name: 'indexed' }, spec: { completions: 5, parallelism: 2, completionMode: 'Indexed', backoffLimitPerIndex: 1, template: template('Never') } });
  paths.hpa = await createdAt(s, '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', { metadata: { name: 'hpa' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'd' }, maxReplicas: 3 } });
});

const at = '2024-01-01T00:00:00Z';
const cond = (type: string) => ({ type, status: 'True', lastTransitionTime: at, lastProbeTime: at, reason: 'R', message: '' });

/** [what, object, change, the messages expected (none: accepted)]. */
type Row = [string, string, (obj: Obj) => void, string[]];
const rows: Row[] = [
  ['deployment: counts not negative, none above status.replicas, available not above ready', 'deploy', (d) => { d.status = { observedGeneration: -1, replicas: 1, readyReplicas: 2, availableReplicas: 3, unavailableReplicas: -2 }; }, [
    'status.observedGeneration: Invalid value: -1: must be greater than or equal to 0',
    'status.unavailableReplicas: Invalid value: -2: must be greater than or equal to 0',
    'status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas',
    'status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas',
    'status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas',
  ]],
  ['deployment: a collision count is taken', 'deploy', (d) => { d.status = { replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 1, collisionCount: 2 }; }, []],
  ['deployment: the collision count never goes down', 'deploy', (d) => { d.status.collisionCount = 1; }, ['status.collisionCount: Invalid value: 1: cannot be decremented']],
  ['deployment: dropping the collision count counts as 0', 'deploy', (d) => { delete d.status.collisionCount; }, ['status.collisionCount: Invalid value: 0: cannot be decremented']],
  ['replica set: fully labeled and ready replicas within status.replicas', 'rs', (rs) => { rs.status = { replicas: 1, fullyLabeledReplicas: 2, readyReplicas: -1, observedGeneration: 1 }; }, [
    'status.readyReplicas: Invalid value: -1: must be greater than or equal to 0',
    'status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas',
  ]],
  ['stateful set: current and updated replicas within status.replicas; available within status.readyReplicas', 'ss', (ss) => { ss.status = { replicas: 2, currentReplicas: 3, updatedReplicas: 2, readyReplicas: 1, availableReplicas: 2, collisionCount: 1 }; }, [
    'status.currentReplicas: Invalid value: 3: cannot be greater than status.replicas',
    'status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas',
  ]],
  ['daemon set: node counts not negative, no relation checked', 'ds', (ds) => { ds.status = { currentNumberScheduled: 5, numberMisscheduled: -1, desiredNumberScheduled: 1, numberReady: 9, numberUnavailable: -3 }; }, [
    'status.numberMisscheduled: Invalid value: -1: must be greater than or equal to 0',
    'status.numberUnavailable: Invalid value: -3: must be greater than or equal to 0',
  ]],
  ['daemon set: a valid status is taken', 'ds', (ds) => { ds.status = { currentNumberScheduled: 1, numberMisscheduled: 0, desiredNumberScheduled: 1, numberReady: 1, collisionCount: 3 }; }, []],
  ['daemon set: the collision count never goes down', 'ds', (ds) => { ds.status.collisionCount = 2; }, ['status.collisionCount: Invalid value: 2: cannot be decremented']],
  ['hpa: replica counts not negative', 'hpa', (h) => { h.status = { currentReplicas: -1, desiredReplicas: -2 }; }, [
    'status.currentReplicas: Invalid value: -1: must be greater than or equal to 0',
    'status.desiredReplicas: Invalid value: -2: must be greater than or equal to 0',
  ]],
  ['job: counts not negative; uncounted pods named once', 'job', (j) => { j.status = { active: -1, ready: -2, uncountedTerminatedPods: { succeeded: ['a', ''], failed: ['a'] } }; }, [
    'status.active: Invalid value: -1: must be greater than or equal to 0',
    'status.ready: Invalid value: -2: must be greater than or equal to 0',
    'status.uncountedTerminatedPods.succeeded[1]: Invalid value: "": must not be empty',
    'status.uncountedTerminatedPods.failed[0]: Duplicate value: "a"',
  ]],
  ['job: a finished job has a start time, a completion time, no active pods', 'job', (j) => { j.status = { active: 1, conditions: [cond('Complete')] }; }, [
    'status.completionTime: Required value: completionTime is required for Complete jobs',
    'status.active: Invalid value: 1: active>0 is invalid for finished job',
    'status.startTime: Required value: startTime is required for finished job',
  ]],
  ['job: completion before start, without Complete', 'job', (j) => { j.status = { startTime: '2024-01-02T00:00:00Z', completionTime: at }; }, [
    'status.completionTime: Invalid value: 2024-01-01 00:00:00 +0000 UTC: cannot set completionTime when there is no Complete=True condition',
    'status.completionTime: Invalid value: 2024-01-01 00:00:00 +0000 UTC: completionTime cannot be set before startTime',
  ]],
  ['job: Complete and Failed together', 'job', (j) => { j.status = { startTime: at, completionTime: at, conditions: [cond('Complete'), cond('Failed')] }; }, [
    'status.conditions: Invalid value: cannot set Complete=True and Failed=true conditions',
  ]],
  ['job: a completed job is taken', 'job', (j) => { j.status = { startTime: at, completionTime: '2024-01-01T00:01:00Z', succeeded: 2, failed: 1, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] }; }, []],
  ['job: terminal conditions, counters and the completion time stay', 'job', (j) => { j.status = { startTime: at, completionTime: '2024-01-01T00:02:00Z', succeeded: 1, failed: 0 }; }, [
    'status.conditions: Invalid value: cannot disable the terminal Complete=True condition',
    'status.failed: Invalid value: 0: cannot decrease the failed counter',
    'status.succeeded: Invalid value: 1: cannot decrease the succeeded counter',
    'status.completionTime: Invalid value: 2024-01-01 00:02:00 +0000 UTC: completionTime cannot be mutated',
    'status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition',
  ]],
  ['job: completed indexes only for an Indexed job', 'job', (j) => { j.status.completedIndexes = '0'; }, [
    'status.completedIndexes: Invalid value: "0": cannot set non-empty completedIndexes when non-indexed completion mode',
  ]],
  ['job: a finished job counts all its pods', 'job', (j) => { j.status.uncountedTerminatedPods = { succeeded: ['x'] }; }, [
    'status.uncountedTerminatedPods: Invalid value: batch.UncountedTerminatedPods{Succeeded:[]types.UID{"x"}, Failed:[]types.UID(nil)}: uncountedTerminatedPods needs to be empty for finished job',
  ]],
  ['indexed job: completed indexes parse below completions', 'indexed', (j) => { j.status.completedIndexes = '0,2-1'; }, [
    'status.completedIndexes: Invalid value: "0,2-1": error parsing completedIndexes: non-increasing order, previous: 2, current: 1',
  ]],
  ['indexed job: a too large index', 'indexed', (j) => { j.status.completedIndexes = '1-5'; }, ['error parsing completedIndexes: too large index: "5"']],
  ['indexed job: failed indexes do not overlap completed ones', 'indexed', (j) => { j.status.completedIndexes = '0-2'; j.status.failedIndexes = '2,4'; }, [
    'status.failedIndexes: Invalid value: "2,4": failedIndexes and completedIndexes overlap at index: 2',
  ]],
  ['indexed job: valid intervals are taken', 'indexed', (j) => { j.status.completedIndexes = '0-1,3'; j.status.failedIndexes = '4'; }, []],
];

for (const [what, name, change, expected] of rows) {
  test(`workload status validation: ${what}`, async () => {
    assertStatusWrite(await writeStatus(s, paths[name]!, change), expected);
  });
}

test('a status write never changes the spec of a workload kind', async () => {
  const changes: [string, (o: Obj) => void, (o: Obj) => unknown][] = [
    ['deploy', (o) => { o.spec.replicas = 7; }, (o) => o.spec.replicas],
    ['rs', (o) => { o.spec.template.spec.containers[0].image = 'other'; }, (o) => o.spec.template.spec.containers[0].image],
    ['ss', (o) => { o.spec.replicas = 7; }, (o) => o.spec.replicas],
    ['ds', (o) => { o.spec.minReadySeconds = 7; }, (o) => o.spec.minReadySeconds],
    ['indexed', (o) => { o.spec.parallelism = 1; }, (o) => o.spec.parallelism],
    ['hpa', (o) => { o.spec.maxReplicas = 7; }, (o) => o.spec.maxReplicas],
  ];
  for (const [name, change, read] of changes) {
    const before = read((await s.client.get(paths[name]!)).json);
    const r = await writeStatus(s, paths[name]!, change);
    assert.equal(r.status, 200, `${name}: ${r.text}`);
    assert.deepEqual(read(r.json), before, name);
    assert.deepEqual(read((await s.client.get(paths[name]!)).json), before, name);
  }
});
