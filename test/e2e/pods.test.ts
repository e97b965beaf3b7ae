// Pods with the real kubectl against a real server on a SQLite file: run,
// get (-o wide), describe, explain, binding, status written by a test (no
// node agent runs here), the node-agent sub-resources that answer without
// dialing anything, and the Python client's CoreV1Api.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { startTestServer, TestServer } from '../support/server.js';

let s: TestServer;
before(async () => { s = await startTestServer({ storageBackend: 'sqlite' }); });
after(async () => { await s.close(); });

const ok = (args: string[], input?: string): Promise<string> => s.kubectlOk(args, input);

test('kubectl run makes a pod with upstream defaults', async () => {
  assert.match(await ok(['run', 'web', '--image=nginx:1.27', '--port=80', '--labels=app=web', '--env=MODE=fast']), /pod\/web created/);
  const pod = JSON.parse(await ok(['get', 'pod', 'web', '-o', 'json']));
  assert.equal(pod.spec.restartPolicy, 'Always');
  assert.equal(pod.spec.dnsPolicy, 'ClusterFirst');
  assert.equal(pod.spec.terminationGracePeriodSeconds, 30);
  assert.equal(pod.spec.schedulerName, 'default-scheduler');
  assert.equal(pod.spec.enableServiceLinks, true);
  const c = pod.spec.containers[0];
  assert.equal(c.imagePullPolicy, 'IfNotPresent');
  assert.equal(c.terminationMessagePath, '/dev/termination-log');
  assert.equal(c.terminationMessagePolicy, 'File');
  assert.deepEqual(c.ports, [{ containerPort: 80, protocol: 'TCP' }]);
  assert.deepEqual(pod.status, { phase: 'Pending', qosClass: 'BestEffort' });
  assert.match(await ok(['run', 'latest', '--image=busybox', '--restart=Never', '--', 'sleep', '3600']), /pod\/latest created/);
  const latest = JSON.parse(await ok(['get', 'po', 'latest', '-o', 'json']));
  assert.equal(latest.spec.containers[0].imagePullPolicy, 'Always');
  assert.equal(latest.spec.restartPolicy, 'Never');
});

test('get pods, -o wide, field selectors and the all category', async () => {
  const out = await ok(['get', 'pods']);
  assert.match(out, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE$/m);
  assert.match(out, /^web\s+0\/1\s+Pending\s+0\s+/m);
  const wide = await ok(['get', 'pods', '-o', 'wide']);
  assert.match(wide, /^NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\s+IP\s+NODE\s+NOMINATED NODE\s+READINESS GATES$/m);
  assert.match(wide, /^web\s+0\/1\s+Pending\s+0\s+\S+\s+<none>\s+<none>\s+<none>\s+<none>$/m);
  assert.match(await ok(['get', 'all']), /^(pod\/)?web\s+0\/1\s+Pending/m);
  const never = await ok(['get', 'pods', '--field-selector=spec.restartPolicy=Never', '-o', 'name']);
  assert.equal(never.trim(), 'pod/latest');
});

test('binding sets spec.nodeName once; a second binding is a conflict', async () => {
  const bind = (node: string) => s.kubectl(['create', '--raw', '/api/v1/namespaces/default/pods/web/binding', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'Binding', metadata: { name: 'web' }, target: { kind: 'Node', name: node } }));
  const first = await bind('node-a');
  assert.equal(first.code, 0, first.stderr);
  const pod = JSON.parse(await ok(['get', 'pod', 'web', '-o', 'json']));
  assert.equal(pod.spec.nodeName, 'node-a');
  assert.ok(pod.status.conditions.some((c: any) => c.type === 'PodScheduled' && c.status === 'True'));
  const second = await bind('node-b');
  assert.notEqual(second.code, 0);
  assert.match(second.stderr, /Operation cannot be fulfilled on pods\/binding "web": pod web is already assigned to node "node-a"/);
  // spec.nodeName does not change through the main resource.
  const patched = await s.kubectl(['patch', 'pod', 'web', '-p', '{"spec":{"nodeName":"node-b"}}']);
  assert.notEqual(patched.code, 0);
  assert.match(patched.stderr, /pod updates may not change fields other than/);
});

test('an image can change; a status written through status shows in get', async () => {
  assert.match(await ok(['set', 'image', 'pod/web', 'web=nginx:1.28']), /image updated/);
  const pod = JSON.parse(await ok(['get', 'pod', 'web', '-o', 'json']));
  assert.equal(pod.spec.containers[0].image, 'nginx:1.28');
  pod.status = {
    ...pod.status, phase: 'Running', podIP: '10.244.0.7', podIPs: [{ ip: '10.244.0.7' }],
    conditions: [{ type: 'Ready', status: 'True' }],
    containerStatuses: [{ name: 'web', ready: true, restartCount: 2, image: 'nginx:1.28', imageID: '', state: { running: { startedAt: '2026-11-25T10:00:00Z' } } }],
  };
  await ok(['replace', '--subresource=status', '-f', '-'], JSON.stringify(pod));
  const wide = await ok(['get', 'pod', 'web', '-o', 'wide']);
  assert.match(wide, /^web\s+1\/1\s+Running\s+2\s+\S+\s+10\.244\.0\.7\s+node-a\s+<none>\s+<none>$/m);
});

test('describe and explain', async () => {
  const d = await ok(['describe', 'pod', 'web']);
  assert.match(d, /^Name:\s+web$/m);
  assert.match(d, /^Node:\s+node-a/m);
  assert.match(d, /Image:\s+nginx:1.28/);
  assert.match(d, /MODE:\s+fast/);
  const e = await ok(['explain', 'pod.spec.containers']);
  assert.match(e, /^KIND:\s+Pod$/m);
  assert.match(e, /^FIELD:\s+containers <\[\]Container>$/m);
  assert.match(e, /imagePullPolicy\s+<string>/);
});

test('invalid pods are refused with upstream\'s messages', async () => {
  const file = join(s.dataDir, 'bad-pod.yaml');
  writeFileSync(file, [
    'apiVersion: v1', 'kind: Pod', 'metadata: {name: bad}', 'spec:', '  restartPolicy: Sometimes', '  containers:',
    '  - {name: a, image: nginx, ports: [{containerPort: 70000}, {containerPort: 80, name: http}, {containerPort: 81, name: http}]}',
    '  - {name: a, image: busybox, volumeMounts: [{name: missing, mountPath: /m}]}', '',
  ].join('\n'));
  const r = await s.kubectl(['create', '-f', file]);
  assert.notEqual(r.code, 0);
  for (const m of [
    'spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive',
    'spec.containers[0].ports[2].name: Duplicate value: "http"',
    'spec.containers[1].name: Duplicate value: "a"',
    'spec.containers[1].volumeMounts[0].name: Not found: "missing"',
    'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
  ]) assert.ok(r.stderr.includes(m), `${m}\nin: ${r.stderr}`);
});

test('log, exec and port-forward answer without dialing any address', async () => {
  await ok(['run', 'idle', '--image=busybox:1.36']);
  // Not scheduled: exec and port-forward are refused as upstream refuses them.
  const exec = await s.kubectl(['exec', 'idle', '--', 'true']);
  assert.notEqual(exec.code, 0);
  assert.match(exec.stderr, /pod idle does not have a host assigned/);
  // Scheduled to a node the server does not know: the node is looked up, never dialed.
  const logs = await s.kubectl(['logs', 'web']);
  assert.notEqual(logs.code, 0);
  assert.match(logs.stderr, /nodes "node-a" not found/);
  const wrong = await s.kubectl(['logs', 'web', '-c', 'nope']);
  assert.match(wrong.stderr, /container nope is not valid for pod web/);
});

test('the Python client reads and writes pods with CoreV1Api', async () => {
  const script = `
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
v1 = client.CoreV1Api()
pod = client.V1Pod(metadata=client.V1ObjectMeta(name="py"), spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox:1.36",
    resources=client.V1ResourceRequirements(limits={"cpu": "500m", "memory": "128Mi"}))]))
made = v1.create_namespaced_pod("default", pod)
print(made.status.phase, made.status.qos_class, made.spec.containers[0].resources.requests["cpu"])
names = sorted(p.metadata.name for p in v1.list_namespaced_pod("default").items)
print(",".join(names))
v1.delete_namespaced_pod("py", "default")
`;
  // Debian's python3-kubernetes installs for the system interpreter.
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('/usr/bin/python3', ['-c', script, s.kubeconfigPath], { timeout: 120_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? 1 : 0, stdout, stderr });
    });
  });
  assert.equal(r.code, 0, r.stderr);
  const [first, second] = r.stdout.trim().split('\n');
  assert.equal(first, 'Pending Guaranteed 500m');
  assert.ok(second!.split(',').includes('py'));
});

test('ephemeral containers are added through their sub-resource only, never changed; resize changes resources only', async () => {
  const ns = '/api/v1/namespaces/default/pods';
  const made = await s.client.post(ns, { metadata: { name: 'sized' }, spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } }] } });
  assert.equal(made.status, 201, made.text);
  const strategic = { 'Content-Type': 'application/strategic-merge-patch+json' };
  const debug = { spec: { ephemeralContainers: [{ name: 'debug', image: 'busybox', targetContainerName: 'c' }] } };
  // Not through the main resource: the spec's update rule refuses it.
  const viaMain = await s.client.send('PATCH', `${ns}/sized`, { raw: JSON.stringify(debug), headers: strategic });
  assert.equal(viaMain.status, 422, viaMain.text);
  assert.match(viaMain.json.message, /pod updates may not change fields other than/);
  const added = await s.client.send('PATCH', `${ns}/sized/ephemeralcontainers`, { raw: JSON.stringify(debug), headers: strategic });
  assert.equal(added.status, 200, added.text);
  assert.equal(added.json.spec.ephemeralContainers[0].terminationMessagePolicy, 'File');
  const changed = await s.client.send('PATCH', `${ns}/sized/ephemeralcontainers`, {
    raw: JSON.stringify({ spec: { ephemeralContainers: [{ name: 'debug', image: 'busybox:2' }] } }), headers: strategic,
  });
  assert.equal(changed.status, 422);
  assert.match(changed.json.message, /spec\.ephemeralContainers: Forbidden: existing ephemeral containers "debug" may not be changed/);
  const resized = await s.client.send('PATCH', `${ns}/sized/resize`, {
    raw: JSON.stringify({ spec: { containers: [{ name: 'c', image: 'ignored', resources: { requests: { cpu: '150m' }, limits: { cpu: '300m' } } }] } }), headers: strategic,
  });
  assert.equal(resized.status, 200, resized.text);
  assert.deepEqual(resized.json.spec.containers[0].resources, { requests: { cpu: '150m' }, limits: { cpu: '300m' } });
  assert.equal(resized.json.spec.containers[0].image, 'nginx', 'resize changes resources only');
  const qos = await s.client.send('PATCH', `${ns}/sized/resize`, { raw: JSON.stringify({ spec: { containers: [{ name: 'c', resources: null }] } }), headers: strategic });
  assert.equal(qos.status, 422);
  assert.match(qos.json.message, /Pod QOS Class may not change as a result of resizing/);
});

test('kubectl run in a namespace with a LimitRange and a default PriorityClass gives the pod upstream 1.32\'s whole spec', async () => {
  const ns = 'admitted';
  await ok(['create', 'namespace', ns]);
  await ok(['apply', '-f', '-'], JSON.stringify({
    apiVersion: 'v1', kind: 'List', items: [
      { apiVersion: 'v1', kind: 'LimitRange', metadata: { name: 'limits', namespace: ns }, spec: { limits: [{ type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '250m', memory: '128Mi' } }] } },
      { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'standard' }, value: 100, globalDefault: true },
    ],
  }));
  try {
    // The admission caches follow the objects just made: a server-side dry run shows when both apply.
    for (let i = 0; ; i++) {
      const dry = JSON.parse(await ok(['run', 'probe', '-n', ns, '--image=nginx:1.27', '--dry-run=server', '-o', 'json']));
      if (dry.spec.priority === 100 && dry.spec.containers[0].resources?.limits) break;
      assert.ok(i < 100, 'the LimitRange and the PriorityClass never applied');
      await new Promise((r) => setTimeout(r, 50));
    }
    await ok(['run', 'web', '-n', ns, '--image=nginx:1.27']);
    const pod = JSON.parse(await ok(['get', 'pod', 'web', '-n', ns, '-o', 'json']));
    const volume = pod.spec.volumes?.[0]?.name;
    assert.match(volume, /^plat-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    // What upstream 1.32 stores for the same pod (its ServiceAccount, LimitRanger, Priority and DefaultTolerationSeconds plugins), product-named.
    assert.deepEqual(pod.spec, {
      containers: [{
        image: 'nginx:1.27',
        imagePullPolicy: 'IfNotPresent',
        name: 'web',
        resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '250m', memory: '128Mi' } },
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        volumeMounts: [{ mountPath: '/var/run/secrets/plat.io/serviceaccount', name: volume, readOnly: true }],
      }],
      dnsPolicy: 'ClusterFirst',
      enableServiceLinks: true,
      preemptionPolicy: 'PreemptLowerPriority',
      priority: 100,
      priorityClassName: 'standard',
      restartPolicy: 'Always',
      schedulerName: 'default-scheduler',
      securityContext: {},
      serviceAccount: 'default',
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
      tolerations: [
        { effect: 'NoExecute', key: 'node.plat.io/not-ready', operator: 'Exists', tolerationSeconds: 300 },
        { effect: 'NoExecute', key: 'node.plat.io/unreachable', operator: 'Exists', tolerationSeconds: 300 },
      ],
      volumes: [{
        name: volume,
        projected: {
          defaultMode: 420,
          sources: [
            { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
            { configMap: { items: [{ key: 'ca.crt', path: 'ca.crt' }], name: 'plat-root-ca.crt' } },
            { downwardAPI: { items: [{ fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' }, path: 'namespace' }] } },
          ],
        },
      }],
    });
    assert.equal(pod.metadata.annotations['plat.io/limit-ranger'], 'LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for container web');
    assert.equal(pod.status.qosClass, 'Burstable');
  } finally {
    await ok(['delete', 'priorityclass', 'standard']);
  }
});
