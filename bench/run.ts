// `npm run bench`: the server benchmark. Starts the built CLI as a child
// process on a temporary SQLite data dir, drives it over HTTPS on 127.0.0.1
// from a worker_thread with 16 keep-alive clients, and prints one markdown
// table (metric | result | target) to stdout and to bench/results.md.
// Progress goes to stderr.
//
// Then reading at scale on a second server (bench/reads.ts: lists of 10,000
// ConfigMaps of 2 KiB, RSS with them cached, one event to 1,000 HTTP watchers,
// a 1,000 writes/s soak checked by 50 watchers), the in-process watch cache
// rows (bench/watchcache.ts, prefixed `cache:`) and the raw storage rows.
//
//   node dist/bench/run.js [--quick] [--no-reads] [--no-cache] [--no-store] [--cpu-prof] [--keep] [--backend etcd3]
//
//   --quick     fewer objects and lists (smoke run); writes bench/results.quick.md
//   --no-reads  skip the reading-at-scale rows (bench/reads.ts)
//   --no-cache  skip the in-process watch cache rows (bench/watchcache.ts)
//   --no-store  skip the raw storage rows (bench/storage.ts)
//   --cpu-prof  run the server under `node --cpu-prof` and print its hot spots to stderr
//               (the results file is then not written)
//   --keep      keep the temporary data dir (and the profiles in it)
//   --backend etcd3  the SQLite server rows, then the same on a local etcd with one and
//               with two API servers (bench/etcd.ts) and the etcd store rows; writes
//               bench/results.etcd3.md (needs the etcd binary)

import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { adminGet, BenchServer, cpuMs, readCredentials, rssBytes, startBenchServer } from './child.js';
import { LoadGenerator, PhaseResult as LoadResult } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { formatProfile } from './profile.js';
import { benchReads } from './reads.js';
import { benchStorage } from './storage.js';
import { benchBearerTokens } from './tokens.js';
import { benchWatchCache } from './watchcache.js';
import { benchEtcd } from './etcd.js';
import { fmtInt, fmtMB, fmtMs } from './stats.js';
import { markdownTable, Row, target } from './table.js';

const usage = 'usage: node dist/bench/run.js [--quick] [--no-reads] [--no-cache] [--no-store] [--cpu-prof] [--keep] [--backend etcd3]';
const argv = process.argv.slice(2);
let backend = 'sqlite';
const backendAt = argv.findIndex((a) => a === '--backend' || a.startsWith('--backend='));
if (backendAt >= 0) {
  const [arg] = argv.splice(backendAt, 1);
  backend = arg!.includes('=') ? arg!.slice('--backend='.length) : argv.splice(backendAt, 1)[0] ?? '';
  if (backend !== 'sqlite' && backend !== 'etcd3') {
    process.stderr.write(`--backend takes sqlite or etcd3, not ${JSON.stringify(backend)}\n${usage}\n`);
    process.exit(2);
  }
}
const onEtcd = backend === 'etcd3';
const flags = new Set(argv);
for (const a of flags) {
  if (a === '--help' || a === '-h') {
    process.stdout.write(usage + '\n');
    process.exit(0);
  }
  if (!['--quick', '--no-reads', '--no-cache', '--no-store', '--cpu-prof', '--keep'].includes(a)) {
    process.stderr.write(`unknown flag ${a}\n${usage}\n`);
    process.exit(2);
  }
}
const quick = flags.has('--quick');
// On etcd the run compares the foundation rows; the SQLite-only rows stay out.
const withStore = !flags.has('--no-store') && !onEtcd;
const withReads = !flags.has('--no-reads') && !onEtcd;
const withCache = !flags.has('--no-cache') && !onEtcd;
const cpuProf = flags.has('--cpu-prof');
const keep = flags.has('--keep');

const CONCURRENCY = 16;
const OBJECTS = quick ? 1_000 : 10_000;
const GETS = quick ? 1_000 : 10_000;
const UPDATES = quick ? 1_000 : 10_000;
const LIST_ITEMS = 500;
const LISTS = quick ? 100 : 1_000;
/** Untimed requests before the timed read phases, so that they measure a JIT-warm server. */
const GET_WARMUP = quick ? 200 : 1_000;
const LIST_WARMUP = quick ? 20 : 100;
const PHASE_TIMEOUT_MS = 120_000;

const goals = { restartMs: 500, idleRssMB: 100, createPerSec: 1_500, getPerSec: 5_000, listPerSec: 350 };

const t0 = performance.now();
const progress = (msg: string) => process.stderr.write(`[bench ${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${msg}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PhaseResult extends LoadResult {
  /** Server CPU time (user + system) per request, in ms. */
  serverCpuMs: number;
}

const phaseCell = (r: PhaseResult) =>
  `${fmtInt(r.perSec)} req/s · p50 ${fmtMs(r.p50ms)} · p99 ${fmtMs(r.p99ms)} · server CPU ${fmtMs(r.serverCpuMs)}/req`;
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
  list: PhaseResult;
  profiles: string[];
}

async function benchServer(dataDir: string): Promise<ServerFigures> {
  const profDir = join(dataDir, 'profiles');
  const nodeArgs = cpuProf ? ['--cpu-prof', '--cpu-prof-dir', profDir] : [];
  let server: BenchServer | undefined;
  let load: LoadGenerator | undefined;
  try {
    // 1. First start: empty data dir, so the key material is generated.
    server = await startBenchServer({ dataDir, nodeArgs });
    const firstStartMs = server.readyMs;
    progress(`first start ready in ${fmtMs(firstStartMs)} (${server.polls} polls) on ${server.url}, pid ${server.pid}`);
    await sleep(500);
    const idleRss = rssBytes(server.pid);
    progress(`idle RSS ${fmtMB(idleRss)}`);

    // 2. Load, generated from a worker thread.
    load = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: CONCURRENCY });
    const pid = server.pid;
    const gen = load;
    const phase = async (spec: PhaseSpec, warmup?: PhaseSpec): Promise<PhaseResult> => {
      if (warmup) await gen.run(warmup, PHASE_TIMEOUT_MS);
      const cpu0 = cpuMs(pid);
      const r = await gen.run(spec, PHASE_TIMEOUT_MS);
      return { ...r, serverCpuMs: (cpuMs(pid) - cpu0) / r.requests };
    };
    await load.run({ kind: 'namespaces', names: ['bench', 'bench-list'] }, PHASE_TIMEOUT_MS);

    progress(`create ${fmtInt(OBJECTS)} ServiceAccounts in namespace bench…`);
    const create = await phase({ kind: 'create', namespace: 'bench', prefix: 'sa-', count: OBJECTS, remember: true });
    progress(`create: ${phaseCell(create)}${notes(create)}`);

    progress(`get ${fmtInt(GETS)} at random (after ${fmtInt(GET_WARMUP)} untimed)…`);
    const get = await phase(
      { kind: 'get', namespace: 'bench', prefix: 'sa-', population: OBJECTS, count: GETS, seed: 42 },
      { kind: 'get', namespace: 'bench', prefix: 'sa-', population: OBJECTS, count: GET_WARMUP, seed: 7 });
    progress(`get: ${phaseCell(get)}${notes(get)}`);

    progress(`update ${fmtInt(UPDATES)} (PUT with a label change)…`);
    const update = await phase({ kind: 'update', namespace: 'bench', prefix: 'sa-', population: OBJECTS, count: UPDATES, round: 1 });
    progress(`update: ${phaseCell(update)}${notes(update)}`);

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
    const stored = OBJECTS + LIST_ITEMS;
    progress(`restart with ${fmtInt(stored)} ServiceAccounts stored…`);
    const creds = readCredentials(join(dataDir, 'admin.kubeconfig'));
    server = await startBenchServer({ dataDir, creds, nodeArgs });
    const restartMs = server.readyMs;
    progress(`restart ready in ${fmtMs(restartMs)} (${server.polls} polls)`);
    await sleep(500);
    const restartRss = rssBytes(server.pid);
    // The objects survived the restart: the last one written is there, with its update.
    const last = await adminGet(server, `/api/v1/namespaces/bench/serviceaccounts/sa-${String(OBJECTS - 1).padStart(5, '0')}`);
    if (last.status !== 200 || JSON.parse(last.text).metadata?.labels?.['bench-round'] !== '1') {
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
    return { firstStartMs, restartMs, stored, idleRss, loadedRss, restartRss, create, get, update, list, profiles };
  } finally {
    await load?.close().catch(() => {});
    await server?.stop(2000).catch(() => {});
  }
}

function serverRows(f: ServerFigures): Row[] {
  const mb = (b: number) => b / (1024 * 1024);
  return [
    { metric: 'start-up to /readyz 200: first start (empty sqlite data dir, generates key material)', result: fmtMs(f.firstStartMs), target: '—' },
    { metric: `start-up to /readyz 200: restart (${fmtInt(f.stored)} ServiceAccounts stored)`, result: fmtMs(f.restartMs), target: target(`< ${goals.restartMs} ms`, f.restartMs < goals.restartMs) },
    { metric: `create ServiceAccount (${fmtInt(f.create.requests)} POSTs, ${CONCURRENCY} clients)`, result: phaseCell(f.create), target: target(`≥ ${fmtInt(goals.createPerSec)} req/s`, f.create.perSec >= goals.createPerSec) },
    { metric: `get ServiceAccount (${fmtInt(f.get.requests)} random GETs after ${fmtInt(GET_WARMUP)} untimed)`, result: phaseCell(f.get), target: target(`≥ ${fmtInt(goals.getPerSec)} req/s`, f.get.perSec >= goals.getPerSec) },
    { metric: `update ServiceAccount (${fmtInt(f.update.requests)} PUTs, label change${f.update.notes.conflicts ? `, ${f.update.notes.conflicts} conflicts retried` : ''})`, result: phaseCell(f.update), target: '—' },
    { metric: `list ${LIST_ITEMS} ServiceAccounts (${fmtInt(f.list.requests)} lists after ${LIST_WARMUP} untimed)`, result: phaseCell(f.list), target: target(`≥ ${fmtInt(goals.listPerSec)} req/s`, f.list.perSec >= goals.listPerSec) },
    { metric: 'server RSS idle (0.5 s after first ready)', result: fmtMB(f.idleRss), target: target(`< ${goals.idleRssMB} MB`, mb(f.idleRss) < goals.idleRssMB) },
    { metric: 'server RSS after the load', result: fmtMB(f.loadedRss), target: '—' },
    { metric: 'server RSS idle after restart (0.5 s after ready)', result: fmtMB(f.restartRss), target: '—' },
  ];
}

async function storeRows(): Promise<Row[]> {
  progress('store: raw storage benchmark (bench/storage.ts)…');
  const rows = await benchStorage();
  return rows.map((r) => ({
    metric: `store: ${r.name}`,
    result: r.opsPerSec > 0 ? `${fmtInt(r.opsPerSec)} ops/s · p50 ${fmtMs(r.p50ms)} · p99 ${fmtMs(r.p99ms)}` : fmtMs(r.p50ms),
    target: '—',
  }));
}

async function cacheRows(): Promise<Row[]> {
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

async function main(): Promise<void> {
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
    rows.push(...(await benchBearerTokens(tokensDir, { quick, concurrency: CONCURRENCY, progress })));
    rows.push(...(await (await import('./rbac.js')).benchRbac({ quick, concurrency: CONCURRENCY, progress, keep })));
    if (onEtcd) {
      rows.push(...(await benchEtcd({ quick, progress, concurrency: CONCURRENCY, goals, sqliteGetsPerSec: figures.get.perSec })));
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
  if (withCache) rows.push(...(await cacheRows()));
  if (withStore) rows.push(...(await storeRows()));

  const table = markdownTable(rows);
  process.stdout.write(table);
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const header = [
    `# Benchmark results${onEtcd ? ' (--backend etcd3)' : ''}${quick ? ' (--quick)' : ''}`,
    '',
    `\`npm run bench${onEtcd || quick ? ' --' : ''}${onEtcd ? ' --backend etcd3' : ''}${quick ? ' --quick' : ''}\` on ${new Date().toISOString().slice(0, 10)}: Node ${process.version}, ` +
      `${availableParallelism()} × ${cpu.trim()}; server = built CLI child process, sqlite store, HTTPS on 127.0.0.1, ` +
      `${CONCURRENCY} keep-alive clients in a worker thread. The ConfigMap rows (bench/reads.ts) run on a second server: lists from one client, ` +
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

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`bench failed: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  },
);
