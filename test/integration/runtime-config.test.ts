// --runtime-config and removed versions (the spec's "Versioning"): each key
// form turns versions and resources on and off; a version turned off is gone
// from routes, both discovery forms and OpenAPI, while what it stored stays
// readable through the versions still served; removed versions answer 404
// whatever the command line says, and naming one stops the start.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tempDir, type TestServer } from '../support/server.js';
import { gadgetGroup, leveledGadgets } from '../support/gadgets.js';
import { productGroup, vocabulary } from '../../src/machinery/vocabulary.js';
import { RuntimeConfigError } from '../../src/api/versioning.js';
import { startServer } from '../../src/apiserver/start.js';

const aggregatedAccept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
const events = vocabulary.eventsGroup;
const coordination = vocabulary.coordinationGroup;

async function withServer(runtimeConfig: [string, string][], body: (s: TestServer) => Promise<void>, extra: Parameters<typeof startTestServer>[0] = {}): Promise<void> {
  const s = await startTestServer({ runtimeConfig, ...extra });
  try {
    await body(s);
  } finally {
    await s.close();
  }
}

/** The group versions both discovery forms list, and the OpenAPI v3 index's keys. */
async function served(s: TestServer): Promise<{ plain: string[]; aggregated: string[]; openapi: string[] }> {
  const plain = (await s.client.get('/apis')).json.groups.flatMap((g: any) => g.versions.map((v: any) => v.groupVersion));
  const core = (await s.client.get('/api')).json.versions.map((v: string) => v);
  const agg = (await s.client.get('/apis', { Accept: aggregatedAccept })).json.items
    .flatMap((g: any) => g.versions.map((v: any) => `${g.metadata.name}/${v.version}`));
  const aggCore = (await s.client.get('/api', { Accept: aggregatedAccept })).json.items.flatMap((g: any) => g.versions.map((v: any) => v.version));
  const openapi = Object.keys((await s.client.get('/openapi/v3')).json.paths);
  return { plain: [...core, ...plain], aggregated: [...aggCore, ...agg], openapi };
}

/** Which of leveledGadgets' versions answer a list. */
async function gadgetVersions(s: TestServer): Promise<string[]> {
  s.registry.addKind(leveledGadgets);
  const answering: string[] = [];
  for (const v of ['v1', 'v1beta1', 'v1alpha1']) {
    const r = await s.client.get(`/apis/${gadgetGroup}/${v}/namespaces/default/gadgets`);
    if (r.status === 200) answering.push(v);
    else assert.equal(r.status, 404, r.text);
  }
  const discovered = (await s.client.get(`/apis/${gadgetGroup}`)).json?.versions?.map((v: any) => v.version) ?? [];
  assert.deepEqual([...discovered].sort(), [...answering].sort(), 'discovery lists the versions that answer');
  return answering;
}

test('without --runtime-config: GA and beta versions are served, alpha ones are not', async () => {
  await withServer([], async (s) => {
    assert.deepEqual(await gadgetVersions(s), ['v1', 'v1beta1']);
    const { plain, aggregated, openapi } = await served(s);
    for (const list of [plain, aggregated]) assert.ok(list.includes(`${events}/v1`) && list.includes(`${coordination}/v1`));
    assert.ok(openapi.includes(`apis/${events}/v1`));
  });
});

test('api/alpha (value omitted means true) turns alpha versions on; api/beta=false turns beta ones off', async () => {
  await withServer([['api/alpha', '']], async (s) => assert.deepEqual(await gadgetVersions(s), ['v1', 'v1beta1', 'v1alpha1']));
  await withServer([['api/beta', 'false']], async (s) => assert.deepEqual(await gadgetVersions(s), ['v1']));
});

test('api/all=false with one version turned on serves that version only; api/ga=false keeps the others', async () => {
  const noWebhooks = { disableAdmissionPlugins: ['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'] };
  await withServer([['api/all', 'false'], ['v1', 'true']], async (s) => {
    assert.deepEqual(await gadgetVersions(s), []);
    const { plain, aggregated, openapi } = await served(s);
    assert.deepEqual(plain, ['v1']);
    assert.deepEqual(aggregated, ['v1']);
    assert.deepEqual(openapi.filter((k) => k.startsWith('api/') || k.startsWith('apis/')), ['api/v1']);
    assert.equal((await s.client.get('/api/v1/namespaces/default')).status, 200);
  }, noWebhooks);
  await withServer([['api/ga', 'false'], ['api/alpha', 'true'], ['v1', 'true']], async (s) => assert.deepEqual(await gadgetVersions(s), ['v1beta1', 'v1alpha1']), noWebhooks);
});

test('<group>/<version>=false removes the group from routes, both discovery forms and OpenAPI (upstream group names too)', async () => {
  await withServer([[`coordination.k8s.io/v1`, 'false']], async (s) => {
    const { plain, aggregated, openapi } = await served(s);
    assert.ok(!plain.some((gv) => gv.startsWith('coordination.')), plain.join(' '));
    assert.ok(!aggregated.some((gv) => gv.startsWith('coordination.')), aggregated.join(' '));
    assert.ok(!openapi.some((k) => k.includes('coordination.')), openapi.join(' '));
    assert.equal((await s.client.get(`/apis/${coordination}`)).status, 404);
    assert.equal((await s.client.get(`/apis/${coordination}/v1`)).status, 404);
    const r = await s.client.get(`/apis/${coordination}/v1/namespaces/default/leases`);
    assert.equal(r.status, 404);
    assert.equal(r.json.reason, 'NotFound');
  });
});

test('<group>/<version>/<resource>=false (api/v1/<resource> for the core group) removes one resource; the rest of its version stays', async () => {
  await withServer([['api/v1/configmaps', 'false']], async (s) => {
    assert.equal((await s.client.get('/api/v1/namespaces/default/configmaps')).status, 404);
    assert.equal((await s.client.get('/api/v1/namespaces/default/secrets')).status, 200);
    const names = (await s.client.get('/api/v1')).json.resources.map((r: any) => r.name);
    assert.ok(!names.includes('configmaps') && names.includes('secrets'));
    const agg = (await s.client.get('/api', { Accept: aggregatedAccept })).json.items[0].versions[0].resources.map((r: any) => r.resource);
    assert.ok(!agg.includes('configmaps') && agg.includes('secrets'));
    const paths = Object.keys((await s.client.get('/openapi/v3/api/v1')).json.paths);
    assert.ok(!paths.some((p) => p.includes('/configmaps')) && paths.some((p) => p.includes('/secrets')));
  });
  // api/ga=false turns the GA versions off; a version's own key wins over it.
  await withServer([['api/ga', 'false'], ['v1', 'true']], async (s) => assert.deepEqual(await gadgetVersions(s), ['v1beta1']),
    { disableAdmissionPlugins: ['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'] });
});

test('objects stored through a version later turned off stay readable through the versions still served', async () => {
  const dataDir = tempDir();
  const event = {
    metadata: { name: 'kept' }, regarding: { kind: 'Namespace', name: 'default', apiVersion: 'v1' },
    reason: 'Tested', note: 'written through the events group', type: 'Normal', action: 'Test', reportingController: 'test', reportingInstance: 'test',
    eventTime: '2026-01-01T00:00:00.000000Z',
  };
  await withServer([], async (s) => {
    const r = await s.client.post(`/apis/${events}/v1/namespaces/default/events`, event);
    assert.equal(r.status, 201, r.text);
  }, { dataDir, storageBackend: 'sqlite' });
  await withServer([[`${events}/v1`, 'false']], async (s) => {
    assert.equal((await s.client.get(`/apis/${events}/v1/namespaces/default/events/kept`)).status, 404);
    assert.equal((await s.client.get(`/apis/${events}`)).status, 404);
    const core = await s.client.get('/api/v1/namespaces/default/events/kept');
    assert.equal(core.status, 200, core.text);
    assert.equal(core.json.message, 'written through the events group');
  }, { dataDir, storageBackend: 'sqlite' });
});

test('removed versions answer 404 and are absent from discovery', async () => {
  await withServer([], async (s) => {
    for (const path of [`/apis/${events}/v1beta1/namespaces/default/events`, `/apis/${vocabulary.admissionRegistrationGroup}/v1beta1/mutatingwebhookconfigurations`, '/apis/batch/v1beta1/cronjobs']) {
      const r = await s.client.get(path);
      assert.equal(r.status, 404, path);
    }
    assert.ok(!(await served(s)).plain.some((gv) => gv.endsWith('/v1beta1')));
    // A kind declared at a release that removed its version is not served either.
    s.registry.addKind({ ...leveledGadgets, plural: 'oldgadgets', kind: 'OldGadget', versions: leveledGadgets.versions.map((v) => ({ ...v, removedRelease: '1.30' })) });
    assert.equal((await s.client.get(`/apis/${gadgetGroup}/v1beta1/namespaces/default/oldgadgets`)).status, 404);
  });
});

/** The one line a refused start says. */
async function refusal(runtimeConfig: [string, string][], extra: Parameters<typeof startServer>[0] = {}): Promise<string> {
  const dataDir = tempDir();
  try {
    await startServer({ securePort: 0, storageBackend: 'memory', logLevel: 'silent', dataDir, runtimeConfig, ...extra });
  } catch (e) {
    assert.ok(e instanceof RuntimeConfigError, String(e));
    return e.message;
  }
  assert.fail(`started with ${JSON.stringify(runtimeConfig)}`);
}

test('start-up refusals: a removed version, an unknown group, a bad value, api/all=false alone', async () => {
  assert.match(await refusal([['batch/v1beta1', 'true']]), /batch\/v1beta1, which was removed in v1\.25 \(use batch\/v1 instead\)/);
  assert.match(await refusal([[`${events}/v1beta1`, 'false']]), new RegExp(`${events}/v1beta1, which was removed in v1.25`));
  assert.match(await refusal([['extensions/v1beta1', 'true']]), /extensions\/v1beta1, which was removed in v1\.22/);
  assert.match(await refusal([['example.com/v1', 'true']]), /^unknown api groups example\.com$/);
  assert.match(await refusal([[`${coordination}/v9`, 'true']]), new RegExp(`^group version ${coordination}/v9 that has not been registered$`));
  assert.match(await refusal([['v1', 'maybe']]), /^invalid value of v1: maybe/);
  assert.match(await refusal([['api/all', 'false']]), /^invalid key with only api\/all=false$/);
  assert.match(await refusal([['api/v1/ConfigMaps', 'false']]), /resource is always lowercase plural/);
});

test('an upstream version this server does not serve is accepted (with a warning)', async () => {
  const flowControl = `${productGroup('flowcontrol.apiserver')}/v1`;
  await withServer([[flowControl, 'true'], [`${vocabulary.admissionRegistrationGroup}/v1alpha1`, 'true']], async (s) => {
    assert.equal((await s.client.get(`/apis/${flowControl}`)).status, 404);
  });
});

test('the webhook configuration resources can be turned off only with the webhook plugins', async () => {
  const ar = vocabulary.admissionRegistrationGroup;
  assert.match(await refusal([[`${ar}/v1`, 'false']]), /which the MutatingAdmissionWebhook admission plugin reads: turn the plugin off too/);
  assert.match(await refusal([[`${ar}/v1/validatingwebhookconfigurations`, 'false']], { disableAdmissionPlugins: ['MutatingAdmissionWebhook'] }), /ValidatingAdmissionWebhook/);
  await withServer([[`${ar}/v1`, 'false']], async (s) => {
    assert.equal((await s.client.get(`/apis/${ar}/v1/mutatingwebhookconfigurations`)).status, 404);
    assert.equal((await s.client.get(`/apis/${ar}`)).status, 404);
  }, { disableAdmissionPlugins: ['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'] });
});

test('batch/v1=false turns the jobs off (and the TTL-after-finished controller with them); autoscaling/v1=false leaves v2', async () => {
  await withServer([['batch/v1', 'false'], ['autoscaling/v1', 'false']], async (s) => {
    assert.equal((await s.client.get('/apis/batch')).status, 404);
    assert.equal((await s.client.get('/apis/autoscaling/v1/horizontalpodautoscalers')).status, 404);
    assert.equal((await s.client.get('/apis/autoscaling/v2/horizontalpodautoscalers')).status, 200);
    const { plain } = await served(s);
    assert.ok(plain.includes('autoscaling/v2') && plain.includes('apps/v1') && !plain.some((gv) => gv.startsWith('batch/')), plain.join(' '));
  });
});
