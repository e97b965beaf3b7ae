// Two builds of the server on one etcd, beside a server on SQLite, in
// alternated rounds: server CPU per ConfigMap create (until each server is
// quiet again) and per consistent get of a ConfigMap. For changes to the
// etcd client, measured against the build before them in the same run:
//
//   npm run bench -- etcd-builds [--base <another build's dist/src/cli/main.js>] [--rounds N] [--count N] [--perf [--functions] [--keep-perf]]
//
// Without --base only this build runs beside SQLite. With --perf, after the
// rounds, one more phase of creates on the SQLite server and one on this
// build's etcd server run under Linux perf, and where their CPU went is
// printed (bench/perfprofile.ts; --functions: by function).

import { mkdtempSync, renameSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BenchServer, cpuMs, settle, startBenchServer } from './child.js';
import { LoadGenerator } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { formatPerf, perfAvailable, perfNodeArgs, perfRecord, summarisePerf } from './perfprofile.js';
import { fmtInt, median } from './stats.js';
import { startEtcd } from '../test/support/etcd.js';

const TIMEOUT_MS = 180_000;
export interface EtcdBuildsOptions {
  /** Another build's CLI, run beside this one on the same etcd. */
  base?: string;
  rounds: number;
  /** Creates per round (twice as many gets). */
  perRound: number;
  perf: boolean;
  functions: boolean;
  keepPerf: boolean;
  progress: (msg: string) => void;
}

interface Contender {
  name: string;
  server: BenchServer;
  load: LoadGenerator;
  created: number;
  creates: { us: number; perSec: number }[];
  gets: { us: number; perSec: number }[];
}

async function phase(c: Contender, spec: PhaseSpec, settled: boolean): Promise<{ us: number; perSec: number }> {
  if (settled) await settle(c.server.pid);
  const cpu0 = cpuMs(c.server.pid);
  const r = await c.load.run(spec, TIMEOUT_MS);
  if (settled) await settle(c.server.pid);
  return { us: ((cpuMs(c.server.pid) - cpu0) * 1000) / r.requests, perSec: r.perSec };
}

/** Prints its lines (and the perf summaries) itself: they are not rows of a table. */
export async function benchEtcdBuilds(o: EtcdBuildsOptions): Promise<void> {
  const { base, rounds, perRound } = o;
  const perf = o.perf && perfAvailable();
  const say = o.progress;
  const etcd = await startEtcd(1, tmpdir());
  const dirs: string[] = [];
  const contenders: Contender[] = [];
  const load0 = loadavg()[0]!;
  try {
    const start = async (name: string, extraArgs: string[], entry?: string, nodeArgs?: string[]) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'plat-bench-builds-'));
      dirs.push(dataDir);
      const server = await startBenchServer({ dataDir, extraArgs, entry, nodeArgs });
      const load = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: 16 });
      // Each build keeps its own namespace on the shared etcd.
      const namespace = `cm-${contenders.length}`;
      await load.run({ kind: 'namespaces', names: [namespace] }, TIMEOUT_MS);
      await load.run({ kind: 'create-cm', namespace, prefix: 'warm-', count: 1_000, bytes: 1024 }, TIMEOUT_MS);
      await load.run({ kind: 'get', namespace, prefix: 'warm-', population: 1_000, count: 1_000, seed: 1, collectionPath: `/api/v1/namespaces/${namespace}/configmaps` }, TIMEOUT_MS);
      contenders.push({ name, server, load, created: 0, creates: [], gets: [] });
    };
    const onEtcd = ['--storage-backend', 'etcd3', '--etcd-servers', etcd.endpoints];
    await start('SQLite', [], undefined, perf ? perfNodeArgs : undefined);
    if (base) await start('etcd, base', onEtcd, base);
    await start('etcd, this build', onEtcd, undefined, perf ? perfNodeArgs : undefined);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? contenders : [...contenders].reverse();
      for (const c of order) {
        const namespace = `cm-${contenders.indexOf(c)}`;
        const made = await phase(c, { kind: 'create-cm', namespace, prefix: `r${round}-`, count: perRound, bytes: 1024 }, true);
        c.creates.push(made);
        const got = await phase(c, { kind: 'get', namespace, prefix: 'warm-', population: 1_000, count: perRound * 2, seed: round + 2, collectionPath: `/api/v1/namespaces/${namespace}/configmaps` }, true);
        c.gets.push(got);
        say(`round ${round} ${c.name}: create ${made.us.toFixed(0)} µs · ${fmtInt(made.perSec)}/s; consistent get ${got.us.toFixed(0)} µs · ${fmtInt(got.perSec)}/s`);
      }
    }
    const sqlite = contenders[0]!;
    const lines = [`load average ${load0.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end; ${rounds} rounds of ${perRound} creates and ${perRound * 2} gets`];
    for (const c of contenders) {
      const ratios = c.creates.map((m, i) => m.us / sqlite.creates[i]!.us);
      lines.push(`${c.name}: create ${median(c.creates.map((m) => m.us)).toFixed(0)} µs · ${fmtInt(median(c.creates.map((m) => m.perSec)))}/s` +
        ` (rounds ${c.creates.map((m) => m.us.toFixed(0)).join(', ')}); /SQLite median ${median(ratios).toFixed(2)}× (${ratios.map((r) => r.toFixed(2)).join(', ')});` +
        ` consistent get ${median(c.gets.map((m) => m.us)).toFixed(0)} µs · ${fmtInt(median(c.gets.map((m) => m.perSec)))}/s`);
    }
    process.stdout.write(lines.join('\n') + '\n');
    if (perf) {
      for (const c of [sqlite, contenders[contenders.length - 1]!]) {
        const file = join(tmpdir(), `etcd-builds-${process.pid}.perf.data`);
        await settle(c.server.pid);
        const stop = await perfRecord(c.server.pid, file);
        const r = await c.load.run({ kind: 'create-cm', namespace: `cm-${contenders.indexOf(c)}`, prefix: 'perf-', count: perRound * 2, bytes: 1024 }, TIMEOUT_MS);
        await settle(c.server.pid);
        await stop();
        const title = `${c.name}: creates under perf, ${fmtInt(r.requests)} at ${fmtInt(r.perSec)}/s`;
        process.stdout.write(formatPerf(title, summarisePerf(file, r.requests, o.functions), 45) + '\n');
        if (o.keepPerf) {
          renameSync(file, `${file}-${contenders.indexOf(c)}`);
          process.stdout.write(`perf data kept in ${file}-${contenders.indexOf(c)}\n`);
        } else rmSync(file, { force: true });
      }
    }
  } finally {
    for (const c of contenders) {
      await c.load.close().catch(() => undefined);
      await c.server.stop(2000).catch(() => undefined);
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await etcd.stop();
  }
}
