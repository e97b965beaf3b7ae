// Custom resources on two servers sharing one real etcd: a definition
// created through one is served by both, a change made through the other
// reaches both, and its deletion (the cleanup finalizer, run by whichever
// server gets to it) stops both serving it.

import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTwoServersOnEtcd, type ServersOnEtcd } from '../support/etcd.js';
import type { TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { crdPath, widgetCrd, widgetGroup } from '../support/crds.js';

let servers: ServersOnEtcd;
let one: TestServer;
let two: TestServer;
before(async () => {
  servers = await startTwoServersOnEtcd();
  ({ one, two } = servers);
});
after(async () => { await servers?.close(); });

const widgets = (v: string) => `/apis/${widgetGroup}/${v}/namespaces/default/widgets`;
const served = (s: TestServer, path: string) => eventually(`${path} served`, async () => ((await s.client.get(path)).status === 200 ? true : undefined));
const gone = (s: TestServer, path: string) => eventually(`${path} gone`, async () => ((await s.client.get(path)).status === 404 ? true : undefined));

test('a definition made through one server is served by both, changed through the other, deleted for both', async () => {
  assert.equal((await one.client.post(crdPath, widgetCrd())).status, 201);
  await served(two, widgets('v1'));
  const made = await two.client.post(widgets('v1'), { apiVersion: `${widgetGroup}/v1`, kind: 'Widget', metadata: { name: 'shared' }, spec: { replicas: 1 } });
  assert.equal(made.status, 201, made.text);
  assert.equal((await one.client.get(`${widgets('v1')}/shared`)).json.spec.color, 'red');

  const live = (await two.client.get(`${crdPath}/widgets.${widgetGroup}`)).json;
  const v2 = { ...live.spec.versions[0], name: 'v2', storage: false };
  assert.equal((await two.client.put(`${crdPath}/widgets.${widgetGroup}`, { ...live, spec: { ...live.spec, versions: [live.spec.versions[0], v2] } })).status, 200);
  await served(one, `${widgets('v2')}/shared`);

  assert.equal((await one.client.delete(`${crdPath}/widgets.${widgetGroup}`)).status, 200);
  await gone(one, `${crdPath}/widgets.${widgetGroup}`);
  await gone(one, widgets('v1'));
  await gone(two, widgets('v1'));
});
