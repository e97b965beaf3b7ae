// The foundation rows again on a local etcd (`npm run bench -- --backend etcd3`):
// one etcd member (data on disk, in the temp folder), first one API server
// under the load, then two servers on the same etcd sharing the same load
// (half the clients on each), plus raw store rows for the etcd backend.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchServer, cpuMsPrecise, serverMetric, settle, startBenchServer } from './child.js';
import { BurstClient } from './burst.js';
import { benchBearerTokens } from './tokens.js';
import { LoadGenerator, PhaseResult } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { fmtInt, fmtCpu, fmtMs, median } from './stats.js';
import { Row, target } from './table.js';
import { startEtcd } from '../test/support/etcd.js';
import { EtcdBackend } from '../src/storage/etcd/store.js';
import { measureBackend } from './storage.js';

export interface EtcdBenchOptions {
  quick: boolean;
  concurrency: number;
  progress(msg: string): void;
  goals: { createPerSec: number; getPerSec: number };
  /** The SQLite get rate of this run, to compare the etcd servers' cache reads with. */
  sqliteGetsPerSec?: number;
  /** Another build's CLI to run the servers with (startBenchServer's entry): the same rows for a baseline. */
  entry?: string;
}

interface Combined {
  perSec: number;
  requests: number;
  p50ms: number;
  p99ms: number;
  serverCpuMs: number;
  /** The servers' CPU over a quiet spell as long as the phase, taken off serverCpuMs (lessIdle). */
  idleCpuMs?: number;
  /** Reads of etcd's head per request, all servers together (lessIdle phases). */
  headReadsPerRequest?: number;
}

const PHASE_TIMEOUT_MS = 180_000;
const revisionReads = 'apiserver_storage_revision_reads_total';

/** How much longer than the batches the quiet spell lasts (its reads are scaled down by as much). */
const quietSpellFactor = 4;

/**
 * `batches` rounds of `size` consistent GETs sent as one burst each (each
 * round waits for the last answer), against a quiet spell `quietSpellFactor`
 * times as long: the server's reads of etcd's revision in each (its own
 * background work reads too: leader election and its identity lease read
 * their Leases every few seconds).
 */
async function revisionReadsPerBatch(server: BenchServer, batches: number, size: number, population: number): Promise<{ loaded: number; quiet: number; ms: number }> {
  const client = await BurstClient.open(server.port, server.creds, size);
  const paths = (b: number) => Array.from({ length: size }, (_, i) => `/api/v1/namespaces/bench/serviceaccounts/sa-${String((b * size + i) % population).padStart(5, '0')}`);
  try {
    await client.getAll(paths(0)); // the server's side of each connection warmed
    const before = await serverMetric(server, revisionReads);
    const t0 = performance.now();
    for (let b = 0; b < batches; b++) {
      const statuses = await client.getAll(paths(b));
      if (statuses.some((s) => s !== 200)) throw new Error(`a consistent get failed: ${statuses.join(' ')}`);
    }
    const ms = performance.now() - t0;
    const loaded = (await serverMetric(server, revisionReads)) - before;
    const idle0 = await serverMetric(server, revisionReads);
    await new Promise((r) => setTimeout(r, ms * quietSpellFactor));
    const quiet = ((await serverMetric(server, revisionReads)) - idle0) / quietSpellFactor;
    return { loaded, quiet, ms };
  } finally {
    client.close();
  }
}
/** The round of median server CPU, with the median rate. */
function medianOf(xs: Combined[]): Combined {
  const cpu = median(xs.map((x) => x.serverCpuMs));
  return { ...xs.find((x) => x.serverCpuMs === cpu)!, perSec: median(xs.map((x) => x.perSec)) };
}
const cell = (r: Combined) => `${fmtInt(r.perSec)} req/s · p50 ${fmtMs(r.p50ms)} · p99 ${fmtMs(r.p99ms)} · server CPU ${fmtCpu(r.serverCpuMs)}/req`
  + (r.idleCpuMs === undefined ? '' : ` (less ${fmtInt(r.idleCpuMs)} ms of idle CPU)`)
  + (r.headReadsPerRequest ? ` · ${r.headReadsPerRequest.toFixed(3)} reads of etcd's head per get` : '');

/**
 * Runs one phase per server at once (each its own spec) and sums them: rate over the longest, the worse percentiles.
 * `settled`: each server's CPU is read once it has gone quiet (a write phase's watch events and controller work count).
 * `lessIdle`: each server's CPU over a quiet spell as long as the phase, right after it, is taken off (its background
 * work: leases, leader election, the watch stream), so that a read phase is charged for its requests alone.
 */
async function together(servers: BenchServer[], loads: LoadGenerator[], specs: PhaseSpec[], settled = false, lessIdle = false): Promise<Combined> {
  if (settled) await Promise.all(servers.map((s) => settle(s.pid)));
  const headReads = () => Promise.all(servers.map((s) => serverMetric(s, revisionReads))).then((xs) => xs.reduce((a, b) => a + b, 0));
  const reads0 = lessIdle ? await headReads() : 0;
  const cpu0 = servers.map((s) => cpuMsPrecise(s.pid));
  const t0 = performance.now();
  const results: PhaseResult[] = await Promise.all(loads.map((load, i) => load.run(specs[i]!, PHASE_TIMEOUT_MS)));
  const wallMs = performance.now() - t0;
  if (settled) await Promise.all(servers.map((s) => settle(s.pid)));
  let cpu = servers.reduce((sum, s, i) => sum + cpuMsPrecise(s.pid) - cpu0[i]!, 0);
  const reads = lessIdle ? await headReads() - reads0 : 0;
  let idleCpuMs: number | undefined;
  if (lessIdle) {
    const idle0 = servers.map((s) => cpuMsPrecise(s.pid));
    await new Promise((r) => setTimeout(r, wallMs));
    idleCpuMs = servers.reduce((sum, s, i) => sum + cpuMsPrecise(s.pid) - idle0[i]!, 0);
    cpu -= idleCpuMs;
  }
  const requests = results.reduce((sum, r) => sum + r.requests, 0);
  const elapsedS = Math.max(...results.map((r) => r.requests / r.perSec));
  return {
    requests, perSec: requests / elapsedS,
    p50ms: Math.max(...results.map((r) => r.p50ms)), p99ms: Math.max(...results.map((r) => r.p99ms)),
    serverCpuMs: cpu / requests, idleCpuMs, headReadsPerRequest: lessIdle ? reads / requests : undefined,
  };
}

export async function benchEtcd(options: EtcdBenchOptions): Promise<Row[]> {
  const { quick, progress, concurrency } = options;
  const objects = quick ? 1_000 : 10_000;
  const gets = quick ? 2_000 : 20_000;
  const listItems = 500;
  const lists = quick ? 100 : 1_000;
  const etcd = await startEtcd(1, tmpdir());
  const dirs = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'plat-bench-etcd-')));
  const servers: BenchServer[] = [];
  const loads: LoadGenerator[] = [];
  const rows: Row[] = [];
  const extraArgs = ['--storage-backend', 'etcd3', '--etcd-servers', etcd.endpoints];
  try {
    progress(`etcd at ${etcd.endpoints} (data on disk); one API server…`);
    servers.push(await startBenchServer({ dataDir: dirs[0]!, extraArgs, entry: options.entry }));
    progress(`first server ready in ${fmtMs(servers[0]!.readyMs)}`);
    loads.push(new LoadGenerator({ url: servers[0]!.url, creds: servers[0]!.creds, concurrency }));
    const one = (spec: PhaseSpec, settled = false, lessIdle = false) => together(servers.slice(0, 1), loads.slice(0, 1), [spec], settled, lessIdle);
    await loads[0]!.run({ kind: 'namespaces', names: ['bench', 'bench-list', 'bench-cm'] }, PHASE_TIMEOUT_MS);
    // ConfigMaps of 1 KiB: the write path alone (no controller work), as bench/writes.ts measures it on SQLite.
    await loads[0]!.run({ kind: 'create-cm', namespace: 'bench-cm', prefix: 'warm-', count: Math.min(1_000, objects), bytes: 1024 }, PHASE_TIMEOUT_MS);
    // Beside a server on SQLite, in alternated rounds: the same creates, each server's CPU until it is quiet again.
    const sqliteServer = await startBenchServer({ dataDir: dirs[2]!, entry: options.entry });
    const sqliteLoad = new LoadGenerator({ url: sqliteServer.url, creds: sqliteServer.creds, concurrency });
    const rounds = quick ? 3 : 5;
    const perRound = Math.floor(objects / rounds);
    const onEtcd: Combined[] = [];
    const onSqlite: Combined[] = [];
    const ratios: number[] = [];
    try {
      await sqliteLoad.run({ kind: 'namespaces', names: ['bench-cm'] }, PHASE_TIMEOUT_MS);
      await sqliteLoad.run({ kind: 'create-cm', namespace: 'bench-cm', prefix: 'warm-', count: Math.min(1_000, objects), bytes: 1024 }, PHASE_TIMEOUT_MS);
      for (let round = 0; round < rounds; round++) {
        const spec: PhaseSpec = { kind: 'create-cm', namespace: 'bench-cm', prefix: `one${round}-`, count: perRound, bytes: 1024 };
        const etcdRound = () => one(spec, true).then((r) => onEtcd.push(r));
        const sqliteRound = () => together([sqliteServer], [sqliteLoad], [spec], true).then((r) => onSqlite.push(r));
        if (round % 2 === 0) { await etcdRound(); await sqliteRound(); } else { await sqliteRound(); await etcdRound(); }
        ratios.push(onEtcd[round]!.serverCpuMs / onSqlite[round]!.serverCpuMs);
        progress(`ConfigMap create round ${round}: etcd ${cell(onEtcd[round]!)}; SQLite ${cell(onSqlite[round]!)}`);
      }
    } finally {
      await sqliteLoad.close();
      await sqliteServer.stop(2000);
    }
    const createCm1 = medianOf(onEtcd);
    const sqliteCreate = medianOf(onSqlite);
    const cpuRatio = median(ratios);

    const create1 = await one({ kind: 'create', namespace: 'bench', prefix: 'sa-', count: objects, remember: true });
    progress(`1 server create: ${cell(create1)}`);
    await loads[0]!.run({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: objects, count: 1_000, seed: 7 }, PHASE_TIMEOUT_MS);
    // Gets start once the server is quiet: the ServiceAccounts' token Secrets are still being made after the creates answered.
    const get1 = await one({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: objects, count: gets, seed: 42 }, true, true);
    progress(`1 server get: ${cell(get1)}`);
    const cached1 = await one({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: objects, count: gets, seed: 43, anyVersion: true }, false, true);
    progress(`1 server get resourceVersion=0: ${cell(cached1)}`);
    const batches = quick ? 100 : 500;
    const batch = await revisionReadsPerBatch(servers[0]!, batches, concurrency, objects);
    const perBatch = (batch.loaded - batch.quiet) / batches;
    progress(`1 server: ${batch.loaded} revision reads for ${batches} batches of ${concurrency} consistent gets (${batch.quiet} in as long a quiet spell)`);
    const update1 = await one({ kind: 'update', namespace: 'bench', prefix: 'sa-', population: objects, count: objects, round: 1 });
    progress(`1 server update: ${cell(update1)}`);
    await loads[0]!.run({ kind: 'create', namespace: 'bench-list', prefix: 'item-', count: listItems, remember: false }, PHASE_TIMEOUT_MS);
    const list1 = await one({ kind: 'list', namespace: 'bench-list', count: lists, expectItems: listItems });
    progress(`1 server list: ${cell(list1)}`);

    progress('a second API server on the same etcd; the same load split over both…');
    servers.push(await startBenchServer({ dataDir: dirs[1]!, extraArgs, entry: options.entry }));
    // The same 16 clients in all, half on each server.
    await Promise.all(loads.splice(0).map((l) => l.close()));
    for (const s of servers) loads.push(new LoadGenerator({ url: s.url, creds: s.creds, concurrency: concurrency / 2 }));
    const half = (n: number) => Math.floor(n / 2);
    const two = (make: (i: number) => PhaseSpec, settled = false, lessIdle = false) => together(servers, loads, [make(0), make(1)], settled, lessIdle);
    await two((i) => ({ kind: 'create-cm', namespace: 'bench-cm', prefix: `warm${i}-`, count: 500, bytes: 1024 }));
    const createCm2 = await two((i) => ({ kind: 'create-cm', namespace: 'bench-cm', prefix: `two${i}-`, count: half(objects), bytes: 1024 }), true);
    progress(`2 servers ConfigMap create: ${cell(createCm2)}`);
    const create2 = await two((i) => ({ kind: 'create', namespace: 'bench', prefix: `sa${i}-`, count: half(objects), remember: true }));
    progress(`2 servers create: ${cell(create2)}`);
    await two((i) => ({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: objects, count: 500, seed: 7 + i }));
    const get2 = await two((i) => ({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: objects, count: half(gets), seed: 42 + i }), true, true);
    progress(`2 servers get: ${cell(get2)}`);
    const cached2 = await two((i) => ({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: objects, count: half(gets), seed: 44 + i, anyVersion: true }), false, true);
    progress(`2 servers get resourceVersion=0: ${cell(cached2)}`);
    // One server and two behind the same clients, in alternated rounds now that both run, each round's CPU net of the
    // servers' idle CPU; beside them one server with half the clients (the load each of the two gets).
    const solo = new LoadGenerator({ url: servers[0]!.url, creds: servers[0]!.creds, concurrency });
    const soloHalf = new LoadGenerator({ url: servers[0]!.url, creds: servers[0]!.creds, concurrency: concurrency / 2 });
    const getRounds = quick ? 3 : 5;
    const perGetRound = quick ? 2_000 : 8_000;
    const legs = { one: [] as Combined[], two: [] as Combined[], oneHalf: [] as Combined[] };
    const getSpec = (count: number, seed: number): PhaseSpec => ({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: objects, count, seed });
    try {
      for (let round = 0; round < getRounds; round++) {
        const run = {
          one: () => together(servers.slice(0, 1), [solo], [getSpec(perGetRound, 100 + round)], true, true),
          two: () => two((i) => getSpec(half(perGetRound), 200 + 2 * round + i), true, true),
          oneHalf: () => together(servers.slice(0, 1), [soloHalf], [getSpec(half(perGetRound), 300 + round)], true, true),
        };
        const order = (['one', 'two', 'oneHalf'] as const).map((_, i, all) => all[(i + round) % all.length]!);
        for (const leg of order) legs[leg].push(await run[leg]());
        progress(`consistent gets, round ${round}: 1 server ${cell(legs.one[round]!)}; 2 servers ${cell(legs.two[round]!)}; 1 server with ${concurrency / 2} clients ${cell(legs.oneHalf[round]!)}`);
      }
    } finally {
      await solo.close();
      await soloHalf.close();
    }
    const twoOverOne = legs.two.map((t, i) => t.serverCpuMs / legs.one[i]!.serverCpuMs);
    const twoOverHalf = legs.two.map((t, i) => t.serverCpuMs / legs.oneHalf[i]!.serverCpuMs);
    const list2 = await two(() => ({ kind: 'list', namespace: 'bench-list', count: half(lists), expectItems: listItems }));
    progress(`2 servers list: ${cell(list2)}`);

    const getRatio = get2.perSec / get1.perSec;
    const sqliteGets = options.sqliteGetsPerSec;
    const scale = (two: Combined, one: Combined) => `${(two.serverCpuMs / one.serverCpuMs).toFixed(2)}× one server's CPU per request, ${(two.perSec / one.perSec).toFixed(2)}× its rate`;
    rows.push(
      {
        metric: `etcd3, 1 server: create ConfigMap of 1 KiB (median of ${rounds} rounds × ${fmtInt(perRound)} POSTs, ${concurrency} clients, alternated with a server on SQLite; server CPU until the server is quiet again)`,
        result: `${cell(createCm1)} · on SQLite ${cell(sqliteCreate)} · median of the rounds' etcd/SQLite CPU ${cpuRatio.toFixed(2)}× (rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')})`,
        target: target('server CPU ≤ 1.1× SQLite\'s', cpuRatio <= 1.1),
      },
      {
        metric: `etcd3, 2 servers: create ConfigMap of 1 KiB (${fmtInt(createCm2.requests)} POSTs, ${concurrency / 2} clients on each; CPU of both servers per create)`,
        result: `${cell(createCm2)} · ${scale(createCm2, createCm1)}`,
        target: target('CPU per create within 10 % of one server\'s', Math.abs(createCm2.serverCpuMs / createCm1.serverCpuMs - 1) <= 0.1),
      },
      {
        metric: `etcd3, 2 servers against 1: server CPU per consistent get (${getRounds} alternated rounds of ${fmtInt(perGetRound)} GETs from ${concurrency} clients on one server, on two, and from ${concurrency / 2} on one; each round's CPU net of the servers' idle CPU over as long a quiet spell)`,
        result: `median of the rounds' two/one ${median(twoOverOne).toFixed(2)}× (rounds: ${twoOverOne.map((r) => r.toFixed(2)).join(', ')}) · one server ${cell(medianOf(legs.one))} · two ${cell(medianOf(legs.two))}`,
        target: target('within 10 %', Math.abs(median(twoOverOne) - 1) <= 0.1),
      },
      {
        metric: `etcd3, 1 server with ${concurrency / 2} clients (the load each of the two servers gets), the third leg of the rounds above`,
        result: `${cell(medianOf(legs.oneHalf))} · the two servers' CPU per get ${median(twoOverHalf).toFixed(2)}× this (rounds: ${twoOverHalf.map((r) => r.toFixed(2)).join(', ')})`, target: '—',
      },
    );
    rows.push(
      { metric: `etcd3, 1 server: create ServiceAccount (${fmtInt(create1.requests)} POSTs, ${concurrency} clients)`, result: cell(create1), target: target(`≥ ${fmtInt(options.goals.createPerSec)} req/s`, create1.perSec >= options.goals.createPerSec) },
      {
        metric: `etcd3, 1 server: get ServiceAccount (${fmtInt(get1.requests)} random GETs from the watch cache, each after a linearizable read of etcd's revision)`, result: cell(get1),
        target: sqliteGets ? target(`as on sqlite (${fmtInt(sqliteGets)} req/s this run, ±15%)`, get1.perSec >= sqliteGets * 0.85) : '—',
      },
      { metric: `etcd3, 1 server: get ServiceAccount with resourceVersion=0 (${fmtInt(cached1.requests)} GETs, the watch cache alone)`, result: cell(cached1), target: '—' },
      {
        metric: `etcd3, 1 server: reads of etcd's revision for ${batches} batches of ${concurrency} concurrent consistent gets (apiserver_storage_revision_reads_total; beside: the same server's reads in as long a quiet spell)`,
        result: `${batch.loaded} reads (${batch.quiet} quiet) · ${perBatch.toFixed(2)} per batch · ${fmtMs(batch.ms / batches)} per batch`,
        // To the two decimals shown: the quiet spell samples the server's own background reads (a few a second) to ±1 or 2.
        target: target('≤ 1 per batch', Number(perBatch.toFixed(2)) <= 1),
      },
      { metric: `etcd3, 1 server: update ServiceAccount (${fmtInt(update1.requests)} PUTs)`, result: cell(update1), target: '—' },
      { metric: `etcd3, 1 server: list ${listItems} ServiceAccounts (${fmtInt(list1.requests)} lists)`, result: cell(list1), target: '—' },
      { metric: `etcd3, 2 servers: create ServiceAccount (${fmtInt(create2.requests)} POSTs, ${concurrency / 2} clients on each)`, result: cell(create2), target: '—' },
      { metric: `etcd3, 2 servers: get ServiceAccount (${fmtInt(get2.requests)} random GETs, ${concurrency / 2} clients on each)`, result: `${cell(get2)} · ${getRatio.toFixed(2)}× one server`, target: target('≥ 1.6× one server', getRatio >= 1.6) },
      {
        metric: `etcd3, 2 servers: get ServiceAccount with resourceVersion=0 (${fmtInt(cached2.requests)} GETs, ${concurrency / 2} clients on each)`,
        result: `${cell(cached2)} · ${(cached2.perSec / cached1.perSec).toFixed(2)}× one server`, target: '—',
      },
      { metric: `etcd3, 2 servers: list ${listItems} ServiceAccounts (${fmtInt(list2.requests)} lists)`, result: cell(list2), target: '—' },
    );
    await Promise.all(loads.splice(0).map((l) => l.close()));
    for (const s of servers.splice(0)) await s.stop(2000);
    progress('etcd3: gets with a service-account token beside gets with the client certificate…');
    const tokenDir = mkdtempSync(join(tmpdir(), 'plat-bench-etcd-'));
    dirs.push(tokenDir);
    rows.push(...await benchBearerTokens(tokenDir, { quick, concurrency, progress, extraArgs, label: 'etcd3, 1 server', pairedRounds: quick ? 5 : 7, entry: options.entry }));
  } finally {
    await Promise.all(loads.map((l) => l.close().catch(() => undefined)));
    for (const s of servers) await s.stop(2000).catch(() => undefined);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await etcd.stop();
  }

  progress('store: the etcd backend in-process…');
  const store = await startEtcd(1, tmpdir());
  try {
    const backend = new EtcdBackend({ endpoints: store.endpoints.split(','), requestTimeoutMs: 30_000 });
    for (const r of await measureBackend('etcd', backend, quick ? 2_000 : 20_000)) {
      rows.push({ metric: `store: ${r.name}`, result: `${fmtInt(r.opsPerSec)} ops/s · p50 ${fmtMs(r.p50ms)} · p99 ${fmtMs(r.p99ms)}`, target: '—' });
    }
    await backend.close();
  } finally {
    await store.stop();
  }
  return rows;
}
