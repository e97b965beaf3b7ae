// Events in two groups from one storage, as upstream: core v1 Event and the
// events group's v1 Event are the same objects in two shapes. Each is read,
// listed and watched through the other; a write through the events group
// must say who reports what; upstream's group name (client-go's event
// recorder writes events.k8s.io/v1) reaches the same objects; protobuf works
// in both shapes.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../support/server.js';
import { assertStatus } from '../support/hostile.js';
import { eventually } from '../support/webhook.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import { events } from '../../src/api/core/v1/index.js';
import { kindAt } from '../../src/api/kind.js';
import { InProcessClient } from '../../src/apiserver/inprocess.js';
import { builtinSchemaLookup, decodeProtobufObject, encodeProtobufObject } from '../../src/api/protobuf/index.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
  assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: 'ev' } })).status, 201);
});
after(async () => { await s.close(); });

const group = vocabulary.eventsGroup;
const coreEvents = '/api/v1/namespaces/ev/events';
const groupEvents = (g = group) => `/apis/${g}/v1/namespaces/ev/events`;
const regarding = { kind: 'ConfigMap', namespace: 'ev', name: 'settings', apiVersion: 'v1' };
const now = '2026-11-25T10:00:00.000000Z';

/** A complete event as the events group wants a new one. */
const newEvent = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: `${group}/v1`, kind: 'Event', metadata: { name },
  eventTime: now, reportingController: `${vocabulary.eventsGroup}/tester`, reportingInstance: 'tester-1',
  action: 'Checked', reason: 'Looked', regarding, note: 'all good', type: 'Normal', ...extra,
});

test('a core Event reads through the events group with its fields renamed, and the reverse', async () => {
  const core = await s.client.post(coreEvents, {
    apiVersion: 'v1', kind: 'Event', metadata: { name: 'from-core' }, involvedObject: regarding, reason: 'Started', message: 'it started',
    source: { component: 'old-style' }, firstTimestamp: '2026-11-25T09:00:00Z', lastTimestamp: '2026-11-25T09:05:00Z', count: 3, type: 'Normal',
  });
  assert.equal(core.status, 201, core.text);
  const seen = (await s.client.get(`${groupEvents()}/from-core`)).json;
  assert.equal(seen.apiVersion, `${group}/v1`);
  assert.deepEqual(seen.regarding, regarding);
  assert.equal(seen.note, 'it started');
  assert.deepEqual(seen.deprecatedSource, { component: 'old-style' });
  assert.equal(seen.deprecatedFirstTimestamp, '2026-11-25T09:00:00Z');
  assert.equal(seen.deprecatedLastTimestamp, '2026-11-25T09:05:00Z');
  assert.equal(seen.deprecatedCount, 3);
  assert.equal(seen.involvedObject, undefined);
  assert.equal(seen.metadata.uid, core.json.metadata.uid);

  const made = await s.client.post(groupEvents(), newEvent('from-group', { series: { count: 2, lastObservedTime: now } }));
  assert.equal(made.status, 201, made.text);
  assert.equal(made.json.apiVersion, `${group}/v1`);
  const back = (await s.client.get(`${coreEvents}/from-group`)).json;
  assert.deepEqual(back.involvedObject, regarding);
  assert.equal(back.message, 'all good');
  assert.equal(back.reportingComponent, `${vocabulary.eventsGroup}/tester`);
  assert.equal(back.reportingInstance, 'tester-1');
  assert.deepEqual(back.series, { count: 2, lastObservedTime: now });
  const listed = (await s.client.get(groupEvents())).json;
  assert.equal(listed.apiVersion, `${group}/v1`);
  assert.deepEqual(listed.items.map((e: any) => e.metadata.name).sort(), ['from-core', 'from-group']);
});

test('a write through the events group must name who reports what, with type Normal or Warning and no deprecated field', async () => {
  const cases: [Record<string, unknown>, string[]][] = [
    [{ action: undefined, reason: undefined }, ['action: Required value', 'reason: Required value']],
    [{ reportingController: undefined, reportingInstance: undefined }, ['reportingController: Required value', 'reportingInstance: Required value']],
    [{ type: 'Info' }, ['type: Invalid value: "": has invalid value: Info']],
    [{ eventTime: undefined }, ['eventTime: Required value']],
    [{ deprecatedCount: 4 }, ['deprecatedCount: Invalid value: "": needs to be unset']],
    [{ action: 'x'.repeat(129) }, ['action: Invalid value: "": can have at most 128 characters']],
    [{ series: { count: 1, lastObservedTime: now } }, ['series.count: Invalid value: "": should be at least 2']],
  ];
  for (const [change, messages] of cases) {
    const r = await s.client.post(groupEvents(), newEvent('bad', change));
    assertStatus(r, 422, 'Invalid');
    for (const m of messages) assert.ok(r.json.message.includes(m), `${JSON.stringify(change)}: ${r.json.message}`);
    assert.match(r.json.message, new RegExp(`^Event\\.${group.replace(/\./g, '\\.')} "bad" is invalid: `));
  }
  // The core group keeps its own, looser rules.
  assert.equal((await s.client.post(coreEvents, { metadata: { name: 'loose' }, involvedObject: regarding, type: 'Info' })).status, 201);
});

test('a watch of either group sees writes through the other, in its own shape', async () => {
  const viaGroup = await s.client.watch(`${groupEvents()}?watch=true&fieldSelector=metadata.name%3Dwatched`);
  const viaCore = await s.client.watch(`${coreEvents}?watch=true&fieldSelector=metadata.name%3Dwatched`);
  assert.equal((await s.client.post(coreEvents, { metadata: { name: 'watched' }, involvedObject: regarding, message: 'first' })).status, 201);
  assert.equal((await s.client.send('PATCH', `${groupEvents()}/watched`, { raw: JSON.stringify({ note: 'second' }), headers: { 'Content-Type': 'application/merge-patch+json' } })).status, 422,
    'a patch through the events group meets its rules too');
  assert.equal((await s.client.send('PATCH', `${coreEvents}/watched`, { raw: JSON.stringify({ message: 'second' }), headers: { 'Content-Type': 'application/merge-patch+json' } })).status, 200);
  await eventually('both watches saw both events', () => viaGroup.events.length >= 2 && viaCore.events.length >= 2);
  assert.deepEqual(viaGroup.events.map((e: any) => [e.type, e.object.apiVersion, e.object.note]), [['ADDED', `${group}/v1`, 'first'], ['MODIFIED', `${group}/v1`, 'second']]);
  assert.deepEqual(viaCore.events.map((e: any) => [e.type, e.object.apiVersion, e.object.message]), [['ADDED', 'v1', 'first'], ['MODIFIED', 'v1', 'second']]);
  viaGroup.close();
  viaCore.close();
});

test('field selectors: core names its fields, the events group only metadata, as upstream registers them', async () => {
  assert.equal((await s.client.post(coreEvents, { metadata: { name: 'selected' }, involvedObject: { ...regarding, kind: 'Secret' }, message: 'm' })).status, 201);
  const names = (r: any) => r.json.items.map((e: any) => e.metadata.name);
  assert.deepEqual(names(await s.client.get(`${coreEvents}?fieldSelector=involvedObject.kind%3DSecret`)), ['selected']);
  assert.deepEqual(names(await s.client.get(`${groupEvents()}?fieldSelector=metadata.name%3Dselected`)), ['selected']);
  assertStatus(await s.client.get(`${groupEvents()}?fieldSelector=regarding.kind%3DSecret`), 400, 'BadRequest',
    '"regarding.kind" is not a known field selector: only "metadata.name", "metadata.namespace"');
  assertStatus(await s.client.get(`${groupEvents()}?fieldSelector=involvedObject.kind%3DSecret`), 400, 'BadRequest',
    '"involvedObject.kind" is not a known field selector: only "metadata.name", "metadata.namespace"');
  // A kind that declares no field selectors of its own answers as upstream's default conversion does.
  assertStatus(await s.client.get(`/api/v1/namespaces/default/configmaps?fieldSelector=data.x%3Dy`), 400, 'BadRequest',
    '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"');
});

test('the in-process client reads, writes and watches through the events group as a request at it would', async () => {
  const client = new InProcessClient(s.registry, 'events-test');
  const type = { group, version: 'v1', resource: 'events', kind: 'Event', namespaced: true, verbs: events.verbs };
  const seen: any[] = [];
  const watch = await client.watch(type, 'ev', '0', { onEvents: (events) => seen.push(...events), onEnd: () => {} }, { fieldSelector: 'metadata.name=in-process' });
  try {
    const created = await client.create(type, 'ev', {
      apiVersion: `${group}/v1`, kind: 'Event', metadata: { name: 'in-process' }, regarding, note: 'written in process',
      eventTime: '2026-11-25T10:00:00.000000Z', type: 'Normal', reason: 'Tested', action: 'Test', reportingController: 'plat.io/test', reportingInstance: 'one',
    });
    assert.deepEqual([created.apiVersion, created.note], [`${group}/v1`, 'written in process']);
    assert.equal((await client.get(type, 'ev', 'in-process'))!.regarding.name, 'settings');
    assert.equal((await s.client.get(`${coreEvents}/in-process`)).json.message, 'written in process');
    // The events group's rules apply in process too.
    await assert.rejects(client.create(type, 'ev', { apiVersion: `${group}/v1`, kind: 'Event', metadata: { name: 'rude' }, regarding, note: 'x' }), (e: any) => e.code === 422);
    const listed = await client.list(type, 'ev', { fieldSelector: 'metadata.name=in-process' });
    assert.deepEqual(listed.items.map((e) => [e.apiVersion, e.note]), [[`${group}/v1`, 'written in process']]);
    const patched = await client.patch(type, 'ev', 'in-process', 'merge', { note: 'patched in process' });
    assert.equal(patched.note, 'patched in process');
    await eventually('the watch saw both writes in its version', () => seen.length >= 2);
    assert.deepEqual(seen.map((e) => [e.type, e.object.apiVersion, e.object.note]), [['ADDED', `${group}/v1`, 'written in process'], ['MODIFIED', `${group}/v1`, 'patched in process']]);
  } finally {
    watch.stop();
  }
});

test('upstream\'s group name reaches the same objects, as client-go\'s event recorder writes them; discovery lists it without short names', async () => {
  const upstream = 'events.k8s.io';
  const r = await s.client.post(groupEvents(upstream), { ...newEvent('recorded'), apiVersion: `${upstream}/v1` });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.apiVersion, `${upstream}/v1`);
  assert.equal((await s.client.get(`${coreEvents}/recorded`)).json.message, 'all good');
  const resources = (await s.client.get(`/apis/${upstream}/v1`)).json.resources;
  const entry = resources.find((x: any) => x.name === 'events');
  assert.equal(entry.kind, 'Event');
  assert.equal(entry.shortNames, undefined);
  assert.deepEqual((await s.client.get('/api/v1')).json.resources.find((x: any) => x.name === 'events').shortNames, ['ev']);
});

test('protobuf in the events group\'s shape: a body in, an answer out', async () => {
  const groupKind = kindAt(events, events.versions.find((v) => v.group === group && v.name === 'v1')!);
  const lookup = builtinSchemaLookup([groupKind]);
  const body = encodeProtobufObject(newEvent('binary'), groupKind.schema);
  const r = await s.client.send('POST', groupEvents(), { raw: body, headers: { 'Content-Type': vocabulary.protobufMediaType, Accept: vocabulary.protobufMediaType } });
  assert.equal(r.status, 201, r.text);
  const answer = decodeProtobufObject(r.body, lookup);
  assert.equal(answer.kind, 'Event');
  assert.equal(answer.note, 'all good');
  assert.deepEqual(answer.regarding, regarding);
  assert.equal((await s.client.get(`${coreEvents}/binary`)).json.message, 'all good');
});
