// Ad-hoc (not committed): profile a server doing only custom creates / gets / lists.
import { Agent } from 'node:https';
import { mkdtempSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { sendJson } from './http.js';
import { withBenchServer } from './session.js';
import { operatorObject, operatorSchema } from './schemavalidation.js';
import { formatProfile } from './profile.js';

const what = process.argv[2] ?? 'create';
const kindSide = process.argv[3] ?? 'apps';
const profDir = mkdtempSync('/tmp/w28/prof-');
const group = 'bench.example.com';
const ns = 'schemas';
await withBenchServer('plat-crdprof-', 16, async ({ server, agent: setup }) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 16, ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
  const post = async (path: string, body: unknown) => { const r = await sendJson(setup, server.port, 'POST', path, body, 30000); if (r.status !== 201) throw new Error(r.body.toString()); };
  await post('/api/v1/namespaces', { metadata: { name: ns } });
  await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `apps.${group}` },
    spec: { group, scope: 'Namespaced', names: { plural: 'apps', singular: 'app', kind: 'App' }, versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: operatorSchema(true) } }] } });
  await new Promise((r) => setTimeout(r, 500));
  const bytes = Buffer.byteLength(JSON.stringify(operatorObject(0)));
  const path = kindSide === 'apps' ? `/apis/${group}/v1/namespaces/${ns}/apps` : `/api/v1/namespaces/${ns}/configmaps`;
  const body = (i: number) => kindSide === 'apps' ? { ...operatorObject(i), apiVersion: `${group}/v1`, metadata: { name: `a${i}`, namespace: ns } } : { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `a${i}`, namespace: ns }, data: { blob: 'x'.repeat(bytes - 90) } };
  const N = 4000;
  let next = 0;
  const run = async (count: number, make: (i: number) => [string, string, unknown, number]) => {
    next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => { while (next < count) { const [m, p, b, want] = make(next++); const r = await sendJson(agent, server.port, m, p, b, 30000); if (r.status !== want) throw new Error(`${r.status} ${r.body}`); } }));
  };
  const t0 = performance.now();
  await run(N, (i) => ['POST', path, body(i), 201]);
  console.log('creates', ((performance.now() - t0) / N * 1000).toFixed(0), 'us wall each');
  if (what === 'get') await run(20000, (i) => ['GET', `${path}/a${(i * 7919) % N}`, undefined, 200]);
  if (what === 'list') await run(1000, () => ['GET', `${path}?limit=100`, undefined, 200]);
  agent.destroy();
}, { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir] });
await new Promise((r) => setTimeout(r, 1000));
for (const f of readdirSync(profDir)) console.log(formatProfile(join(profDir, f), 45));
