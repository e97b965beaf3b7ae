// Custom resources beside ConfigMaps, on one server, in alternated rounds:
// server CPU per create, per get (random among those created) and per list
// of 100, for a custom kind whose schema is a typical operator's (about 50
// properties, 3 CEL rules; bench/schemavalidation.ts) and for ConfigMaps of
// the same JSON size. The CEL share of a custom create is the difference
// with a second custom kind of the same schema without its rules. Last, how
// long a definition takes from its create's answer to served (discovery
// lists it and a GET of its collection answers 200 on the same server),
// median over 100 definitions.

import { Agent } from 'node:https';
import { sendJson } from './http.js';
import { cpuMsPrecise, settle, type BenchServer } from './child.js';
import { runAlone, withBenchServer } from './session.js';
import { Row, target } from './table.js';
import { fmtCpu, fmtInt, median } from './stats.js';
import { operatorObject, operatorSchema } from './schemavalidation.js';

export interface CustomResourceBenchOptions {
  quick: boolean;
  progress: (msg: string) => void;
}

const CONCURRENCY = 16;
const TIMEOUT_MS = 30_000;
const namespace = 'schemas';
const group = 'bench.example.com';


function definition(plural: string, kind: string, withRules: boolean, g = group): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.${g}` },
    spec: {
      group: g, scope: 'Namespaced', names: { plural, singular: kind.toLowerCase(), kind },
      versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: operatorSchema(withRules) } }],
    },
  };
}

/** Runs `count` requests made by `make(i)`, CONCURRENCY at a time; throws on an unexpected status. */
async function drive(agent: Agent, server: BenchServer, count: number, make: (i: number) => { method: string; path: string; body?: unknown; want: number }): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const r = make(next++);
      const reply = await sendJson(agent, server.port, r.method, r.path, r.body, TIMEOUT_MS);
      if (reply.status !== r.want) throw new Error(`${r.method} ${r.path}: HTTP ${reply.status} ${reply.body.toString('utf8').slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

/** Server CPU per request of one round. */
async function cpuPerRequest(server: BenchServer, count: number, round: () => Promise<void>): Promise<number> {
  await settle(server.pid);
  const cpu0 = cpuMsPrecise(server.pid);
  await round();
  await settle(server.pid);
  return (cpuMsPrecise(server.pid) - cpu0) / count;
}

async function served(agent: Agent, server: BenchServer, plural: string, g: string): Promise<void> {
  for (;;) {
    const discovery = await sendJson(agent, server.port, 'GET', `/apis/${g}/v1`, undefined, TIMEOUT_MS);
    if (discovery.status === 200 && JSON.parse(discovery.body.toString('utf8')).resources?.some((r: { name: string }) => r.name === plural)) {
      const list = await sendJson(agent, server.port, 'GET', `/apis/${g}/v1/namespaces/${namespace}/${plural}`, undefined, TIMEOUT_MS);
      if (list.status === 200) return;
    }
  }
}

export async function benchCustomResources(opts: CustomResourceBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 500 : 2_000;
  const ROUNDS = quick ? 3 : 5;
  const READS = quick ? 1_000 : 4_000;
  const LISTS = quick ? 100 : 300;
  const DEFINITIONS = quick ? 20 : 100;
  const sample = operatorObject(0);
  const bytes = Buffer.byteLength(JSON.stringify(sample));

  return withBenchServer('plat-bench-crd-', CONCURRENCY, async ({ server, agent: setup }) => {
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
    try {
      const post = async (path: string, body: unknown) => {
        const r = await sendJson(setup, server.port, 'POST', path, body, TIMEOUT_MS);
        if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
      };
      await post('/api/v1/namespaces', { metadata: { name: namespace } });
      await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', definition('apps', 'App', true));
      await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', definition('plainapps', 'PlainApp', false));
      // A custom kind of a ConfigMap's shape: what the custom road costs by itself.
      await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
        apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `blobs.${group}` },
        spec: { group, scope: 'Namespaced', names: { plural: 'blobs', singular: 'blob', kind: 'Blob' }, versions: [{ name: 'v1', served: true, storage: true,
          schema: { openAPIV3Schema: { type: 'object', properties: { data: { type: 'object', additionalProperties: { type: 'string' } } } } } }] },
      });
      await served(setup, server, 'apps', group);
      await served(setup, server, 'plainapps', group);
      await served(setup, server, 'blobs', group);

      const sides = {
        configmaps: { path: `/api/v1/namespaces/${namespace}/configmaps`, body: (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { blob: 'x'.repeat(bytes - 90) } }) },
        apps: { path: `/apis/${group}/v1/namespaces/${namespace}/apps`, body: (name: string, i: number) => ({ ...operatorObject(i), apiVersion: `${group}/v1`, metadata: { name, namespace } }) },
        blobs: { path: `/apis/${group}/v1/namespaces/${namespace}/blobs`, body: (name: string) => ({ apiVersion: `${group}/v1`, kind: 'Blob', metadata: { name, namespace }, data: { blob: 'x'.repeat(bytes - 90) } }) },
        plainapps: { path: `/apis/${group}/v1/namespaces/${namespace}/plainapps`, body: (name: string, i: number) => ({ ...operatorObject(i), apiVersion: `${group}/v1`, kind: 'PlainApp', metadata: { name, namespace } }) },
      };
      type Side = keyof typeof sides;
      const createRound = (side: Side, round: number, count: number) => cpuPerRequest(server, count, () => drive(agent, server, count, (i) => (
        { method: 'POST', path: sides[side].path, body: sides[side].body(`r${round}-${i}`, i), want: 201 })));
      progress('custom resources: warming up…');
      for (const side of Object.keys(sides) as Side[]) await createRound(side, -1, COUNT / 5);
      const cpu: Record<string, number[]> = {};
      const add = (k: string, v: number) => (cpu[k] ??= []).push(v);
      progress(`custom resources: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} creates, ${fmtInt(READS)} gets and ${fmtInt(LISTS)} lists of 100, per side…`);
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of Object.keys(sides) as Side[]) add(`create:${side}`, await createRound(side, round, COUNT));
        for (const side of ['configmaps', 'apps'] as Side[]) {
          add(`get:${side}`, await cpuPerRequest(server, READS, () => drive(agent, server, READS, (i) => ({ method: 'GET', path: `${sides[side].path}/r${round}-${(i * 7919) % COUNT}`, want: 200 }))));
          add(`list:${side}`, await cpuPerRequest(server, LISTS, () => drive(agent, server, LISTS, () => ({ method: 'GET', path: `${sides[side].path}?limit=100`, want: 200 }))));
        }
      }
      const m = (k: string) => median(cpu[k]!);
      const ratio = (custom: string, builtin: string) => m(builtin) / m(custom);

      progress(`custom resources: ${DEFINITIONS} definitions, each from its create's answer to served…`);
      const waits: number[] = [];
      for (let i = 0; i < DEFINITIONS; i++) {
        const g = `d${i}.${group}`;
        await post('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', definition('things', 'Thing', true, g));
        const t0 = performance.now();
        await served(setup, server, 'things', g);
        waits.push(performance.now() - t0);
      }
      const wait = median(waits);
      const celMs = Math.max(0, m('create:apps') - m('create:plainapps'));
      const note = `median of ${ROUNDS} alternated rounds`;
      return [
        { metric: `create a ConfigMap of ${fmtInt(bytes)} bytes (server CPU per create, ${note} of ${fmtInt(COUNT)})`, result: `${fmtCpu(m('create:configmaps'))}/create`, target: '—' },
        { metric: 'create a custom object of an operator-sized schema (~50 properties, 3 CEL rules), as large', result: `${fmtCpu(m('create:apps'))}/create · ${ratio('create:apps', 'create:configmaps').toFixed(2)}× a ConfigMap's rate`, target: target('at least 0.7×', ratio('create:apps', 'create:configmaps') >= 0.7) },
        { metric: 'create a custom object of a ConfigMap\'s shape (a map of strings), as large: the custom road by itself', result: `${fmtCpu(m('create:blobs'))}/create · ${ratio('create:blobs', 'create:configmaps').toFixed(2)}×`, target: '—' },
        { metric: 'of which the 3 CEL rules (beside the same kind without them)', result: `${fmtCpu(celMs)}/create · ${((100 * celMs) / m('create:apps')).toFixed(1)} % of the custom create`, target: '—' },
        { metric: `get a ConfigMap, random among ${fmtInt(COUNT)} (server CPU per get)`, result: `${fmtCpu(m('get:configmaps'))}/get`, target: '—' },
        { metric: 'get a custom object, as above', result: `${fmtCpu(m('get:apps'))}/get · ${ratio('get:apps', 'get:configmaps').toFixed(2)}×`, target: target('at least 0.9×', ratio('get:apps', 'get:configmaps') >= 0.9) },
        { metric: 'list 100 ConfigMaps (server CPU per list)', result: `${fmtCpu(m('list:configmaps'))}/list`, target: '—' },
        { metric: 'list 100 custom objects', result: `${fmtCpu(m('list:apps'))}/list · ${ratio('list:apps', 'list:configmaps').toFixed(2)}×`, target: target('at least 0.9×', ratio('list:apps', 'list:configmaps') >= 0.9) },
        { metric: `a definition from its create's answer to served (discovery lists it, its collection answers 200), median of ${DEFINITIONS}`, result: `${wait.toFixed(1)} ms`, target: target('under 100 ms', wait < 100) },
      ];
    } finally {
      agent.destroy();
    }
  });
}

// Alone: node dist/bench/customresources.js [--quick]
await runAlone(import.meta.url, benchCustomResources);
