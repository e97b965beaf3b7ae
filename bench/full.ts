// `npm run bench` (the suite `all`, bench/suites.ts): the full run. Starts the built CLI as a child
// process on a temporary SQLite data dir, drives it over HTTPS on 127.0.0.1
// from a worker_thread with 16 keep-alive clients, and prints one markdown
// table (metric | result | target) to stdout and to bench/results.md.
// Progress goes to stderr.
//
// Beside it runs a no-work HTTPS server (bench/nowork-server.ts: fixed small
// JSON answers) driven by the same load generator. Creates, gets and
// unconditional PUTs alternate with the same requests to the no-work server in
// slices of one phase, so that both sides of each ratio (real rate / no-work
// rate) are measured under the same load from whatever else runs on the
// machine: the ratios say how far the server is from what HTTPS allows here.
//
// Then the write path alone beside the same ceiling (bench/writes.ts: ConfigMap
// creates and unconditional PUTs in alternated rounds with the no-work server).
// Then reading at scale on a second server (bench/reads.ts: lists of 10,000
// ConfigMaps of 2 KiB, RSS with them cached, one event to 1,000 HTTP watchers,
// a 1,000 writes/s soak checked by 50 watchers), the in-process watch cache
// rows (bench/watchcache.ts, prefixed `cache:`) and the raw storage rows.
// Then gets at a converted version beside the stored one (bench/versions.ts),
// at a deprecated version beside a current one (bench/deprecation.ts),
// validation from a schema beside a create (bench/schemavalidation.ts), Ingresses
// and the endpoints controllers beside ConfigMaps (bench/namedgroups.ts),
// custom resources beside ConfigMaps (bench/customresources.ts), the
// operators' CRDs installed and an HTTPRoute create beside a ConfigMap's
// (bench/operators.ts), and the TypeScript client's CPU per get and watch
// event beside @kubernetes/client-node (bench/client.ts).
// Last, deleting a namespace of 10,000 objects with every controller running
// (bench/namespacedelete.ts, which also runs alone).
//
// In a full run, memory that follows the data (bench/memory.ts: RSS 30 s
// after ConfigMap, ServiceAccount and 100,000-ConfigMap loads, a restart
// holding 100,000, the event window's bound) and label-selector watchers
// beside unfiltered ones (bench/selectors.ts); both also run alone.
//
//   npm run bench -- [all] [--quick] [--no-reads] [--no-memory] [--no-cache] [--no-store] [--cpu-prof] [--keep] [--backend etcd3]
//
// (the flags' meanings are in bench/args.ts). --quick: fewer objects and
// lists, without the memory and selector rows, to bench/results.quick.md;
// --cpu-prof: the results file is not written; --backend etcd3: the SQLite
// server rows, then the same on a local etcd with one and with two API
// servers (bench/etcd.ts), to bench/results.etcd3.md.

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adminGet, BenchServer, cpuMs, NoWorkServer, readCredentials, rssBytes, settle, startBenchServer, startNoWorkServer } from './child.js';
import { LoadGenerator, PhaseResult as LoadResult } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { formatProfile } from './profile.js';
import { benchReads } from './reads.js';
import { benchStorage } from './storage.js';
import { benchBearerTokens } from './tokens.js';
import { benchWatchCache } from './watchcache.js';
import { benchEtcd } from './etcd.js';
import { benchAdmission } from './admission.js';
import { benchWrites } from './writes.js';
import { fmtInt, fmtMB, fmtCpu, fmtMs, summarise } from './stats.js';
import { markdownTable, Row, target } from './table.js';
import { targets, targetSummary } from './targets.js';
import { BenchArgsError, type ParsedArgs } from './args.js';

// The run's settings and counts, from its command line: configure() sets
// them before anything runs (a quick run's counts are smaller).
let onEtcd = false;
let quick = false;
let withStore = true;
let withReads = true;
let withCache = true;
let withMemory = true;
let cpuProf = false;
let keep = false;

const CONCURRENCY = 16;
let OBJECTS = 10_000;
let GETS = 10_000;
let UPDATES = 10_000;
const LIST_ITEMS = 500;
let LISTS = 1_000;
/** Untimed requests before the timed create, get, replace and list phases (of each server), so that they measure JIT-warm servers and client. */
let WARMUP = 1_000;
let LIST_WARMUP = 100;
/** Untimed requests of each method to the no-work server before anything is timed. */
let CLIENT_WARMUP = 5_000;
/** Slices a side-by-side phase is cut into; the real and the no-work server take turns. */
let SLICES = 10;

export type FullRunArgs = ParsedArgs<'quick' | 'no-reads' | 'no-memory' | 'no-cache' | 'no-store' | 'cpu-prof' | 'keep' | 'backend'>;

function configure(a: FullRunArgs): void {
  const backend = a.backend ?? 'sqlite';
  if (backend !== 'sqlite' && backend !== 'etcd3') throw new BenchArgsError(`--backend takes sqlite or etcd3, not ${JSON.stringify(backend)}`);
  onEtcd = backend === 'etcd3';
  quick = a.quick;
  // On etcd the run compares the foundation rows; the SQLite-only rows stay out.
  withStore = !a['no-store'] && !onEtcd;
  withReads = !a['no-reads'] && !onEtcd;
  withCache = !a['no-cache'] && !onEtcd;
  // Minutes of loads and 30 s holds: full runs only.
  withMemory = !a['no-memory'] && !onEtcd && !quick;
  cpuProf = a['cpu-prof'];
  keep = a.keep;
  OBJECTS = quick ? 1_000 : 10_000;
  GETS = quick ? 1_000 : 10_000;
  UPDATES = quick ? 1_000 : 10_000;
  LISTS = quick ? 100 : 1_000;
  WARMUP = quick ? 200 : 1_000;
  LIST_WARMUP = quick ? 20 : 100;
  CLIENT_WARMUP = quick ? 1_000 : 5_000;
  SLICES = quick ? 5 : 10;
}
const PHASE_TIMEOUT_MS = 120_000;

const goals = targets.foundation;

const t0 = performance.now();
const progress = (msg: string) => process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PhaseResult extends LoadResult {
  /** Server CPU time (user + system) per request, in ms. */
  serverCpuMs: number;
}

/** The slices of one side of a side-by-side phase, summed: all latencies, wall time and server CPU. */
class Merged {
  private readonly parts: Float64Array[] = [];
  private elapsedMs = 0;
  private cpuMs = 0;
  private readonly notes: Record<string, number> = {};

  add(r: { latencies: Float64Array; elapsedMs: number; notes: Record<string, number> }, serverCpuMs: number): void {
    this.parts.push(r.latencies);
    this.elapsedMs += r.elapsedMs;
    this.cpuMs += serverCpuMs;
    for (const [k, v] of Object.entries(r.notes)) this.notes[k] = (this.notes[k] ?? 0) + v;
  }

  result(): PhaseResult {
    const all = new Float64Array(this.parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of this.parts) { all.set(p, at); at += p.length; }
    return { ...summarise(all, this.elapsedMs), notes: this.notes, serverCpuMs: this.cpuMs / Math.max(1, all.length) };
  }
}

const phaseCell = (r: PhaseResult) =>
  `${fmtInt(r.perSec)} req/s · p50 ${fmtMs(r.p50ms)} · p99 ${fmtMs(r.p99ms)} · server CPU ${fmtCpu(r.serverCpuMs)}/req`;
const notes = (r: PhaseResult) => {
  const n = Object.entries(r.notes).map(([k, v]) => `${k}=${v}`).join(' ');
  return n ? ` (${n})` : '';
};

interface ServerFigures {
  firstStartMs: number;
  restartMs: number;
  stored: number;
  idleRss: number;
  loadedRss: number;
  restartRss: number;
  create: PhaseResult;
  get: PhaseResult;
  update: PhaseResult;
  replace: PhaseResult;
  list: PhaseResult;
  /** The same load against the no-work server, just before each real phase. */
  noWork: { post: PhaseResult; put: PhaseResult; get: PhaseResult };
  profiles: string[];
}

async function benchServer(dataDir: string): Promise<ServerFigures> {
  const profDir = join(dataDir, 'profiles');
  const nodeArgs = cpuProf ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  let server: BenchServer | undefined;
  let load: LoadGenerator | undefined;
  let noWorkServer: NoWorkServer | undefined;
  try {
    // 1. First start: empty data dir, so the key material is generated.
    server = await startBenchServer({ dataDir, nodeArgs });
    const firstStartMs = server.readyMs;
    progress(`first start ready in ${fmtMs(firstStartMs)} (${server.polls} polls) on ${server.url}, pid ${server.pid}`);
    await sleep(500);
    const idleRss = rssBytes(server.pid);
    progress(`idle RSS ${fmtMB(idleRss)}`);

    // 2. Load, generated from a worker thread, which also drives the no-work
    // server (serving with this server's key material, so the same credentials work).
    noWorkServer = await startNoWorkServer(dataDir);
    load = new LoadGenerator({ url: server.url, noWorkUrl: noWorkServer.url, creds: server.creds, concurrency: CONCURRENCY });
    const gen = load;
    const srvPid = server.pid;
    const phase = async (spec: PhaseSpec, warmup?: PhaseSpec): Promise<PhaseResult> => {
      if (warmup) await gen.run(warmup, PHASE_TIMEOUT_MS);
      await settle(srvPid);
      const cpu0 = cpuMs(srvPid);
      const r = await gen.run(spec, PHASE_TIMEOUT_MS);
      await settle(srvPid);
      return { ...r, serverCpuMs: (cpuMs(srvPid) - cpu0) / r.requests };
    };
    const noWorkPid = noWorkServer.pid;
    /**
     * `total` requests to each server in SLICES turns (who goes first alternates);
     * `real` gives the real server's slice of `count` requests from number `first` on.
     */
    const sideBySide = async (method: 'POST' | 'PUT' | 'GET', total: number, real: (first: number, count: number, slice: number) => PhaseSpec) => {
      const sides = { real: new Merged(), noWork: new Merged() };
      const noWorkSpec = (count: number): PhaseSpec => ({ kind: 'nowork', method, namespace: 'bench', prefix: 'sa-', population: OBJECTS, count });
      for (let slice = 0; slice < SLICES; slice++) {
        const first = Math.floor((total * slice) / SLICES);
        const count = Math.floor((total * (slice + 1)) / SLICES) - first;
        const turn = async (side: Merged, pid: number, spec: PhaseSpec) => {
          const cpu0 = cpuMs(pid);
          const r = await gen.runRaw(spec, PHASE_TIMEOUT_MS);
          // The controllers' work the real slice left (token secrets) is the slice's, not the next one's.
          const after = pid === srvPid ? await settle(pid) : 0;
          side.add({ ...r, elapsedMs: r.elapsedMs + after }, cpuMs(pid) - cpu0);
        };
        const turns = [() => turn(sides.real, srvPid, real(first, count, slice)), () => turn(sides.noWork, noWorkPid, noWorkSpec(count))];
        if (slice % 2 === 1) turns.reverse();
        for (const turn of turns) await turn();
      }
      const result = { real: sides.real.result(), noWork: sides.noWork.result() };
      progress(`${method}: real ${phaseCell(result.real)}${notes(result.real)}; no-work ${phaseCell(result.noWork)}`);
      return result;
    };
    const noWorkWarmup = (method: 'POST' | 'PUT' | 'GET') =>
      gen.run({ kind: 'nowork', method, namespace: 'bench', prefix: 'sa-', population: OBJECTS, count: WARMUP }, PHASE_TIMEOUT_MS);
    await load.run({ kind: 'namespaces', names: ['bench', 'bench-list', 'bench-warm'] }, PHASE_TIMEOUT_MS);
    // The client's JIT warms over some thousands of requests: warm it on the
    // no-work server first, so the first timed phase does not pay for it.
    progress(`warm the load generator: ${fmtInt(3 * CLIENT_WARMUP)} requests to the no-work server…`);
    for (const method of ['POST', 'PUT', 'GET'] as const) {
      await gen.run({ kind: 'nowork', method, namespace: 'bench', prefix: 'sa-', population: OBJECTS, count: CLIENT_WARMUP }, PHASE_TIMEOUT_MS);
    }

    progress(`create ${fmtInt(OBJECTS)} ServiceAccounts in namespace bench beside as many no-work POSTs, in ${SLICES} turns ` +
      `(after ${fmtInt(WARMUP)} untimed of each; the real ones in bench-warm)…`);
    await gen.run({ kind: 'create', namespace: 'bench-warm', prefix: 'warm-', count: WARMUP, remember: false }, PHASE_TIMEOUT_MS);
    await settle(srvPid);
    await noWorkWarmup('POST');
    const { real: create, noWork: noWorkPost } = await sideBySide('POST', OBJECTS,
      (first, count) => ({ kind: 'create', namespace: 'bench', prefix: 'sa-', count, first, remember: true }));

    progress(`get ${fmtInt(GETS)} at random beside as many no-work GETs (after ${fmtInt(WARMUP)} untimed of each)…`);
    await gen.run({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: OBJECTS, count: WARMUP, seed: 7 }, PHASE_TIMEOUT_MS);
    await noWorkWarmup('GET');
    const { real: get, noWork: noWorkGet } = await sideBySide('GET', GETS,
      (_first, count, slice) => ({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: OBJECTS, count, seed: 42 + slice }));

    progress(`update ${fmtInt(UPDATES)} (PUT with a label change)…`);
    const update = await phase({ kind: 'update', namespace: 'bench', prefix: 'sa-', population: OBJECTS, count: UPDATES, round: 1 });
    progress(`update: ${phaseCell(update)}${notes(update)}`);

    progress(`replace ${fmtInt(UPDATES)} (unconditional PUTs: no resourceVersion, new labels) beside as many no-work PUTs…`);
    await noWorkWarmup('PUT');
    const { real: replace, noWork: noWorkPut } = await sideBySide('PUT', UPDATES,
      (first, count) => ({ kind: 'replace', namespace: 'bench', prefix: 'sa-', population: OBJECTS, count, first, round: 2 }));
    await noWorkServer.stop();
    noWorkServer = undefined;

    progress(`fill namespace bench-list with ${LIST_ITEMS} ServiceAccounts…`);
    await load.run({ kind: 'create', namespace: 'bench-list', prefix: 'item-', count: LIST_ITEMS, remember: false }, PHASE_TIMEOUT_MS);
    progress(`list ${fmtInt(LISTS)} × ${LIST_ITEMS} items (after ${LIST_WARMUP} untimed)…`);
    const list = await phase(
      { kind: 'list', namespace: 'bench-list', count: LISTS, expectItems: LIST_ITEMS },
      { kind: 'list', namespace: 'bench-list', count: LIST_WARMUP, expectItems: LIST_ITEMS });
    progress(`list: ${phaseCell(list)}${notes(list)}`);

    const loadedRss = rssBytes(server.pid);
    progress(`RSS after load ${fmtMB(loadedRss)}`);
    await load.close();
    load = undefined;
    await server.stop();
    server = undefined;

    // 3. Restart on the same data dir, which now holds the objects above.
    const stored = OBJECTS + WARMUP + LIST_ITEMS;
    progress(`restart with ${fmtInt(stored)} ServiceAccounts stored…`);
    const creds = readCredentials(join(dataDir, 'admin.kubeconfig'));
    server = await startBenchServer({ dataDir, creds, nodeArgs });
    const restartMs = server.readyMs;
    progress(`restart ready in ${fmtMs(restartMs)} (${server.polls} polls)`);
    await sleep(500);
    const restartRss = rssBytes(server.pid);
    // The objects survived the restart: the last one written is there, with its replace.
    const last = await adminGet(server, `/api/v1/namespaces/bench/serviceaccounts/sa-${String(OBJECTS - 1).padStart(5, '0')}`);
    if (last.status !== 200 || JSON.parse(last.text).metadata?.labels?.['bench-round'] !== '2') {
      throw new Error(`after the restart the last ServiceAccount is missing or stale: HTTP ${last.status} ${last.text.slice(0, 300)}`);
    }
    progress(`idle RSS after restart ${fmtMB(restartRss)}`);
    await server.stop();
    server = undefined;

    let profiles: string[] = [];
    if (cpuProf) {
      try {
        profiles = readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile')).sort().map((f) => join(profDir, f));
      } catch { /* none written */ }
    }
    return {
      firstStartMs, restartMs, stored, idleRss, loadedRss, restartRss, create, get, update, replace, list, profiles,
      noWork: { post: noWorkPost, put: noWorkPut, get: noWorkGet },
    };
  } finally {
    await noWorkServer?.stop().catch(() => {});
    await load?.close().catch(() => {});
    await server?.stop(2000).catch(() => {});
  }
}

/** A rate as a share of the no-work server's, with both figures. */
function ratioCell(r: PhaseResult, noWork: PhaseResult): string {
  return `${(r.perSec / noWork.perSec).toFixed(2)} (${fmtInt(r.perSec)} / ${fmtInt(noWork.perSec)} req/s)`;
}

function serverRows(f: ServerFigures): Row[] {
  const mb = (b: number) => b / (1024 * 1024);
  const ratio = (r: PhaseResult, noWork: PhaseResult) => r.perSec / noWork.perSec;
  return [
    { metric: 'start-up to /readyz 200: first start (empty sqlite data dir, generates key material)', result: fmtMs(f.firstStartMs), target: '—' },
    { metric: `start-up to /readyz 200: restart (${fmtInt(f.stored)} ServiceAccounts stored)`, result: fmtMs(f.restartMs), target: target(`< ${goals.restartMs} ms`, f.restartMs < goals.restartMs) },
    { metric: `create ServiceAccount (${fmtInt(f.create.requests)} POSTs after ${fmtInt(WARMUP)} untimed, ${CONCURRENCY} clients, in ${SLICES} turns with the no-work POSTs)`, result: phaseCell(f.create), target: target(`≥ ${fmtInt(goals.createPerSec)} req/s`, f.create.perSec >= goals.createPerSec) },
    { metric: `get ServiceAccount (${fmtInt(f.get.requests)} random GETs after ${fmtInt(WARMUP)} untimed, in turns with the no-work GETs)`, result: phaseCell(f.get), target: target(`≥ ${fmtInt(goals.getPerSec)} req/s`, f.get.perSec >= goals.getPerSec) },
    { metric: `update ServiceAccount (${fmtInt(f.update.requests)} PUTs, label change${f.update.notes.conflicts ? `, ${f.update.notes.conflicts} conflicts retried` : ''})`, result: phaseCell(f.update), target: '—' },
    { metric: `replace ServiceAccount (${fmtInt(f.replace.requests)} unconditional PUTs: no resourceVersion, as kubectl replace sends; in turns with the no-work PUTs)`, result: phaseCell(f.replace), target: '—' },
    { metric: `no-work HTTPS server: POST (${fmtInt(f.noWork.post.requests)} after ${fmtInt(WARMUP)} untimed; same bodies, clients and TLS, fixed small JSON answer)`, result: phaseCell(f.noWork.post), target: '—' },
    { metric: `no-work HTTPS server: PUT (${fmtInt(f.noWork.put.requests)})`, result: phaseCell(f.noWork.put), target: '—' },
    { metric: `no-work HTTPS server: GET (${fmtInt(f.noWork.get.requests)})`, result: phaseCell(f.noWork.get), target: '—' },
    { metric: 'ratio: creates / no-work POSTs (req/s, side by side)', result: ratioCell(f.create, f.noWork.post), target: target(`≥ ${goals.createRatio}`, ratio(f.create, f.noWork.post) >= goals.createRatio) },
    { metric: 'ratio: unconditional PUTs / no-work PUTs (req/s, side by side)', result: ratioCell(f.replace, f.noWork.put), target: target(`≥ ${goals.replaceRatio}`, ratio(f.replace, f.noWork.put) >= goals.replaceRatio) },
    { metric: 'ratio: gets / no-work GETs (req/s, side by side)', result: ratioCell(f.get, f.noWork.get), target: '—' },
    { metric: `list ${LIST_ITEMS} ServiceAccounts (${fmtInt(f.list.requests)} lists after ${LIST_WARMUP} untimed)`, result: phaseCell(f.list), target: target(`≥ ${fmtInt(goals.listPerSec)} req/s`, f.list.perSec >= goals.listPerSec) },
    { metric: 'server RSS idle (0.5 s after first ready)', result: fmtMB(f.idleRss), target: target(`< ${goals.idleRssMB} MB`, mb(f.idleRss) < goals.idleRssMB) },
    { metric: 'server RSS after the load', result: fmtMB(f.loadedRss), target: '—' },
    { metric: 'server RSS idle after restart (0.5 s after ready)', result: fmtMB(f.restartRss), target: '—' },
  ];
}

/** The raw storage rows (also the `storage` suite alone). */
export async function storeRows(quickRun = quick): Promise<Row[]> {
  progress('store: raw storage benchmark (bench/storage.ts)…');
  const rows = await benchStorage(quickRun);
  return rows.map((r) => ({
    metric: `store: ${r.name}`,
    result: r.opsPerSec > 0 ? `${fmtInt(r.opsPerSec)} ops/s · p50 ${fmtMs(r.p50ms)} · p99 ${fmtMs(r.p99ms)}` : fmtMs(r.p50ms),
    target: '—',
  }));
}

/** The in-process watch cache rows (also the `watchcache` suite alone). */
export async function cacheRows(): Promise<Row[]> {
  progress('cache: in-process watch cache benchmark (bench/watchcache.ts)…');
  const rows = await benchWatchCache();
  return rows.map((r) => ({ metric: `cache: ${r.name}`, result: r.unit === 'ms' ? fmtMs(r.value) : `${fmtInt(r.value)} ${r.unit}`, target: '—' }));
}

function profilesIn(dir: string): string[] {
  try {
    return readdirSync(dir).filter((f) => f.endsWith('.cpuprofile')).sort().map((f) => join(dir, f));
  } catch {
    return [];
  }
}

const fmtLoad = () => loadavg().map((l) => l.toFixed(2)).join(' ');

/** The full run: every suite of the run in turn, one table to stdout and to bench/results*.md. */
export async function benchAll(a: FullRunArgs): Promise<void> {
  configure(a);
  const loadBefore = fmtLoad();
  progress(`load average before: ${loadBefore} (other processes share these ${availableParallelism()} CPUs; figures move with it)`);
  const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-'));
  // Also on Ctrl-C (child.ts turns the signal into an exit after killing the server).
  const removeDataDir = () => { if (!keep) rmSync(dataDir, { recursive: true, force: true }); };
  process.on('exit', removeDataDir);
  progress(`${quick ? 'quick' : 'full'} run: ${fmtInt(OBJECTS)} objects, ${CONCURRENCY} clients from a worker thread; data dir ${dataDir}`);
  // The reading-at-scale server gets a data dir of its own.
  const readsDir = mkdtempSync(join(tmpdir(), 'plat-bench-reads-'));
  const removeReadsDir = () => { if (!keep) rmSync(readsDir, { recursive: true, force: true }); };
  process.on('exit', removeReadsDir);
  const tokensDir = mkdtempSync(join(tmpdir(), 'plat-bench-tokens-'));
  process.on('exit', () => { if (!keep) rmSync(tokensDir, { recursive: true, force: true }); });
  let rows: Row[];
  try {
    const figures = await benchServer(dataDir);
    rows = serverRows(figures);
    for (const p of figures.profiles) process.stderr.write(formatProfile(p, 25) + '\n\n');
    const writes = await benchWrites({ quick, progress, cpuProf });
    rows.push(...writes.rows);
    rows.push(...(await benchBearerTokens(tokensDir, { quick, concurrency: CONCURRENCY, progress })));
    rows.push(...(await (await import('./rbac.js')).benchRbac({ quick, concurrency: CONCURRENCY, progress, keep })));
    rows.push(...(await (await import('./nodeauthz.js')).benchNodeAuthorizer({ quick, concurrency: CONCURRENCY, progress, keep })));
    rows.push(...(await (await import('./authn-external.js')).benchExternalAuthn({ quick, concurrency: CONCURRENCY, progress })));
    rows.push(...(await (await import('./aggregator.js')).benchAggregator({ quick, concurrency: CONCURRENCY, progress, keep })));
    if (onEtcd) {
      rows.push(...(await benchEtcd({ quick, progress, concurrency: CONCURRENCY, goals: targets.etcd, sqliteGetsPerSec: figures.get.perSec })));
    }
    if (withReads) {
      const profDir = join(readsDir, 'profiles');
      rows.push(...(await benchReads(readsDir, { quick, progress, nodeArgs: cpuProf ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [] })));
      for (const p of profilesIn(profDir)) process.stderr.write(formatProfile(p, 25) + '\n\n');
    }
  } finally {
    removeDataDir();
    removeReadsDir();
    if (keep) progress(`kept ${dataDir} and ${readsDir}`);
  }
  if (withMemory) {
    const memoryDir = mkdtempSync(join(tmpdir(), 'plat-bench-memory-'));
    try {
      rows.push(...(await (await import('./memory.js')).benchMemory(memoryDir, { quick, progress, heavy: true })));
      rows.push(...(await (await import('./selectors.js')).benchSelectors(mkdtempSync(join(memoryDir, 'selectors-')), { quick, progress })));
    } finally {
      if (!keep) rmSync(memoryDir, { recursive: true, force: true });
    }
  }
  if (withCache) rows.push(...(await cacheRows()));
  if (withStore) rows.push(...(await storeRows()));
  rows.push(...(await benchAdmission({ quick, progress })), ...(await (await import('./audit.js')).benchAudit({ quick, progress })));
  rows.push(...(await (await import('./versions.js')).benchVersions({ quick, progress })));
  rows.push(...(await (await import('./pods.js')).benchPods({ quick, progress })));
  rows.push(...(await (await import('./admission-plugins.js')).benchAdmissionPlugins({ quick, progress })));
  rows.push(...(await (await import('./namedgroups.js')).benchNamedGroups({ quick, progress })));
  rows.push(...(await (await import('./deployments.js')).benchDeployments({ quick, progress })));
  rows.push(...(await (await import('./deprecation.js')).benchDeprecation({ quick, progress })));
  if (!quick) rows.push(...(await (await import('./writeroad.js')).benchWriteRoad({ quick, progress })));
  rows.push(...(await (await import('./schemavalidation.js')).benchSchemaValidation({ quick, progress })));
  rows.push(...(await (await import('./customresources.js')).benchCustomResources({ quick, progress })));
  rows.push(...(await (await import('./operators.js')).benchOperators({ quick, progress })));
  rows.push(...(await (await import('./admissionpolicy.js')).benchAdmissionPolicy({ quick, progress })));
  rows.push(...(await (await import('./namespacedelete.js')).benchNamespaceDelete({ quick, progress })));
  // The TypeScript client beside @kubernetes/client-node: client CPU per get and per watch event.
  rows.push(...(await (await import('./client.js')).benchClient({ quick, progress })));

  const table = markdownTable(rows);
  process.stdout.write(table);
  process.stdout.write(targetSummary(rows));
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const header = [
    `# Benchmark results${onEtcd ? ' (--backend etcd3)' : ''}${quick ? ' (--quick)' : ''}`,
    '',
    `\`npm run bench${onEtcd || quick ? ' --' : ''}${onEtcd ? ' --backend etcd3' : ''}${quick ? ' --quick' : ''}\` on ${new Date().toISOString().slice(0, 10)}: Node ${process.version}, ` +
      `${availableParallelism()} × ${cpu.trim()}; server = built CLI child process, sqlite store, HTTPS on 127.0.0.1, ` +
      `${CONCURRENCY} keep-alive clients in a worker thread. The no-work rows are an HTTPS server with the same TLS set-up that only reads ` +
      `each body and answers fixed small JSON (bench/nowork-server.ts), driven by the same client in turns with the real phase it is the ceiling of; ` +
      `the ratio rows divide the two rates. The ConfigMap rows (bench/reads.ts) run on a second server: lists from one client, ` +
      `watch streams held by 2 worker threads (one TLS connection per watch), writes from the main thread or the load worker. ` +
      `\`cache:\` rows are bench/watchcache.ts and \`store:\` rows bench/storage.ts (in-process, no HTTP). ` +
      (onEtcd ? 'The `etcd3` rows (bench/etcd.ts) repeat the load on a local etcd 3.4 member (data on disk), with one API server and then two on the same etcd, 8 of the 16 clients on each. ' : '') +
      `Load average before the run ${loadBefore}, after ${fmtLoad()}; "server CPU" is the child's user + system time per request ` +
      `(/proc/<pid>/stat), steadier than req/s when other processes share the CPUs.`,
    '',
  ].join('\n');
  const done = `done in ${((performance.now() - t0) / 1000).toFixed(1)} s`;
  if (cpuProf) {
    // A profiled server is slower; keep its figures out of the results file.
    progress(`${done}; --cpu-prof: results file not written`);
    return;
  }
  const name = `results${onEtcd ? '.etcd3' : ''}${quick ? '.quick' : ''}.md`;
  const out = fileURLToPath(new URL(`../../bench/${name}`, import.meta.url));
  writeFileSync(out, header + '\n' + table);
  progress(`${done}; table written to ${out}`);
}
