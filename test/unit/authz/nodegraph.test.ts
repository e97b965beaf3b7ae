// The Node authorizer's graph and decisions without a server: what a node's
// pods lead to (directly, and through a claim and its volume), counted per
// node so that a second pod, a move and a removal keep it exact.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeGraph } from '../../../src/auth/authz/nodegraph.js';
import { NodeAuthorizer } from '../../../src/auth/authz/node.js';
import type { Attributes } from '../../../src/machinery/authorization.js';
import { vocabulary } from '../../../src/machinery/vocabulary.js';

const pod = (name: string, nodeName: string | undefined, spec: Record<string, unknown> = {}) => ({ metadata: { namespace: 'ns', name }, spec: { nodeName, ...spec } });
const usingSecret = (secret: string) => ({ containers: [{ name: 'c', envFrom: [{ secretRef: { name: secret } }] }] });

test('two pods on one node lead to a shared secret until both are gone; a moved pod leads from its new node only', () => {
  const g = new NodeGraph();
  g.setPod(pod('a', 'n1', usingSecret('s')));
  g.setPod(pod('b', 'n1', usingSecret('s')));
  assert.ok(g.relates('n1', 'secret', 'ns', 's'));
  g.removePod('ns', 'a');
  assert.ok(g.relates('n1', 'secret', 'ns', 's'), 'the other pod still uses it');
  g.setPod(pod('b', 'n2', usingSecret('s')));
  assert.ok(!g.relates('n1', 'secret', 'ns', 's'));
  assert.ok(g.relates('n2', 'secret', 'ns', 's'));
  assert.ok(!g.knowsNode('n1'));
  g.setPod(pod('b', undefined, usingSecret('s')));
  assert.ok(!g.relates('n2', 'secret', 'ns', 's'), 'an unbound pod leads nowhere');
});

test('every way a pod names an object counts: volumes, projections, env, image pull secrets, ephemeral claims, its account', () => {
  const g = new NodeGraph();
  g.setPod(pod('p', 'n1', {
    serviceAccountName: 'sa', imagePullSecrets: [{ name: 'pull' }],
    initContainers: [{ name: 'i', env: [{ name: 'X', valueFrom: { configMapKeyRef: { name: 'init-cm', key: 'k' } } }] }],
    ephemeralContainers: [{ name: 'e', envFrom: [{ configMapRef: { name: 'debug-cm' } }] }],
    volumes: [
      { name: 'sec', secret: { secretName: 'vol-secret' } },
      { name: 'proj', projected: { sources: [{ secret: { name: 'proj-secret' } }, { configMap: { name: 'proj-cm' } }] } },
      { name: 'csi', csi: { driver: 'd', nodePublishSecretRef: { name: 'csi-secret' } } },
      { name: 'scratch', ephemeral: { volumeClaimTemplate: {} } },
      { name: 'data', persistentVolumeClaim: { claimName: 'claim' } },
    ],
  }));
  for (const s of ['pull', 'vol-secret', 'proj-secret', 'csi-secret']) assert.ok(g.relates('n1', 'secret', 'ns', s), s);
  for (const c of ['init-cm', 'debug-cm', 'proj-cm']) assert.ok(g.relates('n1', 'configmap', 'ns', c), c);
  assert.ok(g.relates('n1', 'persistentvolumeclaim', 'ns', 'p-scratch'));
  assert.ok(g.relates('n1', 'serviceaccount', 'ns', 'sa'));
  assert.ok(g.relates('n1', 'pod', 'ns', 'p'));
  assert.ok(!g.relates('n1', 'secret', 'other', 'pull'), 'namespaces are kept apart');
  // node ← pod ← claim ← volume ← secret
  g.setVolume({ metadata: { name: 'pv' }, spec: { claimRef: { namespace: 'ns', name: 'claim' }, rbd: { secretRef: { name: 'ceph', namespace: 'storage' } } } });
  assert.ok(g.relates('n1', 'persistentvolume', '', 'pv'));
  assert.ok(g.relates('n1', 'secret', 'storage', 'ceph'));
  g.removeVolume('pv');
  assert.ok(!g.relates('n1', 'secret', 'storage', 'ceph'));
  g.setAttachment({ metadata: { name: 'va' }, spec: { nodeName: 'n3' } });
  assert.ok(g.relates('n3', 'volumeattachment', '', 'va') && g.knowsNode('n3'));
});

test('decisions: non-nodes get no opinion, nodes their graph, their rules and upstream\'s reasons', () => {
  const g = new NodeGraph();
  g.setPod(pod('p', 'n1', usingSecret('s')));
  const authorizer = new NodeAuthorizer(g);
  const node = { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] };
  const ask = (a: Partial<Attributes>) => authorizer.authorize({ user: node, verb: 'get', isResourceRequest: true, path: '', apiGroup: '', apiVersion: 'v1', ...a });
  assert.equal(authorizer.authorize({ user: { username: 'system:node:n1', groups: [] }, verb: 'get', isResourceRequest: true, path: '', apiGroup: '', apiVersion: 'v1', resource: 'secrets', namespace: 'ns', name: 's' }).decision, 'no-opinion', 'not in system:nodes');
  assert.equal(ask({ resource: 'secrets', namespace: 'ns', name: 's' }).decision, 'allow');
  assert.equal(ask({ resource: 'secrets', namespace: 'ns', name: 'x' }).reason, "no relationship found between node 'n1' and this object");
  assert.equal(ask({ resource: 'secrets', namespace: 'ns', name: 's', subresource: 'x' }).reason, 'cannot read subresource');
  assert.equal(ask({ verb: 'list', resource: 'pods', fieldSelector: 'spec.nodeName=n1' }).decision, 'allow');
  assert.equal(ask({ verb: 'watch', resource: 'pods', fieldSelector: 'status.phase=Running,spec.nodeName==n1' }).decision, 'allow');
  assert.equal(ask({ verb: 'list', resource: 'pods', fieldSelector: 'spec.nodeName!=n1' }).reason, 'can only list/watch pods with spec.nodeName field selector');
  // The upstream group name of a path is the same group.
  assert.equal(ask({ verb: 'update', apiGroup: 'coordination.k8s.io', resource: 'leases', namespace: vocabulary.nodeLeaseNamespace, name: 'n1' }).decision, 'allow');
  assert.equal(ask({ verb: 'update', apiGroup: vocabulary.coordinationGroup, resource: 'leases', namespace: vocabulary.nodeLeaseNamespace, name: 'n2' }).reason, 'can only access node lease with the same name as the requesting node');
  assert.equal(ask({ verb: 'create', apiGroup: vocabulary.authenticationGroup, resource: 'tokenreviews' }).decision, 'allow', 'a node rule');
  assert.equal(ask({ verb: 'delete', resource: 'nodes', name: 'n1' }).decision, 'no-opinion');
  assert.equal(authorizer.rulesFor(node).incomplete, true);
});
