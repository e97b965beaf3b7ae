// Everyday manifests with the real kubectl: the workload and service kinds
// written as people write them (no protocol on ports, no defaulted key),
// server-side applied; then kubectl's migration from client-side to
// server-side apply, after which a second server-side apply removes and
// changes nothing.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';

let s: TestServer;
before(async () => {
  s = await startTestServer({ storageBackend: 'sqlite' });
});
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

function file(name: string, text: string): string {
  const path = join(s.dataDir, name);
  writeFileSync(path, text);
  return path;
}

const podSpec = (indent: string) => `containers:
- name: web
  image: nginx:1.27
  ports:
  - containerPort: 80
  - name: metrics
    containerPort: 9090
  env:
  - name: MODE
    value: plain
  volumeMounts:
  - name: cache
    mountPath: /cache
volumes:
- name: cache
  emptyDir: {}`.split('\n').map((l) => indent + l).join('\n');

/** The kinds of the issue, in namespace `ns`, with no key a server defaults. */
function everyday(ns: string): string {
  return `apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: v1
kind: Pod
metadata: {name: single, namespace: ${ns}}
spec:
${podSpec('  ')}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
${podSpec('      ')}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ${ns}}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
${podSpec('      ')}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
${podSpec('      ')}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: ${ns}}
spec:
  template:
    spec:
      restartPolicy: Never
${podSpec('      ')}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${ns}}
spec:
  selector: {app: web}
  ports:
  - name: http
    port: 80
    targetPort: 80
  - name: metrics
    port: 9090
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: ${ns}}
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service: {name: web, port: {number: 80}}
`;
}

const collections = ['api/v1/pods', 'apis/apps/v1/deployments', 'apis/apps/v1/statefulsets', 'apis/apps/v1/daemonsets',
  'apis/batch/v1/jobs', 'api/v1/services', 'apis/networking.k8s.io/v1/ingresses'];

/** Every object of the manifest in `ns`, by kind/name: its resourceVersion, labels and what it holds but metadata and status. */
async function snapshot(ns: string): Promise<Map<string, { rv: string; body: unknown; labels: unknown }>> {
  const items: any[] = [];
  for (const c of collections) {
    const [group, resource] = [c.slice(0, c.lastIndexOf('/')), c.slice(c.lastIndexOf('/') + 1)];
    const r = await s.client.get(`/${group}/namespaces/${ns}/${resource}`);
    assert.equal(r.status, 200, r.text);
    items.push(...r.json.items.map((o: any) => ({ ...o, kind: o.kind ?? resource })));
  }
  return new Map(items.map((o: any) => {
    const { metadata, status: _status, ...rest } = o;
    return [`${o.kind}/${metadata.name}`, { rv: metadata.resourceVersion, body: rest, labels: metadata.labels }];
  }));
}

test('server-side apply of workloads, services and ingresses written without any defaulted key', async () => {
  const f = file('ssa.yaml', everyday('ssa'));
  const out = await ok(['apply', '--server-side', '-f', f]);
  assert.match(out, /deployment\.apps\/web serverside-applied/);
  assert.match(out, /service\/web serverside-applied/);
  const pod = (await s.client.get('/api/v1/namespaces/ssa/pods/single')).json;
  assert.deepEqual(pod.spec.containers[0].ports, [{ containerPort: 80, protocol: 'TCP' }, { name: 'metrics', containerPort: 9090, protocol: 'TCP' }]);
  // The applier owns the port by its defaulted key, as upstream records it.
  const applied = pod.metadata.managedFields.find((m: any) => m.operation === 'Apply');
  const ports = applied.fieldsV1['f:spec']['f:containers']['k:{"name":"web"}']['f:ports'];
  assert.ok(ports['k:{"containerPort":80,"protocol":"TCP"}'], JSON.stringify(ports));
  const before = await snapshot('ssa');
  assert.equal(before.size, 7);
  const again = await ok(['apply', '--server-side', '-f', f]);
  assert.match(again, /ingress\.networking\.k8s\.io\/web serverside-applied/);
  assert.deepEqual(await snapshot('ssa'), before, 'a second apply of the same manifest changes nothing');
});

test('kubectl client-side apply, then server-side apply with --force-conflicts, then again: nothing removed, nothing changed', async () => {
  const f = file('csa.yaml', everyday('mig'));
  await ok(['apply', '-f', f]);
  const created = await snapshot('mig');
  const job = (await s.client.get('/apis/batch/v1/namespaces/mig/jobs/once')).json;
  // What the server generated (the selector and its labels) belongs to no manager.
  for (const entry of job.metadata.managedFields) {
    assert.equal(entry.fieldsV1?.['f:spec']?.['f:selector'], undefined, JSON.stringify(entry));
    assert.equal(entry.fieldsV1?.['f:spec']?.['f:template']?.['f:metadata']?.['f:labels'], undefined, JSON.stringify(entry));
  }
  assert.match(await ok(['apply', '--server-side', '--force-conflicts', '-f', f]), /job\.batch\/once serverside-applied/);
  const migrated = await snapshot('mig');
  for (const [name, was] of created) {
    assert.deepEqual(migrated.get(name)?.body, was.body, `${name}: the migration changed nothing`);
    assert.deepEqual(migrated.get(name)?.labels, was.labels, `${name}: labels kept`);
  }
  assert.match(await ok(['apply', '--server-side', '-f', f]), /job\.batch\/once serverside-applied/);
  const after = await snapshot('mig');
  for (const [name, was] of migrated) assert.deepEqual(after.get(name), was, `${name}: the second apply changed nothing`);
  const selector = (await s.client.get('/apis/batch/v1/namespaces/mig/jobs/once')).json.spec.selector;
  assert.ok(Object.keys(selector?.matchLabels ?? {}).some((k) => k.endsWith('/controller-uid')), JSON.stringify(selector));
});

test('kubectl create -f of a SubjectAccessReview and a TokenReview written for upstream; api-resources lists their groups', async () => {
  const f = file('reviews.yaml', `apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: jane
  resourceAttributes: {verb: get, resource: pods, namespace: default}
---
apiVersion: authentication.k8s.io/v1
kind: TokenReview
spec: {token: not-a-token}
`);
  const out = await ok(['create', '-f', f, '-o', 'json']);
  const answers = out.trim().split(/\n(?=\{)/).map((t) => JSON.parse(t));
  const byKind = new Map(answers.flatMap((a: any) => (a.kind === 'List' ? a.items : [a])).map((a: any) => [a.kind, a]));
  assert.equal(byKind.get('SubjectAccessReview')?.status?.allowed, false, out);
  assert.equal(byKind.get('TokenReview')?.status?.authenticated ?? false, false, out);
  const resources = await ok(['api-resources', '--api-group=authorization.k8s.io', '-o', 'name']);
  assert.match(resources, /^subjectaccessreviews\.authorization\.k8s\.io$/m);
  assert.match(await ok(['api-resources', '--api-group=authentication.k8s.io', '-o', 'name']), /^tokenreviews\.authentication\.k8s\.io$/m);
});

test('kubectl describe svc lists the endpoints: EndpointSlices carry upstream\'s kubernetes.io/service-name', async () => {
  await ok(['create', 'namespace', 'desc']);
  const node = await s.client.post('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-d' } });
  assert.equal(node.status, 201, node.text);
  const svc = await s.client.post('/api/v1/namespaces/desc/services', { metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
  assert.equal(svc.status, 201, svc.text);
  const pod = await s.client.post('/api/v1/namespaces/desc/pods', { metadata: { name: 'web-1', labels: { app: 'web' } }, spec: { nodeName: 'node-d', containers: [{ name: 'c', image: 'nginx' }] } });
  assert.equal(pod.status, 201, pod.text);
  const running = { ...pod.json, status: { phase: 'Running', podIP: '10.9.0.1', podIPs: [{ ip: '10.9.0.1' }], conditions: [{ type: 'Ready', status: 'True' }] } };
  assert.equal((await s.client.put('/api/v1/namespaces/desc/pods/web-1/status', running)).status, 200);
  const slices = await eventually('the Service has a slice with the pod', async () => {
    const r = await s.client.get(`/apis/discovery.k8s.io/v1/namespaces/desc/endpointslices?labelSelector=${encodeURIComponent('kubernetes.io/service-name=web')}`);
    return r.json.items?.some((sl: any) => sl.endpoints?.length) ? r.json.items : undefined;
  });
  assert.equal(slices[0].metadata.labels['kubernetes.io/service-name'], 'web');
  assert.match(await ok(['-n', 'desc', 'describe', 'svc', 'web']), /^Endpoints:\s+10\.9\.0\.1:80$/m);
});

const ingressNginx = new URL('../../../test/e2e/ingress-nginx/deploy.yaml', import.meta.url).pathname;

/** Every object of ingress-nginx's manifest: kind/name to resourceVersion. */
async function versionsOfIngressNginx(): Promise<Map<string, string>> {
  const list = JSON.parse(await ok(['get', '-f', ingressNginx, '-o', 'json']));
  return new Map(list.items.map((o: any) => [`${o.kind}/${o.metadata.name}`, o.metadata.resourceVersion]));
}

/**
 * Every object of ingress-nginx's manifest as it stands, but what the
 * controllers write (status, versions) and when each manager last wrote.
 */
async function contentOfIngressNginx(): Promise<Map<string, unknown>> {
  const list = JSON.parse(await ok(['get', '-f', ingressNginx, '-o', 'json', '--show-managed-fields']));
  return new Map(list.items.map((o: any) => {
    const { status: _status, metadata: { resourceVersion: _rv, managedFields, ...meta }, ...rest } = o;
    const owners = managedFields.map(({ time: _time, ...entry }: any) => entry);
    return [`${o.kind}/${o.metadata.name}`, { ...rest, metadata: { ...meta, managedFields: owners } }];
  }));
}

test('ingress-nginx\'s published deploy.yaml: client-side apply, re-apply (nothing stored), server-side apply with the migration, namespace deletion', async () => {
  assert.match(await ok(['apply', '-f', ingressNginx]), /job\.batch\/ingress-nginx-admission-create created/);
  const created = await versionsOfIngressNginx();
  assert.equal(created.size, 19);
  // kubectl sends a patch where the manifest says `data: null`; the server stores nothing for it.
  await ok(['apply', '-f', ingressNginx]);
  assert.deepEqual(await versionsOfIngressNginx(), created, 're-applying stores nothing');
  const migrated = await ok(['apply', '--server-side', '--force-conflicts', '-f', ingressNginx]);
  for (const line of migrated.trim().split('\n')) assert.match(line, / serverside-applied$/, migrated);
  const afterMigration = await contentOfIngressNginx();
  // Atomic lists whose items the server defaults (a webhook's rules) count as applied again, as upstream: only times move.
  await ok(['apply', '--server-side', '-f', ingressNginx]);
  assert.deepEqual(await contentOfIngressNginx(), afterMigration, 'a second server-side apply removes and changes nothing');
  assert.match(await ok(['delete', 'namespace', 'ingress-nginx', '--timeout=60s']), /namespace "ingress-nginx" deleted/);
  const left = await s.kubectl(['get', 'namespace', 'ingress-nginx']);
  assert.notEqual(left.code, 0, 'the namespace is gone');
});
