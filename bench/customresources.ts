// Custom resources beside ConfigMaps, on one server, in alternated rounds:
// server CPU per create, per get (random among those created) and per list
// of 100, for a custom kind whose schema is a typical operator's (about 50
// properties, 3 CEL rules; bench/schemavalidation.ts) and for ConfigMaps of
// the same JSON size, with each side's rate beside. The CEL share of a
// custom create is the difference with a second custom kind of the same
// schema without its rules, round by round (the two rounds run one after
// the other; the median of the differences, which moves less than the
// difference of two medians). The warm-up creates as many objects of each
// kind as a round does: the rules' interpreter is many small closures, and
// in a fresh server its first couple of thousand evaluations cost three to
// four times the later ones (the JIT at work), enough to tip a round. Watch
// fan-out: creates of both kinds in a namespace 100 watchers of each kind
// watch, beside creates in one nobody watches (the difference, per event
// and watcher, is what delivering a watch event costs); each of the four
// kinds has as many watchers and as many objects created per round, so
// that their creates compare alike. Last, how
// long a definition takes from its create's answer to served (discovery
// lists it and a GET of its collection answers 200 on the same server),
// median over 100 definitions.
//
// With --perf (alone: `npm run bench -- customresources --perf`), one more
// phase of ConfigMap creates and one of custom creates run under Linux perf
// after the rounds, and where each one's server CPU went is printed to
// stderr by function, in µs per create (bench/perfprofile.ts).

import { Agent } from 'node:https';
import { sendJson } from './http.js';
import { cpuMsPrecise, settle, type BenchServer } from './child.js';
import { withBenchServer } from './session.js';
import { Row, target } from './table.js';
import { fmtCpu, fmtInt, median } from './stats.js';
import { operatorObject, operatorSchema } from './schemavalidation.js';
import { WatcherPool } from './watchers.js';
import { formatPerf, perfAvailable, perfNodeArgs, perfRecord, summarisePerf } from './perfprofile.js';

export interface CustomResourceBenchOptions {
  quick: boolean;
  /** Alternated rounds of each side (`--rounds N`); otherwise the suite's own count. */
  rounds?: number;
  progress: (msg: string) => void;
  /** Profile one more phase of ConfigMap and of custom creates with Linux perf, printed to stderr. */
  perf?: boolean;
}

const CONCURRENCY = 16;
const TIMEOUT_MS = 30_000;
const namespace = 'schemas';
/** The namespace the watchers watch. */
const watched = 'watched';
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

/** Requests per second of wall time of the last round cpuPerRequest measured. */
let lastRate = 0;

/** Server CPU per request of one round (its rate in lastRate). */
async function cpuPerRequest(server: BenchServer, count: number, round: () => Promise<void>): Promise<number> {
  await settle(server.pid);
  const cpu0 = cpuMsPrecise(server.pid);
  const t0 = performance.now();
  await round();
  lastRate = count / ((performance.now() - t0) / 1000);
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
  const COUNT = quick ? 300 : 2_000;
  const ROUNDS = opts.rounds ?? (quick ? 3 : 5);
  const READS = quick ? 600 : 4_000;
  const LISTS = quick ? 50 : 300;
  const DEFINITIONS = quick ? 20 : 100;
  const WATCHERS = 100;
  const sample = operatorObject(0);
  const bytes = Buffer.byteLength(JSON.stringify(sample));
  const perf = opts.perf === true && perfAvailable();
  if (opts.perf && !perf) progress('custom resources: perf is not available here (no profile)');

  return withBenchServer('plat-bench-crd-', CONCURRENCY, async ({ server, agent: setup, dataDir }) => {
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
    const watchers = new WatcherPool(server.url, server.creds, 2);
    try {
      const post = async (path: string, body: unknown) => {
        const r = await sendJson(setup, server.port, 'POST', path, body, TIMEOUT_MS);
        if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
      };
      await post('/api/v1/namespaces', { metadata: { name: namespace } });
      await post('/api/v1/namespaces', { metadata: { name: watched } });
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
        configmaps: { path: (ns: string) => `/api/v1/namespaces/${ns}/configmaps`, body: (name: string, _i: number, ns: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data: { blob: 'x'.repeat(bytes - 90) } }) },
        apps: { path: (ns: string) => `/apis/${group}/v1/namespaces/${ns}/apps`, body: (name: string, i: number, ns: string) => ({ ...operatorObject(i), apiVersion: `${group}/v1`, metadata: { name, namespace: ns } }) },
        plainapps: { path: (ns: string) => `/apis/${group}/v1/namespaces/${ns}/plainapps`, body: (name: string, i: number, ns: string) => ({ ...operatorObject(i), apiVersion: `${group}/v1`, kind: 'PlainApp', metadata: { name, namespace: ns } }) },
        blobs: { path: (ns: string) => `/apis/${group}/v1/namespaces/${ns}/blobs`, body: (name: string, _i: number, ns: string) => ({ apiVersion: `${group}/v1`, kind: 'Blob', metadata: { name, namespace: ns }, data: { blob: 'x'.repeat(bytes - 90) } }) },
      };
      type Side = keyof typeof sides;
      const createRound = (side: Side, round: number | string, count: number, ns = namespace) => cpuPerRequest(server, count, () => drive(agent, server, count, (i) => (
        { method: 'POST', path: sides[side].path(ns), body: sides[side].body(`r${round}-${i}`, i, ns), want: 201 })));
      const compared: Side[] = ['configmaps', 'apps'];
      const listPaths = { large: '/api/v1/namespaces/large/configmaps', configmaps: sides.configmaps.path(namespace), apps: sides.apps.path(namespace), blobs: sides.blobs.path(namespace) };
      const listed = Object.keys(listPaths) as (keyof typeof listPaths)[];
      // Every kind has its watchers, though only two are measured: the creates are compared side by side.
      progress(`custom resources: ${WATCHERS} watchers of each kind in ${watched}…`);
      for (const side of Object.keys(sides) as Side[]) await watchers.open(`${sides[side].path(watched)}?watch=true`, WATCHERS, 'marker');
      progress('custom resources: warming up…');
      for (const side of Object.keys(sides) as Side[]) await createRound(side, -1, COUNT);
      // ConfigMaps as large as a stored custom object (its managedFields included), for lists: what the bytes alone cost.
      const storedBytes = (await sendJson(setup, server.port, 'GET', `${sides.apps.path(namespace)}/r-1-0`, undefined, TIMEOUT_MS)).body.length;
      const asLarge = (await sendJson(setup, server.port, 'GET', `${sides.configmaps.path(namespace)}/r-1-0`, undefined, TIMEOUT_MS)).body.length;
      await post('/api/v1/namespaces', { metadata: { name: 'large' } });
      for (let i = 0; i < 100; i++) {
        await post('/api/v1/namespaces/large/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `l${i}` }, data: { blob: 'x'.repeat(bytes - 90 + storedBytes - asLarge) } });
      }
      const cpu: Record<string, number[]> = {};
      const rates: Record<string, number[]> = {};
      const add = (k: string, v: number) => { (cpu[k] ??= []).push(v); (rates[k] ??= []).push(lastRate); };
      progress(`custom resources: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} creates, ${fmtInt(READS)} gets and ${fmtInt(LISTS)} lists of 100, per side…`);
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of Object.keys(sides) as Side[]) add(`create:${side}`, await createRound(side, round, COUNT));
        // The rules' share of this round: the same schema without them ran right after.
        (cpu.cel ??= []).push(cpu['create:apps']!.at(-1)! - cpu['create:plainapps']!.at(-1)!);
        // Each watched round right after an unwatched one of the same kind: the pair's difference is the fan-out.
        // Every kind has them, measured or not: a create costs more in a larger collection (the watch cache's
        // sorted array takes each new key with a splice), so the kinds compared grow alike.
        for (const side of Object.keys(sides) as Side[]) add(`fanout:${side}`, ((await createRound(side, round, COUNT, watched)) - (await createRound(side, `u${round}`, COUNT))) / WATCHERS);
        for (const side of compared) {
          add(`get:${side}`, await cpuPerRequest(server, READS, () => drive(agent, server, READS, (i) => ({ method: 'GET', path: `${sides[side].path(namespace)}/r${round}-${(i * 7919) % COUNT}`, want: 200 }))));
        }
        // The lists in turn, the order reversed every other round, so that drift in the machine's load falls on all alike.
        for (const list of round % 2 ? [...listed].reverse() : listed) {
          add(`list:${list}`, await cpuPerRequest(server, LISTS, () => drive(agent, server, LISTS, () => ({ method: 'GET', path: `${listPaths[list]}?limit=100`, want: 200 }))));
        }
      }
      if (perf) {
        for (const side of ['configmaps', 'apps'] as const) {
          const file = `${dataDir}-${side}.perf.data`;
          const stop = await perfRecord(server.pid, file);
          await drive(agent, server, COUNT, (i) => ({ method: 'POST', path: sides[side].path(namespace), body: sides[side].body(`perf-${i}`, i, namespace), want: 201 }));
          await stop();
          process.stderr.write(formatPerf(`custom resources: ${fmtInt(COUNT)} ${side} creates under perf`, summarisePerf(file, COUNT, true), 45) + '\n');
        }
      }
      const m = (k: string) => median(cpu[k]!);
      const ratio = (custom: string, builtin: string) => m(builtin) / m(custom);
      const rate = (k: string) => `${fmtInt(median(rates[k]!))}/s`;

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
      const celMs = Math.max(0, m('cel'));
      const note = `median of ${ROUNDS} alternated rounds`;
      return [
        { metric: `create a ConfigMap of ${fmtInt(bytes)} bytes (server CPU per create, ${note} of ${fmtInt(COUNT)}; rate)`, result: `${fmtCpu(m('create:configmaps'))}/create · ${rate('create:configmaps')}`, target: '—' },
        { metric: 'create a custom object of an operator-sized schema (~50 properties, 3 CEL rules), as large', result: `${fmtCpu(m('create:apps'))}/create · ${rate('create:apps')} · ${ratio('create:apps', 'create:configmaps').toFixed(2)}× a ConfigMap's`, target: target('at least 0.7×', ratio('create:apps', 'create:configmaps') >= 0.7) },
        { metric: 'create a custom object of the same schema without its CEL rules', result: `${fmtCpu(m('create:plainapps'))}/create · ${rate('create:plainapps')} · ${ratio('create:plainapps', 'create:configmaps').toFixed(2)}×`, target: '—' },
        { metric: 'create a custom object of a ConfigMap\'s shape (a map of strings), as large: the custom road by itself', result: `${fmtCpu(m('create:blobs'))}/create · ${rate('create:blobs')} · ${ratio('create:blobs', 'create:configmaps').toFixed(2)}×`, target: '—' },
        { metric: 'of which the 3 CEL rules (median of the rounds\' differences with the kind without them)', result: `${fmtCpu(celMs)}/create · ${((100 * celMs) / m('create:apps')).toFixed(1)} % of the custom create (rounds: ${cpu.cel!.map((c) => (c * 1000).toFixed(0)).join(', ')} µs)`, target: '—' },
        { metric: `get a ConfigMap, random among ${fmtInt(COUNT)} (server CPU per get; rate)`, result: `${fmtCpu(m('get:configmaps'))}/get · ${rate('get:configmaps')}`, target: '—' },
        { metric: 'get a custom object, as above', result: `${fmtCpu(m('get:apps'))}/get · ${rate('get:apps')} · ${ratio('get:apps', 'get:configmaps').toFixed(2)}×`, target: target('at least 0.9×', ratio('get:apps', 'get:configmaps') >= 0.9) },
        // A list carries stored objects: the custom one is about twice its body (the defaults and, mostly,
        // the FieldsV1 of ~50 fields, which upstream stores too), and a list's cost beyond its fixed part is
        // its bytes (TLS and the socket). So lists are compared at equal stored bytes, and at equal bodies beside.
        { metric: `list 100 ConfigMaps as large as the stored custom objects (${fmtInt(storedBytes)} bytes, managedFields included; server CPU per list; rate)`, result: `${fmtCpu(m('list:large'))}/list · ${rate('list:large')}`, target: '—' },
        { metric: 'list 100 custom objects', result: `${fmtCpu(m('list:apps'))}/list · ${rate('list:apps')} · ${ratio('list:apps', 'list:large').toFixed(2)}× the list of ConfigMaps as large`, target: target('at least 0.9×', ratio('list:apps', 'list:large') >= 0.9) },
        { metric: `list 100 ConfigMaps of the custom objects' body size (${fmtInt(bytes)} bytes sent, ${fmtInt(asLarge)} stored)`, result: `${fmtCpu(m('list:configmaps'))}/list · ${rate('list:configmaps')} · the custom list at ${ratio('list:apps', 'list:configmaps').toFixed(2)}× its CPU`, target: '—' },
        { metric: 'list 100 custom objects of a ConfigMap\'s shape (as large as those ConfigMaps): the custom road by itself', result: `${fmtCpu(m('list:blobs'))}/list · ${rate('list:blobs')} · ${ratio('list:blobs', 'list:configmaps').toFixed(2)}×`, target: '—' },
        { metric: `watch event of a ConfigMap create, per watcher (${WATCHERS} watchers; server CPU of a watched create beyond an unwatched one)`, result: `${fmtCpu(m('fanout:configmaps'))}/event and watcher`, target: '—' },
        { metric: `watch event of a custom object create, as above`, result: `${fmtCpu(m('fanout:apps'))}/event and watcher · ${ratio('fanout:apps', 'fanout:configmaps').toFixed(2)}×`, target: '—' },
        { metric: `a definition from its create's answer to served (discovery lists it, its collection answers 200), median of ${DEFINITIONS}`, result: `${wait.toFixed(1)} ms`, target: target('under 100 ms', wait < 100) },
      ];
    } finally {
      agent.destroy();
      await watchers.closeStreams().catch(() => {});
      await watchers.terminate().catch(() => {});
    }
  }, perf ? { nodeArgs: perfNodeArgs } : {});
}
