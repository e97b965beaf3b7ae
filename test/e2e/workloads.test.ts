// The workload kinds with the real kubectl and a server on a SQLite file:
// kubectl's typed commands (create deployment|job|cronjob, create job
// --from=cronjob, scale, autoscale, rollout status for a deployment nobody
// reconciles), get all / -o wide / describe / explain, a server-side apply
// conflict inside the container list, the garbage collector cascading from a
// Deployment to its ReplicaSet, the TTL-after-finished controller deleting a
// finished Job in the foreground, autoscalers read through v1 and v2, and the
// Python client's AppsV1Api and BatchV1Api. No workload controller runs: the
// tests write the objects and statuses controllers would.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';

let s: TestServer;
before(async () => { s = await startTestServer({ storageBackend: 'sqlite' }); });
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);
const apps = '/apis/apps/v1/namespaces/default';
const batch = '/apis/batch/v1/namespaces/default';

test('kubectl create deployment, get -o wide, scale, describe; rollout status waits as for a deployment nobody reconciles', async () => {
  assert.match(await ok(['create', 'deployment', 'web', '--image=nginx', '--replicas=2']), /deployment.apps\/web created/);
  assert.match(await ok(['get', 'deploy']), /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s+0\/2\s+0\s+0\s+\S+\n$/);
  assert.match(await ok(['get', 'deployment', 'web', '-o', 'wide']), /CONTAINERS\s+IMAGES\s+SELECTOR\nweb\s+0\/2\s+0\s+0\s+\S+\s+nginx\s+nginx\s+app=web\n$/);
  assert.match(await ok(['scale', 'deployment', 'web', '--replicas=3']), /deployment.apps\/web scaled/);
  const d = (await s.client.get(`${apps}/deployments/web`)).json;
  assert.deepEqual([d.spec.replicas, d.metadata.generation, d.spec.strategy.rollingUpdate], [3, 2, { maxSurge: '25%', maxUnavailable: '25%' }]);
  const scale = (await s.client.get(`${apps}/deployments/web/scale`)).json;
  assert.deepEqual([scale.apiVersion, scale.kind, scale.spec.replicas, scale.status.selector], ['autoscaling/v1', 'Scale', 3, 'app=web']);
  const described = await ok(['describe', 'deployment', 'web']);
  assert.match(described, /Replicas:\s+3 desired \| 0 updated \| 0 total \| 0 available \| 0 unavailable/);
  assert.match(described, /RollingUpdateStrategy:\s+25% max unavailable, 25% max surge/);
  // Nobody observes the new generation: kubectl waits for it, as against an upstream server without controllers.
  const rollout = await s.kubectl(['rollout', 'status', 'deployment/web', '--timeout=2s']);
  assert.notEqual(rollout.code, 0);
  assert.match(rollout.stdout, /Waiting for deployment spec update to be observed\.\.\./);
  assert.match(rollout.stderr, /error: timed out waiting for the condition/);
  // No workload controller: no ReplicaSet and no pods were made.
  assert.equal((await s.client.get(`${apps}/replicasets`)).json.items.length, 0);
  assert.equal((await s.client.get('/api/v1/namespaces/default/pods')).json.items.length, 0);
});

test('a selector cannot change; a template that does not match it is refused with upstream\'s message', async () => {
  const r = await s.kubectl(['patch', 'deployment', 'web', '--type=merge', '-p', '{"spec":{"selector":{"matchLabels":{"app":"other"}}}}']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /spec.selector: Invalid value: v1.LabelSelector\{MatchLabels:map\[string\]string\{"app":"other"\}, MatchExpressions:\[\]v1.LabelSelectorRequirement\(nil\)\}: field is immutable/);
  assert.match(r.stderr, /spec.template.metadata.labels: Invalid value: map\[string\]string\{"app":"web"\}: `selector` does not match template `labels`/);
});

test('kubectl create job, create cronjob, create job --from=cronjob; get all; describe; explain', async () => {
  assert.match(await ok(['create', 'job', 'once', '--image=busybox', '--', 'true']), /job.batch\/once created/);
  assert.match(await ok(['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 3 * * *', '--', 'date']), /cronjob.batch\/nightly created/);
  assert.match(await ok(['create', 'job', 'manual', '--from=cronjob/nightly']), /job.batch\/manual created/);
  const manual = (await s.client.get(`${batch}/jobs/manual`)).json;
  assert.equal(manual.metadata.ownerReferences[0].kind, 'CronJob');
  assert.equal(manual.metadata.annotations['cronjob.kubernetes.io/instantiate'], 'manual');
  const bad = await s.kubectl(['create', 'cronjob', 'bad', '--image=busybox', '--schedule=61 * * * *']);
  assert.match(bad.stderr, /spec.schedule: Invalid value: "61 \* \* \* \*": end of range \(61\) above maximum \(59\): 61/);
  const all = await ok(['get', 'all']);
  assert.match(all, /deployment.apps\/web\s+0\/3\s+0\s+0/);
  assert.match(all, /^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE$/m);
  assert.match(all, /job.batch\/once\s+Running\s+0\/1\s+\S+/);
  assert.match(all, /^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE$/m);
  assert.match(all, /cronjob.batch\/nightly\s+0 3 \* \* \*\s+<none>\s+False\s+0\s+<none>/);
  assert.match(await ok(['get', 'cj', '-o', 'wide']), /CONTAINERS\s+IMAGES\s+SELECTOR\nnightly\s.*\snightly\s+busybox\s+<none>\n$/);
  assert.match(await ok(['describe', 'job', 'once']), /Pods Statuses:\s+0 Active .* 0 Succeeded \/ 0 Failed/);
  assert.match(await ok(['describe', 'cronjob', 'nightly']), /Concurrency Policy:\s+Allow/);
  const explained = await ok(['explain', 'deployment.spec']);
  assert.match(explained, /GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1/);
  for (const field of ['minReadySeconds', 'progressDeadlineSeconds', 'revisionHistoryLimit', 'selector', 'strategy', 'template']) assert.match(explained, new RegExp(`^  ${field}\\s`, 'm'));
  assert.match(await ok(['api-resources', '--api-group=apps']), /deployments\s+deploy\s+apps\/v1\s+true\s+Deployment/);
  assert.match(await ok(['api-resources', '--api-group=batch']), /cronjobs\s+cj\s+batch\/v1\s+true\s+CronJob/);
});

test('StatefulSets, DaemonSets and ReplicaSets: short names, -o wide columns, describe, scale', async () => {
  const template = { metadata: { labels: { app: 'set' } }, spec: { containers: [{ name: 'c', image: 'redis' }], nodeSelector: { disk: 'ssd' } } };
  const spec = { selector: { matchLabels: { app: 'set' } }, template };
  await ok(['create', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [
    { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' }, spec: { ...spec, serviceName: 'db' } },
    { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' }, spec },
    { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'loose' }, spec },
  ] }));
  assert.match(await ok(['get', 'sts', '-o', 'wide']), /^NAME\s+READY\s+AGE\s+CONTAINERS\s+IMAGES\ndb\s+0\/1\s+\S+\s+c\s+redis\n$/);
  assert.match(await ok(['get', 'ds', '-o', 'wide']), /^NAME\s+DESIRED\s+CURRENT\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+NODE SELECTOR\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\nagent\s+0\s+0\s+0\s+0\s+0\s+disk=ssd\s+\S+\s+c\s+redis\s+app=set\n$/);
  assert.match(await ok(['get', 'rs', 'loose', '-o', 'wide']), /^loose\s+1\s+0\s+0\s+\S+\s+c\s+redis\s+app=set$/m);
  await ok(['scale', 'statefulset', 'db', '--replicas=3']);
  await ok(['scale', 'rs', 'loose', '--replicas=0']);
  assert.match(await ok(['get', 'sts', 'db']), /db\s+0\/3/);
  assert.match(await ok(['describe', 'sts', 'db']), /Replicas:\s+3 desired \| 0 total\nUpdate Strategy:\s+RollingUpdate\n\s+Partition:\s+0/);
  assert.match(await ok(['describe', 'ds', 'agent']), /Desired Number of Nodes Scheduled: 0/);
  assert.match(await ok(['describe', 'rs', 'loose']), /Replicas:\s+0 current \/ 0 desired/);
  // Only stateful sets and replica sets (and deployments) offer scale; daemon sets have none, as upstream.
  assert.equal((await s.client.get(`${apps}/daemonsets/agent/scale`)).status, 404);
});

test('apply --server-side: containers are a map keyed by name; another manager\'s image is a conflict', async () => {
  const manifest = (image: string, name = 'app') => JSON.stringify({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'applied' },
    spec: { selector: { matchLabels: { app: 'applied' } }, template: { metadata: { labels: { app: 'applied' } }, spec: { containers: [{ name, image }] } } },
  });
  await ok(['apply', '--server-side', '--field-manager=alice', '-f', '-'], manifest('nginx:1'));
  const conflict = await s.kubectl(['apply', '--server-side', '--field-manager=bob', '-f', '-'], manifest('nginx:2'));
  assert.notEqual(conflict.code, 0);
  assert.match(conflict.stderr, /Apply failed with 1 conflict: conflict with "alice": \.spec\.template\.spec\.containers\[name="app"\]\.image/);
  // Another container is another key of the map: bob adds it beside alice's, no conflict.
  await ok(['apply', '--server-side', '--field-manager=bob', '-f', '-'], manifest('envoy', 'sidecar'));
  const d = (await s.client.get(`${apps}/deployments/applied`)).json;
  assert.deepEqual(d.spec.template.spec.containers.map((c: any) => [c.name, c.image]), [['app', 'nginx:1'], ['sidecar', 'envoy']]);
  await ok(['apply', '--server-side', '--field-manager=bob', '--force-conflicts', '-f', '-'], manifest('nginx:2'));
  const forced = (await s.client.get(`${apps}/deployments/applied`)).json;
  assert.deepEqual(forced.spec.template.spec.containers.map((c: any) => [c.name, c.image]), [['app', 'nginx:2']]);
});

test('client-side apply merges containers by name; set image, rollout restart and rollout history work as without a controller', async () => {
  const manifest = (containers: object[]) => JSON.stringify({
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'csa' },
    spec: { selector: { matchLabels: { app: 'csa' } }, template: { metadata: { labels: { app: 'csa' } }, spec: { containers } } },
  });
  await ok(['apply', '-f', '-'], manifest([{ name: 'web', image: 'nginx:1' }, { name: 'side', image: 'envoy' }]));
  await ok(['apply', '-f', '-'], manifest([{ name: 'web', image: 'nginx:2' }]));
  assert.equal(await ok(['get', 'deploy', 'csa', '-o', 'jsonpath={.spec.template.spec.containers[*].image}']), 'nginx:2');
  await ok(['set', 'image', 'deployment/csa', 'web=nginx:3']);
  assert.match(await ok(['rollout', 'restart', 'deployment/csa']), /deployment.apps\/csa restarted/);
  const d = (await s.client.get(`${apps}/deployments/csa`)).json;
  assert.equal(d.spec.template.spec.containers[0].image, 'nginx:3');
  assert.ok(d.spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']);
  // The history is the deployment's ReplicaSets, and no controller made any.
  assert.match(await ok(['rollout', 'history', 'deployment/csa']), /No rollout history found\./);
  // The strategy keeps only the keys the applied one names (retainKeys): RollingUpdate's parameters go with it.
  const recreate = JSON.parse(manifest([{ name: 'web', image: 'nginx:3' }]));
  recreate.spec.strategy = { type: 'Recreate' };
  await ok(['apply', '-f', '-'], JSON.stringify(recreate));
  assert.equal(await ok(['get', 'deploy', 'csa', '-o', 'jsonpath={.spec.strategy}']), '{"type":"Recreate"}');
});

test('the garbage collector deletes a Deployment\'s ReplicaSet with it', async () => {
  const owner = (await s.client.post(`${apps}/deployments`, {
    metadata: { name: 'owner' }, spec: { selector: { matchLabels: { app: 'owner' } }, template: { metadata: { labels: { app: 'owner' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  })).json;
  const rs = await s.client.post(`${apps}/replicasets`, {
    metadata: { name: 'owner-abc', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'owner', uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }] },
    spec: { selector: { matchLabels: { app: 'owner' } }, template: { metadata: { labels: { app: 'owner' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  });
  assert.equal(rs.status, 201, rs.text);
  assert.match(await ok(['get', 'rs', 'owner-abc']), /owner-abc\s+1\s+0\s+0/);
  await ok(['delete', 'deployment', 'owner', '--cascade=foreground', '--wait=true', '--timeout=30s']);
  await eventually('the ReplicaSet is collected', async () => (await s.client.get(`${apps}/replicasets/owner-abc`)).status === 404);
});

test('deleting a namespace deletes its workloads of every kind', async () => {
  await ok(['create', 'namespace', 'doomed']);
  await ok(['-n', 'doomed', 'create', 'deployment', 'd', '--image=nginx']);
  await ok(['-n', 'doomed', 'create', 'job', 'j', '--image=busybox']);
  await ok(['-n', 'doomed', 'create', 'cronjob', 'c', '--image=busybox', '--schedule=@hourly']);
  await ok(['-n', 'doomed', 'autoscale', 'deployment', 'd', '--max=2']);
  await ok(['delete', 'namespace', 'doomed', '--wait=true', '--timeout=60s']);
  for (const path of ['/apis/apps/v1/deployments', '/apis/batch/v1/jobs', '/apis/batch/v1/cronjobs', '/apis/autoscaling/v2/horizontalpodautoscalers']) {
    const items = (await s.client.get(path)).json.items as any[];
    assert.deepEqual(items.filter((i) => i.metadata.namespace === 'doomed'), [], path);
  }
});

test('the TTL-after-finished controller deletes a finished Job in the foreground, its pods first; a Job not yet due stays', async () => {
  const finished = (ttl: number) => ({ metadata: { name: `done-${ttl}` }, spec: { ttlSecondsAfterFinished: ttl, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } } });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const complete = { startTime: now, completionTime: now, succeeded: 1, conditions: [
    { type: 'SuccessCriteriaMet', status: 'True', lastProbeTime: now, lastTransitionTime: now },
    { type: 'Complete', status: 'True', lastProbeTime: now, lastTransitionTime: now },
  ] };
  const watch = await s.client.watch(`${batch}/jobs?watch=true&fieldSelector=metadata.name%3Ddone-0`);
  for (const ttl of [0, 3600]) {
    const job = (await s.client.post(`${batch}/jobs`, finished(ttl))).json;
    const pod = await s.client.post('/api/v1/namespaces/default/pods', {
      metadata: { name: `done-${ttl}-pod`, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name, uid: job.metadata.uid, controller: true, blockOwnerDeletion: true }] },
      spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] },
    });
    assert.equal(pod.status, 201, pod.text);
    // The status a job controller would write.
    const r = await s.client.put(`${batch}/jobs/${job.metadata.name}/status`, { ...job, status: complete });
    assert.equal(r.status, 200, r.text);
  }
  await eventually('the expired job and its pod are gone', async () =>
    (await s.client.get(`${batch}/jobs/done-0`)).status === 404 && (await s.client.get('/api/v1/namespaces/default/pods/done-0-pod')).status === 404);
  // Foreground: the job was first held by the foregroundDeletion finalizer while its pod went.
  const events = await watch.waitFor(1);
  watch.close();
  assert.ok(events.some((e) => e.type === 'MODIFIED' && e.object.metadata.deletionTimestamp && e.object.metadata.finalizers?.includes('foregroundDeletion')), JSON.stringify(events.map((e) => e.type)));
  assert.equal(events.at(-1).type, 'DELETED');
  const kept = (await s.client.get(`${batch}/jobs/done-3600`)).json;
  assert.equal(kept.metadata.deletionTimestamp, undefined);
  assert.match(await ok(['get', 'job', 'done-3600']), /done-3600\s+Complete\s+1\/1\s+0s/);
  // Upstream's field selector of jobs.
  assert.match(await ok(['get', 'jobs', '--field-selector=status.successful=1', '-o', 'name']), /^job.batch\/done-3600\n$/);
});

test('a v1 and a v2 HorizontalPodAutoscaler, each read and written through the other version', async () => {
  const v1 = '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers';
  const v2 = '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers';
  assert.match(await ok(['autoscale', 'deployment', 'web', '--max=5', '--cpu-percent=50']), /horizontalpodautoscaler.autoscaling\/web autoscaled/);
  assert.match(await ok(['get', 'hpa']), /^web\s+Deployment\/web\s+cpu: <unknown>\/50%\s+1\s+5\s+0\s+\S+$/m);
  assert.equal((await s.client.get(`${v1}/web`)).json.spec.targetCPUUtilizationPercentage, 50);
  // Made in v1, read in v2: the CPU target becomes a Resource metric.
  await ok(['create', '-f', '-'], JSON.stringify({ apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: { name: 'one' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 3, targetCPUUtilizationPercentage: 65 } }));
  assert.deepEqual((await s.client.get(`${v2}/one`)).json.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 65 } } }]);
  // Made in v2 with what v1 cannot say, changed through v1: nothing is lost.
  const memory = { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '1Gi' } } };
  const made = await s.client.post(v2, { metadata: { name: 'two' }, spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 4, metrics: [memory, { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }], behavior: { scaleDown: { stabilizationWindowSeconds: 30 } } } });
  assert.equal(made.status, 201, made.text);
  const asV1 = (await s.client.get(`${v1}/two`)).json;
  assert.equal(asV1.spec.targetCPUUtilizationPercentage, 70);
  asV1.spec.maxReplicas = 8;
  const put = await s.client.put(`${v1}/two`, asV1);
  assert.equal(put.status, 200, put.text);
  const back = (await s.client.get(`${v2}/two`)).json;
  assert.equal(back.spec.maxReplicas, 8);
  assert.deepEqual(back.spec.metrics[0], memory);
  assert.equal(back.spec.behavior.scaleDown.stabilizationWindowSeconds, 30);
  assert.equal(back.metadata.annotations, undefined);
  assert.match(await ok(['get', 'hpa', 'two']), /two\s+Deployment\/web\s+memory: <unknown>\/1Gi, cpu: <unknown>\/70%\s+1\s+8/);
});

test('the Python client\'s AppsV1Api and BatchV1Api', async () => {
  const script = new URL('../../../test/e2e/python/workloads_check.py', import.meta.url).pathname;
  const result = await new Promise<{ code: number; out: string }>((resolve) => {
    execFile('/usr/bin/python3', [script, s.kubeconfigPath, 'py-workloads'], { timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? Number((err as NodeJS.ErrnoException).code ?? 1) || 1 : 0, out: stdout + stderr });
    });
  });
  assert.equal(result.code, 0, result.out);
  assert.match(result.out, /apps ok\nbatch ok\nautoscaling ok\ndelete ok/);
});
