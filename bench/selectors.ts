// Filtered watchers against unfiltered ones, side by side on one server:
// 1,000 watches of one namespace with a label selector, 1,000 watches of
// another namespace without one, and events written alternately into each
// (every event matches its namespace's selector, so all 1,000 watchers of
// that set receive it). Per set: server CPU per event (write included) and
// the last watcher's latency from just before the POST. Filtered watchers of
// one event share one decode of it, so the selector should cost little.
//
//   npm run bench -- selectors [--quick]

import { Agent } from 'node:https';
import { sendJson } from './http.js';
import { BenchServer, cpuMs, startBenchServer } from './child.js';
import { fmtCpu, fmtInt, fmtMs } from './stats.js';
import { Row, target } from './table.js';
import { WatcherPool } from './watchers.js';
import { targets } from './targets.js';

export interface SelectorsOptions {
  quick: boolean;
  progress: (msg: string) => void;
}

const goals = targets.selectors;
const OBJECT_BYTES = 2048;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : NaN;
};

export async function benchSelectors(dataDir: string, opts: SelectorsOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const WATCHERS = quick ? 100 : 1_000;
  const EVENTS = quick ? 20 : 200;
  const WARMUP = 10;
  let server: BenchServer | undefined;
  const pools: WatcherPool[] = [];
  let agent: Agent | undefined;
  try {
    const srv = (server = await startBenchServer({ dataDir }));
    const writer = (agent = new Agent({ keepAlive: true, maxSockets: 1, ca: srv.creds.ca, cert: srv.creds.cert, key: srv.creds.key }));
    const send = async (method: string, path: string, body?: unknown) => {
      const r = await sendJson(writer, srv.port, method, path, body, 10_000);
      if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status} ${r.body.toString().slice(0, 300)}`);
      return JSON.parse(r.body.toString());
    };
    const sets = [
      { name: 'unfiltered', namespace: 'bench-plain', query: '' },
      { name: 'label selector', namespace: 'bench-sel', query: `&labelSelector=${encodeURIComponent('app=bench,tier!=db')}` },
    ];
    for (const set of sets) await send('POST', '/api/v1/namespaces', { metadata: { name: set.namespace } });
    for (const set of sets) {
      const pool = new WatcherPool(srv.url, srv.creds, 2);
      pools.push(pool);
      const rv = (await send('GET', `/api/v1/namespaces/${set.namespace}/configmaps`)).metadata.resourceVersion;
      progress(`selectors: open ${fmtInt(WATCHERS)} ${set.name} watches…`);
      await pool.open(`/api/v1/namespaces/${set.namespace}/configmaps?watch=1&resourceVersion=${rv}${set.query}`, WATCHERS, 'marker');
    }
    const cpu = [[], []] as number[][];
    const last = [[], []] as number[][];
    let missing = 0;
    progress(`selectors: ${WARMUP} untimed + ${EVENTS} timed events to each set, alternated…`);
    for (let e = 0; e < WARMUP + EVENTS; e++) {
      const order = e % 2 === 0 ? [0, 1] : [1, 0];
      for (const i of order) {
        const set = sets[i]!;
        const name = `ev-${String(e).padStart(4, '0')}`;
        const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'bench', tier: 'web' } }, data: { payload: 'x'.repeat(OBJECT_BYTES - 250) } };
        const cpu0 = cpuMs(srv.pid);
        const d = await pools[i]!.deliver(`"name":"${name}"`, async () => { await send('POST', `/api/v1/namespaces/${set.namespace}/configmaps`, body); });
        if (e < WARMUP) continue;
        cpu[i]!.push(cpuMs(srv.pid) - cpu0);
        last[i]!.push(d.latencies.reduce((m, x) => Math.max(m, x), 0));
        missing += d.missing;
      }
    }
    const cpuPer = cpu.map((xs) => xs.reduce((a, b) => a + b, 0) / xs.length);
    const lastMedian = last.map(median);
    const rows: Row[] = [];
    sets.forEach((set, i) => rows.push({
      metric: `watchers: one event to ${fmtInt(WATCHERS)} watchers, ${set.name} (${EVENTS} events, alternated with the other set)`,
      result: `server CPU ${fmtCpu(cpuPer[i]!)}/event · last watcher p50 ${fmtMs(lastMedian[i]!)}`,
      target: '—',
    }));
    const cpuRatio = cpuPer[1]! / cpuPer[0]!;
    const latencyRatio = lastMedian[1]! / lastMedian[0]!;
    rows.push({
      metric: 'watchers: label selector against unfiltered (ratios of the two rows above)',
      result: `CPU ${cpuRatio.toFixed(2)}× · last watcher p50 ${latencyRatio.toFixed(2)}×${missing ? ` · ${fmtInt(missing)} deliveries MISSING` : ''}`,
      target: target(`CPU ≤ ${goals.cpuRatio}×, latency ≤ ${goals.latencyRatio}×`, cpuRatio <= goals.cpuRatio && latencyRatio <= goals.latencyRatio && missing === 0),
    });
    progress(`selectors: ${rows.map((r) => r.result).join(' | ')}`);
    return rows;
  } finally {
    for (const pool of pools) await pool.terminate().catch(() => {});
    agent?.destroy();
    await server?.stop(2000).catch(() => {});
  }
}
