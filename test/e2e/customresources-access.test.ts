// Authorization, admission and audit on a custom kind, as on any other, with
// the real kubectl: RBAC rules naming the custom group and resource (a Role
// written for the upstream server), `kubectl auth can-i`, a Forbidden write
// in upstream's words, NamespaceLifecycle refusing a missing namespace, and
// the audit log recording the custom resource with its objects.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { crdPath, widgetCrd, widgetGroup } from '../support/crds.js';

const policy = `apiVersion: ${vocabulary.auditGroup}/v1
kind: Policy
rules:
- level: RequestResponse
  resources: [{group: "${widgetGroup}", resources: [widgets]}]
  omitStages: [RequestReceived]
- level: None
`;

let s: TestServer;
let logPath: string;

before(async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'policy.yaml'), policy);
  logPath = join(dir, 'audit', 'audit.log');
  s = await startTestServer({ storageBackend: 'sqlite', auditPolicyFile: join(dir, 'policy.yaml'), auditLogPath: logPath });
});
after(async () => { await s.close(); });

function file(name: string, value: unknown): string {
  const path = join(s.dataDir, name);
  writeFileSync(path, value === undefined ? '' : (Array.isArray(value) ? value.map((v) => stringify(v)).join('---\n') : stringify(value)));
  return path;
}

function auditEvents(): any[] {
  if (!existsSync(logPath)) return [];
  return readFileSync(logPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

test('RBAC, kubectl auth can-i, admission and audit treat a custom kind like any other', async () => {
  await s.kubectlOk(['apply', '-f', file('crd.yaml', widgetCrd())]);
  await s.kubectlOk(['wait', '--for', 'condition=Established', '--timeout', '30s', `crd/widgets.${widgetGroup}`]);
  // kubectl maps the kind through discovery: wait until it is listed.
  await eventually('widgets discovered', async () => (await s.kubectl(['get', 'widgets'])).code === 0);

  const canI = async (verb: string) => (await s.kubectl(['auth', 'can-i', verb, `widgets.${widgetGroup}`, '-n', 'default', '--as', 'jane'])).stdout.trim();
  assert.equal(await canI('create'), 'no');
  await s.kubectlOk(['apply', '-f', file('rbac.yaml', [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'widget-maker', namespace: 'default' },
      rules: [{ apiGroups: [widgetGroup], resources: ['widgets'], verbs: ['get', 'list', 'create'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'jane-makes-widgets', namespace: 'default' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'widget-maker' }, subjects: [{ kind: 'User', name: 'jane' }] },
  ])]);
  assert.equal(await canI('create'), 'yes');
  assert.equal(await canI('delete'), 'no');

  const w1 = file('w1.yaml', { apiVersion: `${widgetGroup}/v1`, kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, spec: { color: 'green' } });
  assert.match(await s.kubectlOk(['create', '-f', w1, '--as', 'jane']), new RegExp(`widget.${widgetGroup}/w1 created`));
  const denied = await s.kubectl(['delete', `widget.${widgetGroup}`, 'w1', '-n', 'default', '--as', 'jane']);
  assert.notEqual(denied.code, 0);
  assert.match(denied.stderr, new RegExp(`widgets.${widgetGroup} "w1" is forbidden: User "jane" cannot delete resource "widgets" in API group "${widgetGroup}" in the namespace "default"`));

  // Admission: NamespaceLifecycle refuses a custom object in a namespace that does not exist.
  const nowhere = await s.client.post(`/apis/${widgetGroup}/v1/namespaces/nowhere/widgets`, { apiVersion: `${widgetGroup}/v1`, kind: 'Widget', metadata: { name: 'w2' }, spec: {} });
  assert.equal(nowhere.status, 404, nowhere.text);
  assert.equal(nowhere.json.message, 'namespaces "nowhere" not found');

  const created: any = await eventually('the create audited', () => auditEvents().find((e) => e.verb === 'create' && e.objectRef?.name === 'w1' && e.stage === 'ResponseComplete'));
  assert.deepEqual(created.objectRef, { resource: 'widgets', namespace: 'default', name: 'w1', apiGroup: widgetGroup, apiVersion: 'v1' });
  assert.equal(created.level, 'RequestResponse');
  assert.equal(created.user.username, 'admin');
  assert.equal(created.impersonatedUser.username, 'jane');
  assert.deepEqual([created.requestObject.spec.color, created.responseObject.spec.color, created.responseObject.spec.replicas], ['green', 'green', 1], 'the answer carries the schema\'s defaults');
  const forbidden: any = await eventually('the forbidden delete audited', () => auditEvents().find((e) => e.verb === 'delete' && e.objectRef?.name === 'w1'));
  assert.equal(forbidden.responseStatus.code, 403);
  assert.equal(forbidden.annotations[`${vocabulary.authorizationGroup}/decision`], 'forbid');
  assert.equal((await s.client.get(`/apis/${widgetGroup}/v1/namespaces/default/widgets/w1`)).status, 200, 'still there');
  assert.equal((await s.client.delete(`${crdPath}/widgets.${widgetGroup}`)).status, 200);
});
