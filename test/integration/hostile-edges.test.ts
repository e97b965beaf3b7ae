// Hostile input at four edges of the request path (issue 38): a grace period
// past what a millisecond clock holds, proxy paths that name a scheme and a
// port beside the object, websocket upgrades to exec/attach/portforward by a
// user who may only `get` them, and a label selector of a hundred thousand
// values over thousands of objects. Each answer is upstream's; afterwards
// the server is ready and a canary unchanged.

import { test, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, tokenFile, type TestServer } from '../support/server.js';
import { TestClient } from '../support/client.js';
import { assertReadyWhile, assertStatus, Canary } from '../support/hostile.js';
import { eventually } from '../support/eventually.js';
import { InProcessClient } from '../../src/apiserver/inprocess.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
let canary: Canary;
/** No client certificate: the static tokens name the users. */
let bare: TestClient;
const ns = 'edges';
const pods = `/api/v1/namespaces/${ns}/pods`;
const rbac = `/apis/${vocabulary.rbacGroup}/v1`;
const as = (token: string) => ({ Authorization: `Bearer ${token}` });

before(async () => {
  const tokens = tokenFile('t-proxier,proxier,u1\nt-ws-get,ws-get,u2\nt-ws-both,ws-both,u3\nt-ws-create,ws-create,u4\n');
  // No controllers: nothing here needs them, and their informers would still be digesting the 3,000 objects while /readyz is timed.
  s = await startTestServer({ tokenAuthFile: tokens, authorizationMode: ['RBAC'], controllers: [] });
  bare = new TestClient({ ...s.client.creds, cert: undefined, key: undefined });
  assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: ns } })).status, 201);
  // Without the service account controller, the account the ServiceAccount plugin wants for pods is made here.
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'default' } })).status, 201);
  // A node with an address, and a pod on it with an address and a declared port.
  const node = await s.client.post('/api/v1/nodes', { metadata: { name: 'n1' } });
  assert.equal(node.status, 201, node.text);
  node.json.status = { addresses: [{ type: 'InternalIP', address: '192.0.2.10' }] };
  assert.equal((await s.client.put('/api/v1/nodes/n1/status', node.json)).status, 200);
  const pod = await s.client.post(pods, { metadata: { name: 'p1' }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox', ports: [{ containerPort: 8000 }] }] } });
  assert.equal(pod.status, 201, pod.text);
  pod.json.status = { ...pod.json.status, podIP: '10.1.2.3', podIPs: [{ ip: '10.1.2.3' }] };
  assert.equal((await s.client.put(`${pods}/p1/status`, pod.json)).status, 200);
  canary = await Canary.plant(s.client);
});
after(async () => {
  bare.close();
  await s.close();
});
afterEach(async () => { await canary.assertServerIntact(); });

async function podOnNode(name: string): Promise<void> {
  const made = await s.client.post(pods, { metadata: { name }, spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'busybox' }] } });
  assert.equal(made.status, 201, made.text);
}

/** Grants `user` the rules in the test namespace; resolves once the authorizer has seen the binding. */
async function grant(user: string, rules: object[], allowed: () => Promise<boolean>): Promise<void> {
  assert.equal((await s.client.post(`${rbac}/namespaces/${ns}/roles`, { metadata: { name: user }, rules })).status, 201);
  assert.equal((await s.client.post(`${rbac}/namespaces/${ns}/rolebindings`, {
    metadata: { name: user }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'Role', name: user }, subjects: [{ kind: 'User', name: user }],
  })).status, 201);
  await eventually(`${user}'s role is in force`, allowed);
}

// Upstream's deadline is now + time.Second * time.Duration(period): int64
// nanoseconds that wrap. 99999999999999 s x 10^9 mod 2^64 is
// 200376419520689664 ns, about 6.35 years ahead.
const hugePeriod = 99999999999999;
const hugePeriodWrappedMs = 200376419520.689664;
const secondOf = (ms: number) => Math.floor(ms / 1000) * 1000;

test('a huge grace period, in the query or in the body, marks the pod with upstream\'s deadline; negative counts as 1, zero removes', async () => {
  for (const [name, send] of [
    ['by-query', () => s.client.delete(`${pods}/by-query?gracePeriodSeconds=${hugePeriod}`)],
    ['by-body', () => s.client.delete(`${pods}/by-body`, { gracePeriodSeconds: hugePeriod })],
  ] as const) {
    await podOnNode(name);
    const sent = Date.now();
    const r = await send();
    const answered = Date.now();
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.metadata.deletionGracePeriodSeconds, hugePeriod);
    const deadline = Date.parse(r.json.metadata.deletionTimestamp);
    assert.ok(deadline >= secondOf(sent + hugePeriodWrappedMs) && deadline <= answered + hugePeriodWrappedMs, `${name}: ${r.json.metadata.deletionTimestamp}`);
    assert.equal((await s.client.get(`${pods}/${name}`)).json.metadata.deletionTimestamp, r.json.metadata.deletionTimestamp);
  }
  // A shorter period moves the deadline back by the old period and on by the new one, each a wrapped duration.
  const first = (await s.client.get(`${pods}/by-query`)).json.metadata.deletionTimestamp;
  const shorter = await s.client.delete(`${pods}/by-query?gracePeriodSeconds=30`);
  assert.equal(shorter.status, 200, shorter.text);
  assert.equal(shorter.json.metadata.deletionGracePeriodSeconds, 30);
  assert.equal(Date.parse(shorter.json.metadata.deletionTimestamp), Date.parse(first) - 200_376_420_000 + 30_000);

  await podOnNode('negative');
  const negative = await s.client.delete(`${pods}/negative?gracePeriodSeconds=-5`);
  assert.equal(negative.status, 200, negative.text);
  assert.equal(negative.json.metadata.deletionGracePeriodSeconds, 1);
  await podOnNode('zero');
  assert.equal((await s.client.delete(`${pods}/zero`, { gracePeriodSeconds: 0 })).status, 200);
  assertStatus(await s.client.get(`${pods}/zero`), 404, 'NotFound');
  // Past int64: the query's integer is refused, as upstream's parameter decoding does.
  assertStatus(await s.client.delete(`${pods}/negative?gracePeriodSeconds=9223372036854775808`), 400, 'BadRequest');
});

test('proxy paths are [scheme:]name[:port]: each form reaches its proxy, authorized on the whole segment', async () => {
  const services = `/api/v1/namespaces/${ns}/services`;
  assert.equal((await s.client.post(services, { metadata: { name: 'web' }, spec: { ports: [{ name: 'https', port: 443 }] } })).status, 201);
  assert.equal((await s.client.post(services, { metadata: { name: 'lonely' }, spec: { ports: [{ port: 80 }] } })).status, 201);
  assert.equal((await s.client.post(`/api/v1/namespaces/${ns}/endpoints`, {
    metadata: { name: 'web' }, subsets: [{ addresses: [{ ip: '10.1.2.3' }], ports: [{ name: 'https', port: 8443 }] }],
  })).status, 201);
  const unreachablePod = (hostPort: string) => new RegExp(`^error trying to reach service: the pod's address ${hostPort.replace(/\./g, '\\.')} cannot be reached`);
  // The node agent's 500 carries no reason, as upstream's.
  const cases: [path: string, code: number, reason: string | undefined, message: string | RegExp][] = [
    [`${pods}/p1:8080/proxy`, 503, 'ServiceUnavailable', unreachablePod('10.1.2.3:8080')],
    [`${pods}/https:p1:8443/proxy/healthz`, 503, 'ServiceUnavailable', unreachablePod('10.1.2.3:8443')],
    // Without a port, the first one a container declares.
    [`${pods}/p1/proxy`, 503, 'ServiceUnavailable', unreachablePod('10.1.2.3:8000')],
    [`${pods}/ftp:p1:21/proxy`, 400, 'BadRequest', 'invalid pod request "ftp:p1:21"'],
    [`${pods}/ghost:80/proxy`, 404, 'NotFound', 'pods "ghost" not found'],
    [`${services}/https:web:443/proxy/`, 503, 'ServiceUnavailable', /^error trying to reach service: the endpoints of service "web" cannot be reached/],
    [`${services}/web:https/proxy/`, 503, 'ServiceUnavailable', /^error trying to reach service: the endpoints of service "web" cannot be reached/],
    [`${services}/web:444/proxy/`, 503, 'ServiceUnavailable', 'no service port 444 found for service "web"'],
    [`${services}/web:http/proxy/`, 503, 'ServiceUnavailable', 'no endpoints available for service "web:http"'],
    [`${services}/lonely:80/proxy/`, 404, 'NotFound', 'endpoints "lonely" not found'],
    [`${services}/a:web:443:x/proxy/`, 400, 'BadRequest', 'invalid service request "a:web:443:x"'],
    ['/api/v1/nodes/n1:10255/proxy/metrics', 500, undefined, /the node at 192\.0\.2\.10:10255 cannot be reached/],
    ['/api/v1/nodes/https:n1:10250/proxy/', 500, undefined, /the node agent at 192\.0\.2\.10:10250 cannot be reached/],
    ['/api/v1/nodes/n1/proxy/', 500, undefined, /the node agent at 192\.0\.2\.10:10250 cannot be reached/],
    ['/api/v1/nodes/ftp:n1:10255/proxy/', 400, 'BadRequest', 'invalid node request "ftp:n1:10255"'],
    ['/api/v1/nodes/:10255/proxy/', 400, 'BadRequest', 'invalid node request ":10255"'],
    ['/api/v1/nodes/n9:10255/proxy/', 404, 'NotFound', 'nodes "n9" not found'],
  ];
  for (const [path, code, reason, message] of cases) {
    const r = await s.client.get(path);
    assert.equal(r.status, code, `${path}: ${r.text}`);
    if (reason) assertStatus(r, code, reason);
    if (typeof message === 'string') assert.equal(r.json.message, message, path);
    else assert.match(r.json.message, message, path);
  }

  // RBAC sees the whole segment as the name: a grant for p1:8080 is not one for p1 or p1:9090.
  await grant('proxier', [{ apiGroups: [''], resources: ['pods/proxy'], resourceNames: ['p1:8080'], verbs: ['get'] }],
    async () => (await bare.get(`${pods}/p1:8080/proxy`, as('t-proxier'))).status === 503);
  for (const other of ['p1', 'p1:9090', 'http:p1:8080']) {
    const refused = await bare.get(`${pods}/${other}/proxy`, as('t-proxier'));
    assertStatus(refused, 403, 'Forbidden', `pods "${other}" is forbidden: User "proxier" cannot get resource "pods/proxy" in API group "" in the namespace "${ns}"`);
  }
});

/** A websocket handshake (a GET, as kubectl's v5 stream protocol opens it) as the holder of `token`. */
function websocketUpgrade(path: string, token: string) {
  return bare.raw(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n`
    + 'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Protocol: v5.channel.k8s.io\r\n'
    + `Authorization: Bearer ${token}\r\n\r\n`);
}

test('a websocket upgrade to exec, attach or portforward needs create as well as get', async () => {
  const streams = ['exec?command=true&stdout=true', 'attach?stdout=true', 'portforward?ports=80'];
  const resources = ['pods/exec', 'pods/attach', 'pods/portforward'];
  const upgrade = (stream: string, token: string) => websocketUpgrade(`${pods}/p1/${stream}`, token);
  // Until its role is in force, ws-get's GET itself is refused by the authorization filter.
  const getRefused = (r: { status: number; json: any }) => r.status === 403 && /cannot get resource/.test(r.json?.message);
  await grant('ws-get', [{ apiGroups: [''], resources, verbs: ['get'] }], async () => !getRefused(await upgrade(streams[0]!, 't-ws-get')));
  await grant('ws-both', [{ apiGroups: [''], resources, verbs: ['get', 'create'] }], async () => (await upgrade(streams[0]!, 't-ws-both')).status === 500);
  await grant('ws-create', [{ apiGroups: [''], resources, verbs: ['create'] }], async () => (await bare.post(`${pods}/p1/${streams[0]}`, {}, as('t-ws-create'))).status === 500);
  for (const [i, stream] of streams.entries()) {
    // get alone: refused by the stream itself, as upstream words it (RBAC gives no reason).
    const getOnly = await upgrade(stream, 't-ws-get');
    assert.equal(getOnly.status, 403, `${stream}: ${JSON.stringify(getOnly.json)}`);
    assert.deepEqual([getOnly.json.reason, getOnly.json.message, getOnly.json.details], ['Forbidden', 'pods "p1" is forbidden: ', { name: 'p1', kind: 'pods' }]);
    // get and create: authorized, so the stream goes on to the node agent, which cannot be reached.
    const both = await upgrade(stream, 't-ws-both');
    assert.equal(both.status, 500, `${stream}: ${JSON.stringify(both.json)}`);
    assert.match(both.json.message, /the node agent at 192\.0\.2\.10:10250 cannot be reached/);
    // create alone: the GET itself is refused by the authorization filter.
    const createOnly = await upgrade(stream, 't-ws-create');
    assertStatus(createOnly, 403, 'Forbidden', `pods "p1" is forbidden: User "ws-create" cannot get resource "${resources[i]}" in API group "" in the namespace "${ns}"`);
  }
});

test('a 750 KB label selector over 3,000 objects answers correctly while /readyz answers within 1 s', async () => {
  const many = 'many';
  assert.equal((await s.client.post('/api/v1/namespaces', { metadata: { name: many } })).status, 201);
  // Label values of the longest kind (63 characters) that differ only at their end: telling two apart
  // by comparing them costs their length, finding one in a set does not.
  const longValue = (tag: string, i: number) => `${'a'.repeat(54)}${tag}${String(i).padStart(8, '0')}`;
  // Written in process: 3,000 HTTP round trips would take most of the test.
  const client = new InProcessClient(s.registry, 'hostile-edges');
  const type = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ['create', 'list'] };
  await Promise.all(Array.from({ length: 3000 }, (_, i) => client.create(type, many, {
    apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, labels: { app: longValue('v', i) } },
  })));
  // 11,800 values no object carries, and two that one object each does; commas and parentheses travel unescaped.
  const values = Array.from({ length: 11_800 }, (_, i) => longValue('x', i));
  values.splice(6_000, 0, longValue('v', 17), longValue('v', 2999));
  const query = `labelSelector=app+in+(${values.join(',')})`;
  assert.ok(query.length > 750_000 && query.length < 1_000_000, String(query.length));
  const r = await assertReadyWhile(s.client, () => s.client.get(`/api/v1/namespaces/${many}/configmaps?${query}`), 'the selector is matched');
  assert.equal(r.status, 200, r.text.slice(0, 300));
  assert.deepEqual(r.json.items.map((cm: any) => cm.metadata.name).sort(), ['cm-17', 'cm-2999']);
});

test('a field selector term with a long run of spaces and no operator answers 400 while /readyz answers within 1 s', async () => {
  const term = `metadata.name${' '.repeat(100_000)}x`;
  const answered = await assertReadyWhile(s.client, () => s.client.get(`/api/v1/namespaces/${ns}/configmaps?fieldSelector=${encodeURIComponent(term)}`), 'the selector is parsed');
  assertStatus(answered, 400, 'BadRequest', `invalid selector: '${term}'; can't understand '${term}'`);
});
