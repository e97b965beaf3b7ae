// Memory that follows the data: the server's RSS 30 s after a load, beside
// the same server's idle RSS in the same run (the baseline), with what the
// server's own gauges say of the watch cache at that moment (event window and
// derived-cache bytes, heap, buffers outside the heap). Each load runs on a
// fresh server over a fresh SQLite data dir:
//   - 10,000 ConfigMaps of 2 KiB created, then one list;
//   - 10,000 ServiceAccounts created, read and replaced (with the token
//     controller's Secret per account: 20,000 objects);
//   - (full run only) 100,000 ConfigMaps of 2 KiB, then a restart: time to
//     ready, and a consistent list of all of them (to its last byte, into a
//     client that discards it) from the spawn of the process; RSS 30 s later.
// While each load runs, the event window's bytes are sampled from /metrics
// every 250 ms: the largest sample must stay within --watch-cache-window-bytes.
//
//   npm run bench -- memory [--quick]

import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { BenchServer, rssBytes, serverMetric, settle, startBenchServer } from './child.js';
import { LoadGenerator } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { fmtInt, fmtMB, fmtMs } from './stats.js';
import { Row, target } from './table.js';
import { discardList } from './restart.js';
import { targets } from './targets.js';

export interface MemoryOptions {
  quick: boolean;
  progress: (msg: string) => void;
  /** Run the 100,000-object rows (several minutes). */
  heavy: boolean;
}

const MB = 1024 * 1024;
const goals = targets.memory;
const PHASE_TIMEOUT_MS = 600_000;
const OBJECT_BYTES = 2048;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The server's gauges that say where memory is. */
interface Gauges {
  window: number;
  windowLimit: number;
  derived: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

async function gauges(server: BenchServer): Promise<Gauges> {
  const [window, windowLimit, derived, heapUsed, heapTotal, external] = await Promise.all([
    'apiserver_watch_cache_window_bytes', 'apiserver_watch_cache_window_limit_bytes', 'apiserver_watch_cache_derived_bytes',
    'nodejs_heap_size_used_bytes', 'nodejs_heap_size_total_bytes', 'nodejs_external_memory_bytes',
  ].map((name) => serverMetric(server, name)));
  return { window: window!, windowLimit: windowLimit!, derived: derived!, heapUsed: heapUsed!, heapTotal: heapTotal!, external: external! };
}

/** Samples the window's bytes every 250 ms until stopped; the largest sample. */
function windowSampler(server: BenchServer) {
  let max = 0;
  let limit = NaN;
  let running = true;
  const loop = (async () => {
    while (running) {
      try {
        const g = await gauges(server);
        max = Math.max(max, g.window);
        limit = g.windowLimit;
      } catch { /* the server is busy or restarting: next sample */ }
      await sleep(250);
    }
  })();
  return { async stop() { running = false; await loop; return { max, limit }; } };
}

function breakdown(g: Gauges): string {
  return `heap used ${fmtMB(g.heapUsed)} of ${fmtMB(g.heapTotal)}, buffers ${fmtMB(g.external)}, event window ${fmtMB(g.window)}, derived cache ${fmtMB(g.derived)}`;
}

export async function benchMemory(dataRoot: string, opts: MemoryOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const HOLD_MS = quick ? 3_000 : 30_000;
  const holdText = `${HOLD_MS / 1000} s`;
  const CONFIGMAPS = quick ? 2_000 : 10_000;
  const ACCOUNTS = quick ? 2_000 : 10_000;
  const BIG = 100_000;
  const rows: Row[] = [];
  let windowMax = 0;
  let windowLimit = NaN;

  /** One fresh server: idle RSS, the load, settle, hold, RSS with the gauges. */
  const session = async (name: string, load: (gen: LoadGenerator, server: BenchServer) => Promise<void>, dir = mkdtempSync(join(dataRoot, `${name}-`))) => {
    const server = await startBenchServer({ dataDir: dir });
    const gen = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: 16 });
    try {
      await sleep(500);
      const idle = rssBytes(server.pid);
      const sampler = windowSampler(server);
      await load(gen, server);
      await settle(server.pid);
      const sampled = await sampler.stop();
      windowMax = Math.max(windowMax, sampled.max);
      windowLimit = sampled.limit;
      await sleep(HOLD_MS);
      const rss = rssBytes(server.pid);
      const g = await gauges(server);
      windowMax = Math.max(windowMax, g.window);
      progress(`memory: ${name}: idle ${fmtMB(idle)}, ${holdText} after the load ${fmtMB(rss)} (${breakdown(g)})`);
      return { idle, rss, g, dir, creds: server.creds, firstReadyMs: server.readyMs };
    } finally {
      await gen.close();
      await server.stop();
    }
  };
  const run = (gen: LoadGenerator, spec: PhaseSpec) => gen.run(spec, PHASE_TIMEOUT_MS);

  progress(`memory: ${fmtInt(CONFIGMAPS)} ConfigMaps of 2 KiB…`);
  const cms = await session('configmaps', async (gen) => {
    await run(gen, { kind: 'namespaces', names: ['bench-cm'] });
    await run(gen, { kind: 'create-cm', namespace: 'bench-cm', prefix: 'cm-', count: CONFIGMAPS, bytes: OBJECT_BYTES });
    await run(gen, { kind: 'list-cm', namespace: 'bench-cm', prefix: 'cm-', count: 1, expectItems: CONFIGMAPS, concurrency: 1, checkEvery: 1 });
  });
  rows.push({
    metric: `memory: server RSS ${holdText} after creating ${fmtInt(CONFIGMAPS)} ConfigMaps of 2 KiB and one list (beside: the same server idle before the load)`,
    result: `${fmtMB(cms.rss)} (idle ${fmtMB(cms.idle)}; ${breakdown(cms.g)})`,
    target: quick ? '—' : target(`≤ ${goals.configMapsMB} MB`, cms.rss <= goals.configMapsMB * MB),
  });

  progress(`memory: create, get and replace ${fmtInt(ACCOUNTS)} ServiceAccounts…`);
  const sas = await session('serviceaccounts', async (gen, server) => {
    await run(gen, { kind: 'namespaces', names: ['bench'] });
    await run(gen, { kind: 'create', namespace: 'bench', prefix: 'sa-', count: ACCOUNTS, remember: true });
    await settle(server.pid);
    await run(gen, { kind: 'get', namespace: 'bench', prefix: 'sa-', population: ACCOUNTS, count: ACCOUNTS, seed: 42 });
    await run(gen, { kind: 'replace', namespace: 'bench', prefix: 'sa-', population: ACCOUNTS, count: ACCOUNTS, round: 2 });
  });
  rows.push({
    metric: `memory: server RSS ${holdText} after creating, reading and replacing ${fmtInt(ACCOUNTS)} ServiceAccounts (with their token Secrets; beside: idle before the load)`,
    result: `${fmtMB(sas.rss)} (idle ${fmtMB(sas.idle)}; ${breakdown(sas.g)})`,
    target: quick ? '—' : target(`≤ ${goals.serviceAccountsMB} MB`, sas.rss <= goals.serviceAccountsMB * MB),
  });

  if (opts.heavy) {
    progress(`memory: ${fmtInt(BIG)} ConfigMaps of 2 KiB (a few minutes)…`);
    const big = await session('big', async (gen) => {
      await run(gen, { kind: 'namespaces', names: ['bench-big'] });
      await run(gen, { kind: 'create-cm', namespace: 'bench-big', prefix: 'cm-', count: BIG, bytes: OBJECT_BYTES });
      await run(gen, { kind: 'list-cm', namespace: 'bench-big', prefix: 'cm-', count: 1, expectItems: BIG, concurrency: 1, checkEvery: 1 });
    });
    rows.push({
      metric: `memory: server RSS ${holdText} after creating ${fmtInt(BIG)} ConfigMaps of 2 KiB and one list (beside: idle before the load)`,
      result: `${fmtMB(big.rss)} (idle ${fmtMB(big.idle)}; ${breakdown(big.g)})`,
      target: target(`≤ ${goals.bigMB} MB`, big.rss <= goals.bigMB * MB),
    });
    progress('memory: restart holding them, then one consistent list of all of them…');
    const again = await startBenchServer({ dataDir: big.dir, creds: big.creds });
    try {
      const list = await discardList(again, '/api/v1/namespaces/bench-big/configmaps');
      if (list.status !== 200) throw new Error(`list after restart: HTTP ${list.status}`);
      const fromStart = again.readyMs + list.lastByteMs;
      await sleep(HOLD_MS);
      const rss = rssBytes(again.pid);
      const g = await gauges(again);
      rows.push({
        metric: `memory: restart to /readyz 200 holding ${fmtInt(BIG)} ConfigMaps (beside: the first start of the same data dir, empty)`,
        result: `${fmtMs(again.readyMs)} (first start ${fmtMs(big.firstReadyMs)})`,
        target: target(`< ${fmtInt(goals.restartMs)} ms`, again.readyMs < goals.restartMs),
      });
      rows.push({
        metric: `memory: a consistent list of all ${fmtInt(BIG)} ConfigMaps (${fmtMB(list.bytes)}, to the last byte, client discards) from the spawn of the restarted server`,
        result: `${fmtMs(fromStart)} (ready ${fmtMs(again.readyMs)} + list ${fmtMs(list.lastByteMs)}, its first byte at ${fmtMs(again.readyMs + list.firstByteMs)})`,
        target: target(`< ${fmtInt(goals.bigListMs)} ms`, fromStart < goals.bigListMs),
      });
      rows.push({
        metric: `memory: server RSS ${holdText} after that list`,
        result: `${fmtMB(rss)} (${breakdown(g)})`,
        target: target(`≤ ${goals.bigMB} MB`, rss <= goals.bigMB * MB),
      });
      progress(`memory: restart ready ${fmtMs(again.readyMs)}, list ${fmtMs(list.lastByteMs)}, RSS ${fmtMB(rss)}`);
    } finally {
      await again.stop();
    }
  }
  rows.push({
    metric: 'memory: largest event-window size sampled during the loads above (every 250 ms, /metrics), against --watch-cache-window-bytes',
    result: `${fmtMB(windowMax)} of ${fmtMB(windowLimit)}`,
    target: target('never above the flag', windowMax <= windowLimit),
  });
  return rows;
}
