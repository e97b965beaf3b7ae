// Reading at scale, against its own server (built CLI child, fresh sqlite data
// dir): unpaged and paged lists of 10,000 ConfigMaps of about 2 KiB, the RSS
// with them cached, one event fanned out to 1,000 HTTP watchers, and a soak
// check that 50 watchers see every write of a 1,000 writes/s load, in order.
//
// Requests come from the load worker (bench/load-worker.ts); watch streams are
// held by watchers workers (bench/watchers-worker.ts), one TLS connection each.

import { Agent } from 'node:https';
import { sendJson } from './http.js';
import { BenchServer, cpuMs, rssBytes, startBenchServer } from './child.js';
import { LoadGenerator, PhaseResult } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { fmtInt, fmtMB, fmtCpu, fmtMs, percentile } from './stats.js';
import { Row, target } from './table.js';
import { WatcherPool } from './watchers.js';
import { targets } from './targets.js';

export interface ReadsOptions {
  quick: boolean;
  progress: (msg: string) => void;
  /** Extra node flags for the server child (for example --cpu-prof). */
  nodeArgs?: string[];
}

const goals = targets.reads;
const PHASE_TIMEOUT_MS = 120_000;
const OBJECT_BYTES = 2048;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One request with the admin certificate over a keep-alive agent: status and body text. */
async function send(agent: Agent, server: BenchServer, method: string, path: string, body?: unknown): Promise<{ status: number; text: string }> {
  const r = await sendJson(agent, server.port, method, path, body, 10_000);
  return { status: r.status, text: r.body.toString('utf8') };
}

export async function benchReads(dataDir: string, opts: ReadsOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const OBJECTS = quick ? 1_000 : 10_000;
  const PAGE = 500;
  const LISTS = quick ? 5 : 20;
  const WALKS = quick ? 3 : 10;
  const WATCHERS = quick ? 100 : 1_000;
  const WATCH_THREADS = 2;
  const EVENTS = quick ? 10 : 50;
  const EVENT_WARMUP = 5;
  const SOAK_WATCHERS = quick ? 10 : 50;
  const SOAK_RATE = 1_000;
  const SOAK_MS = quick ? 3_000 : 10_000;

  let server: BenchServer | undefined;
  let load: LoadGenerator | undefined;
  let pool: WatcherPool | undefined;
  let agent: Agent | undefined;
  try {
    server = await startBenchServer({ dataDir, nodeArgs: opts.nodeArgs });
    const srv = server;
    /** The main thread's own client, for the writes whose delivery is timed: one keep-alive connection. */
    const writer = (agent = new Agent({ keepAlive: true, maxSockets: 1, ca: srv.creds.ca, cert: srv.creds.cert, key: srv.creds.key }));
    progress(`reads: server ready in ${fmtMs(srv.readyMs)} on ${srv.url}, pid ${srv.pid}`);
    load = new LoadGenerator({ url: srv.url, creds: srv.creds, concurrency: 16 });
    const gen = load;
    const phase = async (spec: PhaseSpec, count: (r: PhaseResult) => number = (r) => r.requests) => {
      const cpu0 = cpuMs(srv.pid);
      const r = await gen.run(spec, PHASE_TIMEOUT_MS);
      return { ...r, serverCpuMs: (cpuMs(srv.pid) - cpu0) / count(r) };
    };
    await gen.run({ kind: 'namespaces', names: ['bench-cm', 'bench-fan', 'bench-soak'] }, PHASE_TIMEOUT_MS);
    const rows: Row[] = [];

    // 1. Fill, then warm the cache with two lists, then RSS.
    progress(`reads: create ${fmtInt(OBJECTS)} ConfigMaps of ${OBJECT_BYTES} bytes…`);
    const create = await phase({ kind: 'create-cm', namespace: 'bench-cm', prefix: 'cm-', count: OBJECTS, bytes: OBJECT_BYTES });
    rows.push({
      metric: `create ConfigMap of 2 KiB (${fmtInt(OBJECTS)} POSTs, 16 clients)`,
      result: `${fmtInt(create.perSec)} req/s · p50 ${fmtMs(create.p50ms)} · p99 ${fmtMs(create.p99ms)} · server CPU ${fmtCpu(create.serverCpuMs)}/req`,
      target: '—',
    });
    await gen.run({ kind: 'list-cm', namespace: 'bench-cm', prefix: 'cm-', count: 2, expectItems: OBJECTS, concurrency: 1, checkEvery: 1 }, PHASE_TIMEOUT_MS);
    await sleep(1000);
    const cachedRss = rssBytes(srv.pid);
    progress(`reads: RSS with ${fmtInt(OBJECTS)} cached ${fmtMB(cachedRss)}`);

    // 2. Unpaged lists, one client.
    progress(`reads: ${LISTS} unpaged lists of ${fmtInt(OBJECTS)}…`);
    const list = await phase({ kind: 'list-cm', namespace: 'bench-cm', prefix: 'cm-', count: LISTS, expectItems: OBJECTS, concurrency: 1, checkEvery: 10 });
    const listMB = (list.notes.bytes ?? 0) / (1024 * 1024);
    rows.push({
      metric: `list ${fmtInt(OBJECTS)} ConfigMaps of 2 KiB, unpaged (${LISTS} lists of ${listMB.toFixed(1)} MB, 1 client)`,
      result: `${(list.perSec).toFixed(1)} req/s · p50 ${fmtMs(list.p50ms)} · p99 ${fmtMs(list.p99ms)} · server CPU ${fmtCpu(list.serverCpuMs)}/req`,
      target: target(`p50 < ${goals.listMs} ms`, list.p50ms < goals.listMs),
    });
    progress(`reads: list p50 ${fmtMs(list.p50ms)} p99 ${fmtMs(list.p99ms)}`);

    // 3. The same in pages of 500, following the continue tokens.
    progress(`reads: ${WALKS} walks in pages of ${PAGE}…`);
    const walk = await phase({ kind: 'walk-cm', namespace: 'bench-cm', prefix: 'cm-', count: WALKS, limit: PAGE, expectItems: OBJECTS });
    const pagesPerWalk = Math.ceil(OBJECTS / PAGE);
    rows.push({
      metric: `list ${fmtInt(OBJECTS)} ConfigMaps in pages of ${PAGE} (${WALKS} full walks of ${pagesPerWalk} requests along the continue tokens)`,
      result: `full walk p50 ${fmtMs(walk.p50ms)} · p99 ${fmtMs(walk.p99ms)} · ${fmtMs(walk.p50ms / pagesPerWalk)}/page · server CPU ${fmtCpu(walk.serverCpuMs)}/walk`,
      target: '—',
    });
    progress(`reads: walk p50 ${fmtMs(walk.p50ms)}`);
    rows.push({
      metric: `server RSS with ${fmtInt(OBJECTS)} ConfigMaps of 2 KiB cached (1 s after a list warmed the cache)`,
      result: fmtMB(cachedRss),
      target: target(`< ${goals.cachedRssMB} MB`, cachedRss / (1024 * 1024) < goals.cachedRssMB),
    });
    const afterListsRss = rssBytes(srv.pid);
    rows.push({ metric: 'server RSS after the lists', result: fmtMB(afterListsRss), target: '—' });

    // 4. One event to many watchers.
    pool = new WatcherPool(srv.url, srv.creds, WATCH_THREADS);
    const rvOf = async (ns: string) => {
      const r = await send(writer, srv, 'GET', `/api/v1/namespaces/${ns}/configmaps`);
      if (r.status !== 200) throw new Error(`list ${ns}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
      return JSON.parse(r.text).metadata.resourceVersion as string;
    };
    progress(`reads: open ${fmtInt(WATCHERS)} watches over HTTPS from ${WATCH_THREADS} threads…`);
    const fanRv = await rvOf('bench-fan');
    const cpuOpen = cpuMs(srv.pid);
    const openMs = await pool.open(`/api/v1/namespaces/bench-fan/configmaps?watch=1&resourceVersion=${fanRv}`, WATCHERS, 'marker');
    const openCpu = cpuMs(srv.pid) - cpuOpen;
    await sleep(500);
    const watchersRss = rssBytes(srv.pid);
    progress(`reads: opened in ${fmtMs(openMs)}; RSS ${fmtMB(watchersRss)}; ${EVENT_WARMUP} untimed + ${EVENTS} timed events…`);
    const deliveries: Float64Array[] = [];
    const slowest = new Float64Array(EVENTS);
    let missing = 0;
    let cpuFan = 0;
    for (let e = 0; e < EVENT_WARMUP + EVENTS; e++) {
      const name = `fan-${String(e).padStart(4, '0')}`;
      const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'bench' } }, data: { payload: 'x'.repeat(OBJECT_BYTES - 235 - name.length) } };
      const cpu0 = cpuMs(srv.pid);
      const d = await pool.deliver(`"name":"${name}"`, async () => {
        const r = await send(writer, srv, 'POST', '/api/v1/namespaces/bench-fan/configmaps', body);
        if (r.status !== 201) throw new Error(`POST ${name}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
      });
      if (e < EVENT_WARMUP) continue;
      cpuFan += cpuMs(srv.pid) - cpu0;
      missing += d.missing;
      deliveries.push(d.latencies);
      slowest[e - EVENT_WARMUP] = d.latencies.reduce((m, x) => Math.max(m, x), 0);
    }
    const all = new Float64Array(deliveries.reduce((n, d) => n + d.length, 0));
    let at = 0;
    for (const d of deliveries) { all.set(d, at); at += d.length; }
    all.sort();
    slowest.sort();
    const p99 = percentile(all, 0.99);
    rows.push({
      metric: `open ${fmtInt(WATCHERS)} watches over HTTPS (one TLS connection each, ${WATCH_THREADS} client threads)`,
      result: `${fmtMs(openMs)} · server CPU ${fmtCpu(openCpu / WATCHERS)}/watch · server RSS then ${fmtMB(watchersRss)}`,
      target: '—',
    });
    rows.push({
      metric: `one event to ${fmtInt(WATCHERS)} HTTP watchers, from just before the POST to each watcher's receipt (${EVENTS} events × ${fmtInt(WATCHERS)})`,
      result: `p50 ${fmtMs(percentile(all, 0.5))} · p99 ${fmtMs(p99)} · last watcher p50 ${fmtMs(percentile(slowest, 0.5))} / p99 ${fmtMs(percentile(slowest, 0.99))}` +
        ` · server CPU ${fmtCpu(cpuFan / EVENTS)}/event${missing ? ` · ${fmtInt(missing)} deliveries MISSING` : ''}`,
      target: target('p99 < 100 ms', p99 < goals.fanOutP99Ms && missing === 0),
    });
    progress(`reads: fan-out p50 ${fmtMs(percentile(all, 0.5))} p99 ${fmtMs(p99)} missing ${missing}`);
    await pool.closeStreams();

    // 5. Soak: paced writes while a few watchers check every revision arrives, in order.
    progress(`reads: soak, ${fmtInt(SOAK_RATE)} writes/s for ${SOAK_MS / 1000} s with ${SOAK_WATCHERS} watchers…`);
    const soakRv = await rvOf('bench-soak');
    await pool.open(`/api/v1/namespaces/bench-soak/configmaps?watch=1&resourceVersion=${soakRv}`, SOAK_WATCHERS, 'sequence');
    const soak = await phase({ kind: 'paced-writes', namespace: 'bench-soak', prefix: 'soak-', perSecond: SOAK_RATE, durationMs: SOAK_MS, pool: 500 });
    const expected = soak.values!.slice().sort();
    const report = await pool.verify(expected, 20_000);
    const bad = report.lost + report.reordered + report.duplicated + report.unexpected;
    const soakOk = bad === 0 && report.exact === report.watchers && report.ended === 0;
    rows.push({
      metric: `soak: ${fmtInt(soak.requests)} writes paced at ${fmtInt(SOAK_RATE)}/s (achieved ${fmtInt(soak.perSec)}/s, write p50 ${fmtMs(soak.p50ms)} / p99 ${fmtMs(soak.p99ms)}, ` +
        `server CPU ${fmtCpu(soak.serverCpuMs)}/write) while ${report.watchers} watchers watch`,
      result: `lost/reordered events: ${bad} (${report.exact} of ${report.watchers} watchers saw all ${fmtInt(expected.length)} revisions in order` +
        `${report.lost ? `; lost ${report.lost}` : ''}${report.reordered ? `; reordered ${report.reordered}` : ''}` +
        `${report.duplicated ? `; duplicated ${report.duplicated}` : ''}${report.unexpected ? `; unexpected ${report.unexpected}` : ''}` +
        `${report.ended ? `; ${report.ended} streams ended early` : ''})`,
      target: target('0 lost or reordered', soakOk),
    });
    progress(`reads: soak ${JSON.stringify(report)}`);
    await pool.closeStreams();
    await pool.terminate();
    pool = undefined;
    await load.close();
    load = undefined;

    // 6. The cache without the write phase's history and garbage: restart, one list, RSS.
    const creds = srv.creds;
    await srv.stop();
    server = undefined;
    progress('reads: restart, list once, RSS…');
    const again = (server = await startBenchServer({ dataDir, creds, nodeArgs: opts.nodeArgs }));
    agent.destroy();
    const reader = (agent = new Agent({ keepAlive: true, maxSockets: 1, ca: creds.ca, cert: creds.cert, key: creds.key }));
    const t = performance.now();
    const first = await send(reader, again, 'GET', '/api/v1/namespaces/bench-cm/configmaps?limit=1');
    const firstMs = performance.now() - t;
    if (first.status !== 200) throw new Error(`list after restart: HTTP ${first.status}`);
    const relist = await send(reader, again, 'GET', '/api/v1/namespaces/bench-cm/configmaps');
    const relisted = relist.status === 200 ? (JSON.parse(relist.text).items as any[]).filter((o) => o.metadata.name.startsWith('cm-')).length : -1;
    if (relisted !== OBJECTS) throw new Error(`list after restart: HTTP ${relist.status}, ${relisted} of ${OBJECTS} ConfigMaps`);
    await sleep(1000);
    const restartRss = rssBytes(again.pid);
    rows.push({
      metric: `server RSS after a restart with ${fmtInt(OBJECTS + EVENT_WARMUP + EVENTS + 500)} ConfigMaps stored, 1 s after one full list`,
      result: `${fmtMB(restartRss)} (ready in ${fmtMs(again.readyMs)}, first list request ${fmtMs(firstMs)})`,
      target: target(`< ${goals.cachedRssMB} MB`, restartRss / (1024 * 1024) < goals.cachedRssMB),
    });
    progress(`reads: RSS after restart and a list ${fmtMB(restartRss)}`);
    return rows;
  } finally {
    await pool?.terminate().catch(() => {});
    await load?.close().catch(() => {});
    agent?.destroy();
    await server?.stop(2000).catch(() => {});
  }
}
