// Nodes, replication controllers, pod templates and endpoints with the real
// kubectl against a real server on a SQLite file: get (-o wide), cordon and
// uncordon, describe, scale, and the Python client's CoreV1Api on nodes and
// replication controllers. The server never dials a node's address.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { startTestServer, TestServer } from '../support/server.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';

let s: TestServer;
before(async () => { s = await startTestServer({ storageBackend: 'sqlite' }); });
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

const node = {
  apiVersion: 'v1', kind: 'Node',
  metadata: { name: 'node-a', labels: { [`${vocabulary.nodeRoleLabelPrefix}worker`]: '', [vocabulary.hostnameLabel]: 'node-a' } },
  spec: { podCIDRs: ['10.244.1.0/24'] },
  status: {
    capacity: { cpu: '4', memory: '8Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: '2026-11-25T10:00:00Z', lastTransitionTime: '2026-11-25T10:00:00Z' }],
    // Documentation addresses: the server must never connect to them.
    addresses: [{ type: 'InternalIP', address: '192.0.2.10' }, { type: 'Hostname', address: 'node-a' }],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: 'm', systemUUID: 's', bootID: 'b', kernelVersion: '6.1.0', osImage: 'Debian GNU/Linux 12', containerRuntimeVersion: 'containerd://1.7.0',
      kubeletVersion: 'v1.32.0', kubeProxyVersion: '', operatingSystem: 'linux', architecture: 'amd64',
    },
  },
};

test('nodes: create with status, get and -o wide, cordon and uncordon', async () => {
  assert.match(await ok(['create', '-f', '-'], JSON.stringify(node)), /node\/node-a created/);
  const out = await ok(['get', 'nodes']);
  assert.match(out, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/m);
  assert.match(out, /^node-a\s+Ready\s+worker\s+\S+\s+v1\.32\.0$/m);
  const wide = await ok(['get', 'no', '-o', 'wide']);
  assert.match(wide, /^node-a\s+Ready\s+worker\s+\S+\s+v1\.32\.0\s+192\.0\.2\.10\s+<none>\s+Debian GNU\/Linux 12\s+6\.1\.0\s+containerd:\/\/1\.7\.0$/m);
  const stored = JSON.parse(await ok(['get', 'node', 'node-a', '-o', 'json']));
  assert.deepEqual(stored.status.allocatable, { cpu: '4', memory: '8Gi', pods: '110' });
  assert.match(await ok(['cordon', 'node-a']), /node\/node-a cordoned/);
  assert.match(await ok(['get', 'nodes']), /^node-a\s+Ready,SchedulingDisabled\s/m);
  assert.equal((await ok(['get', 'nodes', '--field-selector=spec.unschedulable=true', '-o', 'name'])).trim(), 'node/node-a');
  assert.match(await ok(['uncordon', 'node-a']), /node\/node-a uncordoned/);
  assert.match(await ok(['describe', 'node', 'node-a']), /Unschedulable:\s+false/);
});

test('a node\'s proxy and a scheduled pod\'s logs answer without dialing the node', async () => {
  const proxy = await s.kubectl(['get', '--raw', '/api/v1/nodes/node-a/proxy/healthz']);
  assert.notEqual(proxy.code, 0);
  assert.match(proxy.stderr, /the node agent at node-a:10250 cannot be reached from this server/);
  await ok(['run', 'on-a', '--image=busybox:1.36', '--overrides={"spec":{"nodeName":"node-a"}}']);
  const logs = await s.kubectl(['logs', 'on-a']);
  assert.notEqual(logs.code, 0);
  assert.match(logs.stderr, /error dialing backend: logs of container on-a of pod on-a: the node agent at node-a:10250 cannot be reached/);
});

const rc = {
  apiVersion: 'v1', kind: 'ReplicationController', metadata: { name: 'web' },
  spec: { replicas: 2, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } },
};

test('replication controllers: defaults, get -o wide, scale, describe; invalid templates refused', async () => {
  assert.match(await ok(['create', '-f', '-'], JSON.stringify(rc)), /replicationcontroller\/web created/);
  const stored = JSON.parse(await ok(['get', 'rc', 'web', '-o', 'json']));
  assert.deepEqual(stored.spec.selector, { app: 'web' });
  assert.deepEqual(stored.metadata.labels, { app: 'web' });
  assert.equal(stored.spec.template.spec.restartPolicy, 'Always');
  assert.equal(stored.metadata.generation, 1);
  const wide = await ok(['get', 'rc', '-o', 'wide']);
  assert.match(wide, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR$/m);
  assert.match(wide, /^web\s+2\s+0\s+0\s+\S+\s+web\s+nginx:1\.27\s+app=web$/m);
  assert.match(await ok(['scale', 'rc', 'web', '--replicas=5']), /replicationcontroller\/web scaled/);
  const scale = JSON.parse(await ok(['get', '--raw', '/api/v1/namespaces/default/replicationcontrollers/web/scale']));
  assert.deepEqual([scale.kind, scale.apiVersion, scale.spec.replicas, scale.status.selector], ['Scale', 'autoscaling/v1', 5, 'app=web']);
  assert.match(await ok(['describe', 'rc', 'web']), /Replicas:\s+0 current \/ 5 desired/);
  assert.match(await ok(['get', 'all']), /replicationcontroller\/web/);
  const bad = await s.kubectl(['create', '-f', '-'], JSON.stringify({ ...rc, metadata: { name: 'bad' }, spec: { ...rc.spec, selector: { app: 'other' } } }));
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /spec\.template\.metadata\.labels: Invalid value: \{"app":"web"\}: `selector` does not match template `labels`/);
});

test('pod templates and endpoints', async () => {
  const pt = { apiVersion: 'v1', kind: 'PodTemplate', metadata: { name: 'tpl' }, template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'c', image: 'busybox:1.36' }] } } };
  await ok(['create', '-f', '-'], JSON.stringify(pt));
  assert.match(await ok(['get', 'podtemplates']), /^tpl\s+c\s+busybox:1\.36\s+app=x$/m);
  assert.match(await ok(['describe', 'podtemplate', 'tpl']), /Image:\s+busybox:1\.36/);
  const ep = { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'web' }, subsets: [{ addresses: [{ ip: '10.244.1.5' }, { ip: '10.244.1.6' }], ports: [{ port: 80 }] }] };
  await ok(['create', '-f', '-'], JSON.stringify(ep));
  assert.match(await ok(['get', 'ep', 'web']), /^web\s+10\.244\.1\.5:80,10\.244\.1\.6:80\s+/m);
  assert.match(await ok(['describe', 'ep', 'web']), /Addresses:\s+10\.244\.1\.5,10\.244\.1\.6/);
  const bad = await s.kubectl(['create', '-f', '-'], JSON.stringify({ ...ep, metadata: { name: 'lo' }, subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ port: 80 }] }] }));
  assert.match(bad.stderr, /subsets\[0\]\.addresses\[0\]\.ip: Invalid value: "127\.0\.0\.1": may not be in the loopback range/);
});

test('the Python client lists nodes and scales a replication controller with CoreV1Api', async () => {
  const script = `
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
print(",".join(n.metadata.name for n in v1.list_node().items))
n = v1.read_node_status("node-a")
print(n.status.node_info.kubelet_version, n.status.capacity["memory"])
v1.patch_namespaced_replication_controller_scale("web", "default", {"spec": {"replicas": 3}})
rc = v1.read_namespaced_replication_controller("web", "default")
print(rc.spec.replicas, rc.spec.selector["app"])
`;
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('/usr/bin/python3', ['-c', script, s.kubeconfigPath], { timeout: 120_000 }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr }));
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), ['node-a', 'v1.32.0 8Gi', '3 web']);
});

test('label and annotate nodes, replication controllers and endpoints; --overwrite as upstream', async () => {
  assert.match(await ok(['label', 'node', 'node-a', 'disk=ssd']), /node\/node-a labeled/);
  assert.equal((await ok(['get', 'nodes', '-l', 'disk=ssd', '-o', 'name'])).trim(), 'node/node-a');
  const again = await s.kubectl(['label', 'node', 'node-a', 'disk=hdd']);
  assert.notEqual(again.code, 0);
  assert.match(again.stderr, /'disk' already has a value \(ssd\), and --overwrite is false/);
  await ok(['label', 'node', 'node-a', 'disk=hdd', '--overwrite']);
  assert.equal((await ok(['get', 'node', 'node-a', '-o', 'jsonpath={.metadata.labels.disk}'])), 'hdd');
  await ok(['label', 'node', 'node-a', 'disk-']);
  assert.equal((await ok(['get', 'nodes', '-l', 'disk', '-o', 'name'])).trim(), '');
  assert.match(await ok(['annotate', 'rc', 'web', 'owner=team-a']), /replicationcontroller\/web annotated/);
  assert.equal(await ok(['get', 'rc', 'web', '-o', 'jsonpath={.metadata.annotations.owner}']), 'team-a');
  assert.match(await ok(['label', 'ep', 'web', 'tier=db']), /endpoints\/web labeled/);
  assert.match(await ok(['describe', 'ep', 'web']), /Labels:\s+tier=db/);
});
