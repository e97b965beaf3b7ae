// Gets by a static-token user whom one RoleBinding allows, while the cluster
// holds 1,000 Roles and 1,000 RoleBindings (each for another user), beside
// gets by a static-token admin (system:masters, allowed before RBAC is asked),
// alternating on one server. Both present a bearer token, so the difference
// is RBAC's: it looks up the user's own bindings in an index, so it should
// not care how many others there are (upstream scans them): within 10 %.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'node:https';
import { startBenchServer, type BenchServer } from './child.js';
import { bestOfAlternatingGets, rateCell } from './alternate.js';
import { sendJson } from './http.js';
import { LoadGenerator } from './load.js';
import { fmtInt } from './stats.js';
import { target, type Row } from './table.js';
import { vocabulary } from '../src/machinery/vocabulary.js';

export interface RbacBenchOptions {
  quick: boolean;
  concurrency: number;
  progress: (msg: string) => void;
  keep?: boolean;
}

const namespace = 'bench-rbac';
const timeoutMs = 120_000;
const roleCount = 1_000;
const roundCount = 3;
const within = 0.1;
const adminToken = 'bench-admin-token';
const userToken = 'bench-user-token';

/** Writes `count` objects with the admin certificate, 16 at a time. */
export async function createAll(server: BenchServer, path: string, bodies: unknown[]): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16, ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
  try {
    for (let i = 0; i < bodies.length; i += 16) {
      await Promise.all(bodies.slice(i, i + 16).map(async (body) => {
        const r = await sendJson(agent, server.port, 'POST', path, body, 10_000);
        if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status}: ${r.body.toString('utf8').slice(0, 300)}`);
      }));
    }
  } finally {
    agent.destroy();
  }
}

const name = (i: number) => `role-${String(i).padStart(5, '0')}`;

export async function benchRbac(o: RbacBenchOptions): Promise<Row[]> {
  const population = o.quick ? 1_000 : 5_000;
  const count = o.quick ? 1_000 : 10_000;
  const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-rbac-'));
  const tokens = join(dataDir, 'tokens.csv');
  writeFileSync(tokens, `${adminToken},bench-admin,uid-admin,system:masters\n${userToken},bench-user,uid-user\n`);
  const server = await startBenchServer({
    dataDir,
    extraArgs: ['--authorization-mode', 'RBAC', '--token-auth-file', tokens, '--controllers', '*,-serviceaccount-token,-root-ca-cert-publisher'],
  });
  const generators: LoadGenerator[] = [];
  try {
    const setup = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: o.concurrency });
    generators.push(setup);
    await setup.run({ kind: 'namespaces', names: [namespace] }, timeoutMs);
    await setup.run({ kind: 'create', namespace, prefix: 'sa-', count: population, remember: false }, timeoutMs);
    o.progress(`rbac: ${fmtInt(roleCount)} Roles and RoleBindings, gets as a token user bound by one of them and as a token admin, alternating…`);
    const rbac = `/apis/${vocabulary.rbacGroup}/v1/namespaces/${namespace}`;
    await createAll(server, `${rbac}/roles`, Array.from({ length: roleCount }, (_, i) => ({
      metadata: { name: name(i) }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: i === roleCount / 2 ? ['serviceaccounts'] : [`things-${i}`] }],
    })));
    // Every binding names another user, but one: the bench user's, in the middle of the pack.
    await createAll(server, `${rbac}/rolebindings`, Array.from({ length: roleCount }, (_, i) => ({
      metadata: { name: name(i) }, roleRef: { apiGroup: vocabulary.rbacGroup, kind: 'Role', name: name(i) },
      subjects: [{ kind: 'User', name: i === roleCount / 2 ? 'bench-user' : `user-${i}` }, { kind: 'Group', name: `group-${i}` }],
    })));
    const admin = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: o.concurrency, bearerToken: adminToken });
    const user = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: o.concurrency, bearerToken: userToken });
    generators.push(admin, user);
    // Untimed first: JIT, sockets, and the binding reaching the index (a get fails until it has).
    const { admin: a, user: u } = await bestOfAlternatingGets({ admin, user }, { pid: server.pid, namespace, population, count, rounds: roundCount, timeoutMs });
    const share = u.perSec / a.perSec;
    const cell = rateCell;
    o.progress(`rbac: admin ${cell(a)}; RBAC user ${cell(u)}; user/admin ${share.toFixed(2)}`);
    return [
      { metric: `get ServiceAccount as a static-token admin (system:masters; best of ${roundCount} × ${fmtInt(count)}, alternating with the row below)`, result: cell(a), target: '—' },
      {
        metric: `get ServiceAccount as a static-token user allowed by one RoleBinding among ${fmtInt(roleCount)} Roles and ${fmtInt(roleCount)} RoleBindings (best of ${roundCount} × ${fmtInt(count)})`,
        result: `${cell(u)} · ${(share * 100).toFixed(0)} % of the admin's rate`,
        target: target('within 10 % of the admin\'s rate', Math.abs(share - 1) <= within),
      },
    ];
  } finally {
    for (const g of generators) await g.close().catch(() => {});
    await server.stop(2000).catch(() => {});
    if (!o.keep) rmSync(dataDir, { recursive: true, force: true });
  }
}
