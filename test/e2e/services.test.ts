// Services with the real kubectl against a real server on a SQLite file:
// cluster IPs and node ports allocated from the server's ranges (given small
// here, so that exhaustion and release can be seen), kubectl create service,
// expose, get -o wide, describe, and the Python client.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { startTestServer, TestServer } from '../support/server.js';
import { eventually } from '../support/eventually.js';
import { product } from '../../src/machinery/vocabulary.js';

let s: TestServer;
before(async () => { s = await startTestServer({ storageBackend: 'sqlite', serviceClusterIpRange: '10.96.0.0/28', serviceNodePortRange: '30000-30009' }); });
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

const json = async (args: string[]) => JSON.parse(await ok([...args, '-o', 'json']));
const inRange = (ip: string) => /^10\.96\.0\.([1-9]|1[0-4])$/.test(ip);

test('kubectl create service clusterip and nodeport: addresses and ports from the ranges', async () => {
  assert.match(await ok(['create', 'service', 'clusterip', 'web', '--tcp=80:8080']), /service\/web created/);
  const web = await json(['get', 'svc', 'web']);
  assert.ok(inRange(web.spec.clusterIP), web.spec.clusterIP);
  assert.deepEqual(web.spec.clusterIPs, [web.spec.clusterIP]);
  assert.deepEqual([web.spec.ipFamilies, web.spec.ipFamilyPolicy, web.spec.type, web.spec.sessionAffinity, web.spec.internalTrafficPolicy], [['IPv4'], 'SingleStack', 'ClusterIP', 'None', 'Cluster']);
  assert.deepEqual(web.spec.ports, [{ name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 }]);
  assert.match(await ok(['create', 'service', 'nodeport', 'np', '--tcp=443:8443']), /service\/np created/);
  const np = await json(['get', 'svc', 'np']);
  assert.ok(np.spec.ports[0].nodePort >= 30000 && np.spec.ports[0].nodePort <= 30009);
  assert.equal(np.spec.externalTrafficPolicy, 'Cluster');
  const out = await ok(['get', 'services', '-o', 'wide']);
  assert.match(out, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s+SELECTOR$/m);
  assert.match(out, new RegExp(`^np\\s+NodePort\\s+${np.spec.clusterIP.replace(/\./g, '\\.')}\\s+<none>\\s+443:${np.spec.ports[0].nodePort}/TCP\\s+\\S+\\s+app=np$`, 'm'));
  assert.match(await ok(['describe', 'svc', 'web']), new RegExp(`IP:\\s+${web.spec.clusterIP.replace(/\./g, '\\.')}`));
});

test('kubectl cluster-info answers now that services are served', async () => {
  assert.match(await ok(['cluster-info']), /control plane is running at https:\/\/127\.0\.0\.1:\d+/);
});

test('kubectl expose of a pod and of a replication controller', async () => {
  await ok(['run', 'api', '--image=nginx:1.27', '--port=8080', '--labels=app=api']);
  assert.match(await ok(['expose', 'pod', 'api', '--port=80', '--target-port=8080']), /service\/api exposed/);
  const api = await json(['get', 'svc', 'api']);
  assert.deepEqual(api.spec.selector, { app: 'api' });
  assert.ok(inRange(api.spec.clusterIP));
  const rc = { apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'rcweb' }, spec: { replicas: 1, template: { metadata: { labels: { app: 'rcweb' } }, spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80 }] }] } } } };
  await ok(['create', '-f', '-'], JSON.stringify(rc));
  assert.match(await ok(['expose', 'rc', 'rcweb', '--port=80', '--type=NodePort']), /service\/rcweb exposed/);
  assert.match(await ok(['get', 'all']), /service\/rcweb\s+NodePort/);
});

test('asked-for values: outside the range, taken, and given back on delete', async () => {
  const svc = (name: string, extra: Record<string, unknown>) => JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec: { ports: [{ port: 80 }], ...extra } });
  const outside = await s.kubectl(['create', '-f', '-'], svc('outside', { clusterIP: '10.1.0.5' }));
  // Upstream 1.32's words: the value as Go prints a []string, the address named in the reason.
  assert.ok(outside.stderr.includes('spec.clusterIPs: Invalid value: []string{"10.1.0.5"}: failed to allocate IP 10.1.0.5: the provided IP (10.1.0.5) is not in the valid range. The range of valid IPs is 10.96.0.0/28'), outside.stderr);
  // An address no service has yet (the others were picked at random).
  const used = new Set((await json(['get', 'svc'])).items.map((i: any) => i.spec.clusterIP));
  const free = Array.from({ length: 14 }, (_, i) => `10.96.0.${i + 1}`).find((ip) => !used.has(ip))!;
  await ok(['create', '-f', '-'], svc('fixed', { clusterIP: free }));
  const taken = await s.kubectl(['create', '-f', '-'], svc('again', { clusterIP: free }));
  assert.ok(taken.stderr.includes(`failed to allocate IP ${free}: provided IP is already allocated`), taken.stderr);
  const badPort = await s.kubectl(['create', '-f', '-'], svc('port', { type: 'NodePort', ports: [{ port: 80, nodePort: 31000 }] }));
  assert.match(badPort.stderr, /spec\.ports\[0\]\.nodePort: Invalid value: 31000: provided port is not in the valid range\. The range of valid ports is 30000-30009/);
  const change = await s.kubectl(['patch', 'svc', 'fixed', '-p', '{"spec":{"clusterIP":"10.96.0.99","clusterIPs":["10.96.0.99"]}}']);
  assert.match(change.stderr, /spec\.clusterIPs\[0\]: Invalid value: "10\.96\.0\.99": may not change once set/);
  await ok(['delete', 'svc', 'fixed']);
  await ok(['create', '-f', '-'], svc('again', { clusterIP: free }));
});

test('a full range is a 500 naming it; deleting frees an address', async () => {
  // 14 usable addresses: fill the rest.
  const made: string[] = [];
  for (let i = 0; ; i++) {
    const r = await s.kubectl(['create', 'service', 'clusterip', `fill-${i}`, '--tcp=80']);
    if (r.code !== 0) {
      assert.match(r.stderr, /Internal error occurred: failed to allocate a serviceIP: range is full/);
      break;
    }
    made.push(`fill-${i}`);
    assert.ok(i < 20, 'the range ends');
  }
  const ips = (await json(['get', 'svc'])).items.map((i: any) => i.spec.clusterIP);
  assert.equal(new Set(ips).size, ips.length, 'no address twice');
  await ok(['delete', 'svc', made[0]!]);
  assert.match(await ok(['create', 'service', 'clusterip', 'after', '--tcp=80']), /service\/after created/);
});

test('values go back whichever road removes a service: delete --all, a namespace\'s deletion', async () => {
  // The range is full after the test above. Deleting every Service deletes the product's too; the server makes it again.
  await ok(['delete', 'svc', '--all']);
  await eventually('the product Service is back at the range\'s first address', async () =>
    (await s.kubectl(['get', 'svc', product.name, '-o', 'jsonpath={.spec.clusterIP}'])).stdout === '10.96.0.1');
  await ok(['create', 'namespace', 'short-lived']);
  // The other 13 addresses.
  for (let i = 0; i < 13; i++) await ok(['-n', 'short-lived', 'create', 'service', 'clusterip', `s-${i}`, '--tcp=80']);
  const full = await s.kubectl(['create', 'service', 'clusterip', 'no-room', '--tcp=80']);
  assert.match(full.stderr, /range is full/);
  await ok(['delete', 'namespace', 'short-lived']);
  await eventually('the namespace\'s services are gone and their addresses free', async () => (await s.kubectl(['create', 'service', 'clusterip', 'room', '--tcp=80'])).code === 0);
  await ok(['create', 'service', 'clusterip', 'web', '--tcp=80:8080']);
});

test('a service\'s proxy answers without dialing; the Python client reads services', async () => {
  const proxy = await s.kubectl(['get', '--raw', '/api/v1/namespaces/default/services/web/proxy/']);
  assert.notEqual(proxy.code, 0);
  assert.match(proxy.stderr, /no endpoints available for service "web"/);
  const script = `
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
svc = v1.read_namespaced_service("web", "default")
print(svc.spec.type, svc.spec.ports[0].port, svc.spec.ports[0].target_port)
`;
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('/usr/bin/python3', ['-c', script, s.kubeconfigPath], { timeout: 120_000 }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }));
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'ClusterIP 80 8080');
});

test('a dual-stack server: PreferDualStack services get an address of each family, SingleStack ones one', async () => {
  const dual = await startTestServer({ storageBackend: 'sqlite', serviceClusterIpRange: '10.97.0.0/24,fd00:10:97::/108' });
  try {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'both' }, spec: { ipFamilyPolicy: 'PreferDualStack', selector: { app: 'x' }, ports: [{ port: 80 }] } });
    const made = await dual.kubectl(['create', '-f', '-', '-o', 'json'], body);
    assert.equal(made.code, 0, made.stderr);
    const svc = JSON.parse(made.stdout);
    assert.deepEqual(svc.spec.ipFamilies, ['IPv4', 'IPv6']);
    assert.match(svc.spec.clusterIPs[0], /^10\.97\.0\./);
    assert.match(svc.spec.clusterIPs[1], /^fd00:10:97::/);
    const single = await dual.kubectl(['create', 'service', 'clusterip', 'one', '--tcp=80', '-o', 'json']);
    assert.deepEqual(JSON.parse(single.stdout).spec.ipFamilies, ['IPv4']);
  } finally {
    await dual.close();
  }
});
