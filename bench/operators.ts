// The custom resources of the most-used operators (test/fixtures/operators:
// Gateway API standard and experimental, prometheus-operator, Argo CD,
// Crossplane). Installing every CRD file from an empty server, by
// server-side apply as `kubectl apply --server-side` sends it, until every
// served version of every kind answers a list, beside installing as many
// small definitions the same way; then a Gateway API HTTPRoute with all its
// rules created, beside a ConfigMap of the same JSON size, in alternated
// rounds (server CPU per create; the HTTPRoute pays for its schema, its
// defaults and its 180-odd CEL rules).

import { Agent, request } from 'node:https';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { sendJson } from './http.js';
import { cpuMsPrecise, settle, type BenchServer, type StartOptions } from './child.js';
import { buildBaseline } from './codec.js';
import { formatProfile } from './profile.js';
import { formatPerf, perfAvailable, perfNodeArgs, perfRecord, summarisePerf } from './perfprofile.js';
import { runAlone, withBenchServer } from './session.js';
import { Row, target } from './table.js';
import { fmtCpu, fmtInt, fmtMs, median } from './stats.js';
import type { FieldError } from '../src/machinery/errors.js';

const CONCURRENCY = 16;
const TIMEOUT_MS = 60_000;
const namespace = 'routes';
const fixtures = fileURLToPath(new URL('../../test/fixtures/operators/', import.meta.url));

interface Crd { name: string; group: string; plural: string; versions: string[]; scope: string; body: string }

/** Every CRD of the fixtures, as the files hold them (the admission policy files left out). */
function operatorCrds(): Crd[] {
  const crds: Crd[] = [];
  for (const dir of ['gateway-api/standard', 'prometheus-operator', 'argo-cd', 'crossplane', 'gateway-api/experimental']) {
    for (const f of readdirSync(join(fixtures, dir)).filter((n) => n.endsWith('.yaml') && !n.includes('_vap_'))) {
      for (const doc of parseAllDocuments(readFileSync(join(fixtures, dir, f), 'utf8'))) {
        const crd = doc.toJS();
        if (crd?.kind !== 'CustomResourceDefinition') continue;
        crds.push({ name: crd.metadata.name, group: crd.spec.group, plural: crd.spec.names.plural, scope: crd.spec.scope,
          versions: crd.spec.versions.filter((v: { served: boolean }) => v.served).map((v: { name: string }) => v.name), body: JSON.stringify(crd) });
      }
    }
  }
  return crds;
}

function smallCrd(i: number): Crd {
  const group = 'small.example.com', plural = `smalls${i}`;
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `${plural}.${group}` },
    spec: { group, scope: 'Namespaced', names: { plural, singular: `small${i}`, kind: `Small${i}` },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } }] },
  };
  return { name: crd.metadata.name, group, plural, scope: 'Namespaced', versions: ['v1'], body: JSON.stringify(crd) };
}

/** Server-side apply of `body` (JSON is YAML), as kubectl sends it. */
function apply(agent: Agent, port: number, path: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: `${path}?fieldManager=kubectl&fieldValidation=Strict`, method: 'PATCH', agent,
      headers: { 'Content-Type': 'application/apply-patch+yaml', 'Content-Length': String(Buffer.byteLength(body)), Accept: 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    req.setTimeout(TIMEOUT_MS, () => req.destroy(new Error(`apply ${path} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Milliseconds from the first apply to every served version of every kind answering a list. */
async function install(agent: Agent, server: BenchServer, crds: Crd[]): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < crds.length) {
      const c = crds[next++]!;
      const status = await apply(agent, server.port, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${c.name}`, c.body);
      if (status !== 200 && status !== 201) throw new Error(`apply ${c.name}: HTTP ${status}`);
    }
  };
  // kubectl applies a file's objects one after the other; a few files at once stand for a few kubectl runs.
  await Promise.all(Array.from({ length: 4 }, worker));
  for (const c of crds) {
    for (const v of c.versions) {
      const path = `/apis/${c.group}/${v}/${c.plural}`;
      for (;;) {
        const r = await sendJson(agent, server.port, 'GET', path, undefined, TIMEOUT_MS);
        if (r.status === 200) break;
        if (performance.now() - t0 > TIMEOUT_MS) throw new Error(`${path} never served`);
        await new Promise((res) => setTimeout(res, 5));
      }
    }
  }
  return performance.now() - t0;
}

/** An HTTPRoute with every rule it may hold (16), each with matches, filters and weighted backends. */
/**
 * A route of 16 rules whose paths and backends are its own (they carry its
 * name), as different routes' are: a route whose values another route had
 * would find the rules' remembered outcomes (cel/remembered.ts) and measure
 * the memo instead of the rules.
 */
export function fullHttpRoute(name: string): Record<string, unknown> {
  const rules = Array.from({ length: 16 }, (_, r) => ({
    name: `rule-${r}`,
    matches: Array.from({ length: 4 }, (_, m) => ({
      path: { type: 'PathPrefix', value: `/${name}/service-${r}/v${m}` },
      headers: [{ name: 'x-tenant', value: `tenant-${m}` }, { type: 'RegularExpression', name: 'x-env', value: 'canary|stable' }],
      queryParams: [{ name: 'version', value: `${m}` }],
      method: 'GET',
    })),
    filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'x-route', value: `r${r}` }], remove: ['x-debug'] } }],
    backendRefs: [{ name: `${name}-svc-${r}`, port: 8080, weight: 90 }, { name: `${name}-svc-${r}-canary`, port: 8080, weight: 10 }],
  }));
  return {
    apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name, namespace },
    spec: { parentRefs: [{ name: 'gateway', sectionName: 'https' }], hostnames: ['www.example.com', 'api.example.com'], rules },
  };
}

function configMapOfSize(name: string, bytes: number): Record<string, unknown> {
  const base = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { route: '' } };
  const pad = Math.max(0, bytes - Buffer.byteLength(JSON.stringify(base)));
  return { ...base, data: { route: 'x'.repeat(pad) } };
}

async function cpuPerCreate(agent: Agent, server: BenchServer, count: number, path: string, make: (i: number) => unknown): Promise<number> {
  await settle(server.pid);
  const cpu0 = cpuMsPrecise(server.pid);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const r = await sendJson(agent, server.port, 'POST', path, make(i), TIMEOUT_MS);
      if (r.status !== 201) throw new Error(`POST ${path}: HTTP ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  await settle(server.pid);
  return (cpuMsPrecise(server.pid) - cpu0) / count;
}

/**
 * Server CPU per HTTPRoute create and per ConfigMap create of the same JSON
 * size, medians of alternated rounds; `start` runs another build or adds
 * node flags (a CPU profile of the server).
 */
async function routesBesideConfigMaps(crds: Crd[], quick: boolean, start: Omit<StartOptions, 'dataDir'> = {}, perf = false): Promise<{ route: number; map: number; bytes: number }> {
  const COUNT = quick ? 100 : 500;
  const ROUNDS = quick ? 3 : 5;
  return withBenchServer('plat-bench-operators-', CONCURRENCY, async ({ server }) => {
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
    try {
      await install(agent, server, crds.filter((c) => c.name === 'httproutes.gateway.networking.k8s.io' || c.name === 'gateways.gateway.networking.k8s.io'));
      await sendJson(agent, server.port, 'POST', '/api/v1/namespaces', { metadata: { name: namespace } }, TIMEOUT_MS);
      const size = Buffer.byteLength(JSON.stringify(fullHttpRoute('r0-000')));
      const routes = `/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/httproutes`;
      const maps = `/api/v1/namespaces/${namespace}/configmaps`;
      // Warm-up: the rules' closures are JIT-compiled on first use.
      await cpuPerCreate(agent, server, COUNT, routes, (i) => fullHttpRoute(`w${i}`));
      await cpuPerCreate(agent, server, COUNT, maps, (i) => configMapOfSize(`w${i}`, size));
      const r: number[] = [], m: number[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        r.push(await cpuPerCreate(agent, server, COUNT, routes, (i) => fullHttpRoute(`r${round}-${i}`)));
        m.push(await cpuPerCreate(agent, server, COUNT, maps, (i) => configMapOfSize(`r${round}-${i}`, size)));
      }
      if (perf) {
        // One more batch of each under Linux perf: where the server's CPU went, by function, µs per create.
        for (const [name, path, make] of [['HTTPRoute', routes, fullHttpRoute], ['ConfigMap', maps, (n: string) => configMapOfSize(n, size)]] as const) {
          const file = join(tmpdir(), `plat-bench-operators-${server.pid}-${name}.perf.data`);
          const stop = await perfRecord(server.pid, file);
          try { await cpuPerCreate(agent, server, COUNT, path, (i) => make(`perf-${i}`)); } finally { await stop(); }
          process.stderr.write(`${formatPerf(`${name} creates under perf`, summarisePerf(file, COUNT, true), 45)}\n`);
          rmSync(file, { force: true });
        }
      }
      return { route: median(r), map: median(m), bytes: size };
    } finally { agent.destroy(); }
  }, start);
}

export async function benchOperators(opts: { quick: boolean; progress: (m: string) => void }): Promise<Row[]> {
  const { quick, progress } = opts;
  const crds = operatorCrds();

  progress(`operators: installing ${crds.length} CRDs`);
  const installMs = await withBenchServer('plat-bench-operators-', CONCURRENCY, async ({ server }) => {
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
    try { return await install(agent, server, crds); } finally { agent.destroy(); }
  });
  const smallMs = await withBenchServer('plat-bench-operators-', CONCURRENCY, async ({ server }) => {
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
    try { return await install(agent, server, crds.map((_, i) => smallCrd(i))); } finally { agent.destroy(); }
  });

  progress('operators: HTTPRoute creates beside ConfigMaps');
  const { route, map, bytes } = await routesBesideConfigMaps(crds, quick);
  const ratio = map / route;
  return [
    { metric: `operator CRDs installed by server-side apply until every kind served (${crds.length} definitions, test/fixtures/operators)`,
      result: `${fmtMs(installMs)}; ${crds.length} small definitions: ${fmtMs(smallMs)}`, target: 'reported' },
    { metric: `HTTPRoute create with 16 rules (${fmtInt(bytes)} B JSON) vs ConfigMap of the same size, server CPU per create`,
      result: `${fmtCpu(route)} vs ${fmtCpu(map)} (${ratio.toFixed(2)}× the ConfigMap rate)`, target: target('≥ 0.5×', ratio >= 0.5) },
  ];
}

/**
 * `--routes`: only the HTTPRoute row, on this build and, with `--baseline
 * <commit>`, on that commit built beside it; `--cpu-prof` prints where each
 * server's CPU went (wall-clock samples: on a loaded machine, read shares,
 * not microseconds); `--perf`, where one more batch of each kind of create
 * spent the server's CPU (Linux perf, µs per create by function).
 */
async function routesAlone(): Promise<void> {
  const argv = process.argv.slice(2);
  const quick = argv.includes('--quick');
  const cpuProf = argv.includes('--cpu-prof');
  const perf = argv.includes('--perf') && perfAvailable();
  const at = argv.indexOf('--baseline');
  const commit = at >= 0 ? argv[at + 1] : undefined;
  const progress = (m: string) => process.stderr.write(`${m}\n`);
  const baseline = commit ? buildBaseline(commit, progress) : undefined;
  try {
    for (const [name, entry] of [['this build', undefined], ...(baseline ? [[commit!, baseline.cliPath]] : [])] as const) {
      const profDir = mkdtempSync(join(tmpdir(), 'plat-bench-operators-prof-'));
      try {
        progress(`operators: HTTPRoute creates beside ConfigMaps on ${name}`);
        const { route, map } = await routesBesideConfigMaps(operatorCrds(), quick, { entry, nodeArgs: [...(cpuProf ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), ...(perf ? perfNodeArgs : [])] }, perf);
        process.stdout.write(`| ${name} | HTTPRoute ${fmtCpu(route)} vs ConfigMap ${fmtCpu(map)} | ${(map / route).toFixed(2)}× |\n`);
        for (const f of readdirSync(profDir).filter((n) => n.endsWith('.cpuprofile'))) process.stderr.write(`${formatProfile(join(profDir, f), 40)}\n`);
      } finally { rmSync(profDir, { recursive: true, force: true }); }
    }
  } finally { baseline?.remove(); }
}

/**
 * `--in-process`: the HTTPRoute's own validation without a server, in a warm
 * loop over the bench's object (defaults applied, as the server has them):
 * the schema validator and the CEL rules apart, CPU µs per object; with
 * `--cpu-prof` on node's command line, a profile of just that.
 */
async function validationAlone(): Promise<void> {
  const { compileDefaulter } = await import('../src/api/validation/defaults.js');
  const { compileValidator } = await import('../src/api/validation/validator.js');
  const { compileRules } = await import('../src/api/validation/cel/rules.js');
  const { pruneDefaults, loadCel, loadRe2 } = await import('../src/api/validation/index.js');
  // The server loads both on the first write of a kind that needs them (engines.ts); so does this loop.
  await Promise.all([loadCel(), loadRe2()]);
  const { withOurMarkers } = await import('../src/api/apiextensions/schema.js');
  const file = join(fixtures, 'gateway-api/standard/gateway.networking.k8s.io_httproutes.yaml');
  const crd = parseAllDocuments(readFileSync(file, 'utf8'))[0]!.toJS();
  const v1 = crd.spec.versions.find((v: { name: string }) => v.name === 'v1');
  const schema = pruneDefaults(withOurMarkers(v1.schema.openAPIV3Schema));
  const withDefaults = compileDefaulter(schema);
  const objects = Array.from({ length: 50 }, (_, i) => { const o = fullHttpRoute(`r${i}`); withDefaults(o); return o; });
  const check = compileValidator(schema), rules = compileRules(schema)!;
  const rounds = process.argv.includes('--quick') ? 1000 : 5000;
  // Routes whose path values are each new (rule outcomes are remembered by the values they read: these find none).
  const newPaths = Array.from({ length: 2 * rounds }, (_, i) => {
    const o = fullHttpRoute(`n${i}`) as { spec: { rules: { matches: { path: { value: string } }[] }[] } };
    for (const rule of o.spec.rules) for (const m of rule.matches) m.path.value += `/${i}`;
    withDefaults(o);
    return o;
  });
  const celRules = (o: unknown) => { const errs: FieldError[] = []; rules(o, undefined, '', errs, { remaining: Number.MAX_SAFE_INTEGER }); if (errs.length) throw new Error(errs[0]!.describe()); };
  for (const [name, run, inputs] of [
    ['schema validator', (o: unknown) => check(o, '', []), objects],
    ['CEL rules', celRules, objects],
    ['CEL rules, every path value new', celRules, newPaths],
  ] as const) {
    for (let i = 0; i < rounds; i++) run(inputs[i % inputs.length]);
    const cpu0 = process.cpuUsage();
    for (let i = rounds; i < 2 * rounds; i++) run(inputs[i % inputs.length]);
    const cpu = process.cpuUsage(cpu0);
    process.stdout.write(`| ${name} | ${((cpu.user + cpu.system) / rounds).toFixed(0)} µs CPU per HTTPRoute |\n`);
  }
}

if (process.argv[1]?.endsWith('operators.js')) {
  if (process.argv.includes('--in-process')) await validationAlone();
  else if (process.argv.includes('--routes')) await routesAlone();
  else await runAlone(import.meta.url, benchOperators);
}
