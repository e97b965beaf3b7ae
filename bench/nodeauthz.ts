// Gets of a secret by a node agent (--authorization-mode=Node,RBAC), whose
// right to it comes from the Node authorizer's graph of 1,000 nodes and
// 30,000 pods (100 and 3,000 with --quick), beside gets of the same secrets
// by a static-token user one RoleBinding allows, alternating on one server.
// Both present a bearer token; the node's decision is a few map reads in the
// graph (upstream walks it), so its server CPU per get should be within
// 10 % of the RBAC user's. No Node objects exist, so the pod garbage
// collector, which would remove pods bound to unknown nodes, is off.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBenchServer } from './child.js';
import { bestOfAlternatingGets, rateCell } from './alternate.js';
import { createAll } from './rbac.js';
import { LoadGenerator } from './load.js';
import { fmtInt } from './stats.js';
import { target, type Row } from './table.js';
import { vocabulary } from '../src/machinery/vocabulary.js';

export interface NodeAuthzBenchOptions {
  quick: boolean;
  concurrency: number;
  progress: (msg: string) => void;
  keep?: boolean;
}

const namespace = 'bench-nodes';
const timeoutMs = 300_000;
const podsPerNode = 30;
const roundCount = 3;
const within = 0.1;
const nodeToken = 'bench-node-token';
const userToken = 'bench-user-token';
const secretName = (i: number) => `sa-${String(i).padStart(5, '0')}`;
const nodeName = (i: number) => `node-${String(i).padStart(5, '0')}`;

export async function benchNodeAuthorizer(o: NodeAuthzBenchOptions): Promise<Row[]> {
  const nodeCount = o.quick ? 100 : 1_000;
  const count = o.quick ? 1_000 : 10_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-nodeauthz-'));
  const tokens = join(dataDir, 'tokens.csv');
  writeFileSync(tokens, `${nodeToken},system:node:${nodeName(0)},uid-node,system:nodes\n${userToken},bench-user,uid-user\n`);
  const server = await startBenchServer({
    dataDir,
    extraArgs: ['--authorization-mode', 'Node,RBAC', '--token-auth-file', tokens, '--controllers', '*,-serviceaccount-token,-root-ca-cert-publisher,-pod-garbage-collector'],
  });
  const generators: LoadGenerator[] = [];
  try {
    const setup = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: o.concurrency });
    generators.push(setup);
    await setup.run({ kind: 'namespaces', names: [namespace] }, timeoutMs);
    const base = `/api/v1/namespaces/${namespace}`;
    o.progress(`node authorizer: ${fmtInt(nodeCount)} nodes, ${fmtInt(nodeCount * podsPerNode)} pods, gets of a secret as a node agent and as an RBAC user, alternating…`);
    await createAll(server, `${base}/secrets`, Array.from({ length: podsPerNode }, (_, i) => ({ metadata: { name: secretName(i) }, stringData: { k: 'v' } })));
    // The first node's pods each use one of the secrets; every other pod a secret of its own node.
    await createAll(server, `${base}/pods`, Array.from({ length: nodeCount * podsPerNode }, (_, i) => {
      const node = Math.floor(i / podsPerNode);
      const secret = node === 0 ? secretName(i) : `node-secret-${node}`;
      return {
        metadata: { name: `pod-${String(i).padStart(6, '0')}` },
        spec: { nodeName: nodeName(node), containers: [{ name: 'c', image: 'busybox', envFrom: [{ secretRef: { name: secret } }] }] },
      };
    }));
    const rbac = `/apis/${vocabulary.rbacGroup}/v1/namespaces/${namespace}`;
    await createAll(server, `${rbac}/roles`, [{ metadata: { name: 'secret-reader' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }] }]);
    await createAll(server, `${rbac}/rolebindings`, [{
      metadata: { name: 'secret-reader' }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'Role', name: 'secret-reader' },
      subjects: [{ kind: 'User', name: 'bench-user' }],
    }]);
    const node = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: o.concurrency, bearerToken: nodeToken });
    const user = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: o.concurrency, bearerToken: userToken });
    generators.push(node, user);
    // The graph and the RBAC index are fed by informers: gets fail until they have caught up.
    for (const [who, g] of [['node', node], ['user', user]] as const) {
      for (let tries = 0; ; tries++) {
        try {
          await g.run({ kind: 'get', namespace, prefix: 'sa-', population: podsPerNode, count: podsPerNode * 4, seed: tries, collectionPath: `${base}/secrets` }, timeoutMs);
          break;
        } catch (e) {
          if (tries >= 100) throw new Error(`the ${who}'s gets never succeeded: ${(e as Error).message}`);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
    }
    const { user: u, node: n } = await bestOfAlternatingGets({ user, node }, {
      pid: server.pid, namespace, population: podsPerNode, count, rounds: roundCount, timeoutMs, collectionPath: `${base}/secrets`,
    });
    const ratio = n.serverCpuMs / u.serverCpuMs;
    o.progress(`node authorizer: RBAC user ${rateCell(u)}; node ${rateCell(n)}; node/user CPU ${ratio.toFixed(2)}`);
    return [
      { metric: `get Secret as a static-token user allowed by one RoleBinding (best of ${roundCount} × ${fmtInt(count)}, alternating with the row below)`, result: rateCell(u), target: '—' },
      {
        metric: `get Secret as a node agent allowed by the Node authorizer's graph of ${fmtInt(nodeCount)} nodes and ${fmtInt(nodeCount * podsPerNode)} pods (best of ${roundCount} × ${fmtInt(count)})`,
        result: `${rateCell(n)} · server CPU ${(ratio * 100).toFixed(0)} % of the RBAC user's`,
        target: target('server CPU per get within 10 % of the RBAC user\'s', ratio <= 1 + within),
      },
    ];
  } finally {
    for (const g of generators) await g.close().catch(() => {});
    await server.stop(2000).catch(() => {});
    if (!o.keep) rmSync(dataDir, { recursive: true, force: true });
  }
}
