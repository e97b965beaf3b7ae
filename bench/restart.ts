// A restart holding 100,000 ConfigMaps, this build beside another on one data
// dir: each round starts each build in turn (the order swapped every other
// round) on the same SQLite data dir, waits for /readyz 200, asks at once for
// a consistent list of all the ConfigMaps and reads it to its last byte,
// discarding it. Per start: ready, first byte and last byte of the list from
// the spawn, and the server's CPU from the spawn to the last byte. The data
// dir is filled on first use and kept (pass the same --data-dir again), so
// rounds and runs compare starts, not loads. The servers log at info, where
// this build's 'serving' line gives the end of each step of its start
// (apiserver/phases.ts): the summary says how long each step took, from the
// spawn to Node running the CLI's first line, through module loading, the
// options' files, key material, the store, the APIs, the listener, the
// post-start hooks and the controllers, to the first /readyz 200 seen. With --rss, each start also
// reads the server's RSS 0.5 s after ready, before the list (as run.ts's idle
// RSS; with --objects 0 that is the idle RSS of a start on an empty store).
//
//   npm run bench -- restart --data-dir DIR [--base OTHER/dist/src/cli/main.js …]
//        [--rounds 3] [--objects 100000] [--rss] [--node-arg=--cpu-prof ...] [--server-arg=--controllers=... ...]

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'node:https';
import { cpuMsPrecise, readCredentials, rssBytes, startBenchServer, type BenchServer, type Credentials } from './child.js';
import { LoadGenerator } from './load.js';
import { fmtInt, fmtMB, fmtMs, median } from './stats.js';

const NAMESPACE = 'bench-big';
const OBJECT_BYTES = 2048;

export interface ListTiming {
  status: number;
  bytes: number;
  /** From the request to its first and last byte. */
  firstByteMs: number;
  lastByteMs: number;
}

/** A consistent (no resourceVersion) unpaged list read to its last byte and discarded. */
export function discardList(server: BenchServer, path: string): Promise<ListTiming> {
  const agent = new Agent({ ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
  const t0 = performance.now();
  return new Promise<ListTiming>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method: 'GET', agent, headers: { Accept: 'application/json' } }, (res) => {
      let bytes = 0;
      let firstByteMs = NaN;
      res.on('data', (c: Buffer) => {
        if (bytes === 0) firstByteMs = performance.now() - t0;
        bytes += c.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes, firstByteMs, lastByteMs: performance.now() - t0 }));
      res.on('error', reject);
    });
    req.setTimeout(60_000, () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  }).finally(() => agent.destroy());
}

/** Creates `objects` ConfigMaps of 2 KiB in a fresh data dir (a first start of this build); the admin credentials. */
async function fill(dataDir: string, objects: number, progress: (msg: string) => void): Promise<Credentials> {
  const server = await startBenchServer({ dataDir });
  const gen = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: 16 });
  try {
    progress(`filling ${dataDir} with ${fmtInt(objects)} ConfigMaps…`);
    await gen.run({ kind: 'namespaces', names: [NAMESPACE] }, 60_000);
    await gen.run({ kind: 'create-cm', namespace: NAMESPACE, prefix: 'cm-', count: objects, bytes: OBJECT_BYTES }, 1_200_000);
    return server.creds;
  } finally {
    await gen.close();
    await server.stop();
  }
}

export interface RestartSample {
  readyMs: number;
  firstByteMs: number;
  lastByteMs: number;
  /** CPU of all the server's threads, and of its main thread alone (the one that serves), spawn to last byte. */
  cpuMs: number;
  mainCpuMs: number;
  /** The main thread's CPU from the spawn to /readyz 200. */
  mainCpuAtReadyMs: number;
  bytes: number;
  load1: number;
  /** RSS 0.5 s after ready (with --rss), bytes. */
  rss?: number;
  /** This build's steps of the start (apiserver/phases.ts), each step's ms, from the spawn; the last is the wait from the end of the last step to ready. */
  steps?: Array<[string, number]>;
}

/**
 * The steps of a start from this build's 'serving' line (a JSON log line, at
 * info), as the time each took: from the spawn to Node running our first
 * line (exec, Node's own start, the CLI's flags module), then each step of
 * the start, then from the last step to the first /readyz 200 seen.
 */
function stepsOf(output: string, spawnedAt: number, readyMs: number): Array<[string, number]> | undefined {
  for (const line of output.split('\n')) {
    // A klog text line (startup={...}) or a JSON one ("startup":{...}).
    const found = /"?startup"?[=:](\{"origin".*?\]\]\})/.exec(line)?.[1];
    if (!found) continue;
    let startup: { origin?: number; steps?: Array<[string, number]> };
    try {
      startup = JSON.parse(found);
    } catch {
      continue;
    }
    const { origin, steps } = startup;
    if (typeof origin !== 'number' || !Array.isArray(steps)) continue;
    const out: Array<[string, number]> = [];
    let last = 0;
    let readyAdded = false;
    for (const [name, at] of steps) {
      const fromSpawn = origin + at - spawnedAt;
      // Steps that end after /readyz said 200 (the controllers start once the hooks are done) did not delay it.
      if (!readyAdded && fromSpawn > readyMs) {
        out.push(['ready', readyMs - last]);
        readyAdded = true;
      }
      out.push([readyAdded ? `${name} (after ready)` : name, fromSpawn - last]);
      last = fromSpawn;
    }
    if (!readyAdded) out.push(['ready', readyMs - last]);
    return out;
  }
  return undefined;
}

/** Each step's median over the samples that have steps, in the order of the first. */
function stepMedians(xs: RestartSample[]): string {
  const withSteps = xs.filter((s) => s.steps);
  if (withSteps.length === 0) return '';
  const names = withSteps[0]!.steps!.map(([n]) => n);
  const bare = (n: string) => n.replace(' (after ready)', '');
  const cells = names.map((n) => `${n} ${fmtMs(median(withSteps.map((s) => s.steps!.find(([m]) => bare(m) === bare(n))?.[1] ?? NaN)))}`);
  return `\n  where the start went (median ms of each step, from the spawn): ${cells.join(', ')}`;
}

/** One start of `entry` (undefined: this build) on `dataDir`, then the list; the process is stopped after. */
export async function restartAndList(dataDir: string, creds: Credentials, entry: string | undefined, nodeArgs: string[], extraArgs: string[] = [], expectBytes?: number,
  readRss = false): Promise<RestartSample> {
  const load1 = loadavg()[0]!;
  const server = await startBenchServer({ dataDir, creds, entry, nodeArgs, extraArgs });
  const mainCpuAtReady = mainThreadCpuMs(server.pid);
  try {
    let rss: number | undefined;
    if (readRss) {
      await new Promise((r) => setTimeout(r, 500));
      rss = rssBytes(server.pid);
    }
    const list = await discardList(server, `/api/v1/namespaces/${NAMESPACE}/configmaps`);
    const cpu = cpuMsPrecise(server.pid);
    const mainCpu = mainThreadCpuMs(server.pid);
    const steps = stepsOf(server.output(), server.spawnedAt, server.readyMs);
    if (list.status !== 200) throw new Error(`list after restart: HTTP ${list.status}`);
    if (expectBytes !== undefined && Math.abs(list.bytes - expectBytes) > expectBytes / 100) throw new Error(`list after restart: ${list.bytes} bytes, expected about ${expectBytes}`);
    return {
      readyMs: server.readyMs, firstByteMs: server.readyMs + list.firstByteMs, lastByteMs: server.readyMs + list.lastByteMs,
      cpuMs: cpu, mainCpuMs: mainCpu, mainCpuAtReadyMs: mainCpuAtReady, bytes: list.bytes, load1, ...(rss !== undefined ? { rss } : {}), ...(steps ? { steps } : {}),
    };
  } finally {
    await server.stop();
  }
}

/** CPU time of a process's main thread (its thread id is the process id), in ms. */
function mainThreadCpuMs(pid: number): number {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

function cell(s: RestartSample): string {
  return `ready ${fmtMs(s.readyMs)} · first byte ${fmtMs(s.firstByteMs)} · last byte ${fmtMs(s.lastByteMs)} · CPU ${fmtMs(s.cpuMs)}, main thread ${fmtMs(s.mainCpuMs)} (${fmtMs(s.mainCpuAtReadyMs)} to ready)${s.rss !== undefined ? ` · RSS ${fmtMB(s.rss)}` : ''} (load ${s.load1.toFixed(1)})`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const dataDir = arg('--data-dir');
  if (!dataDir) throw new Error('--data-dir DIR is required (filled on first use, kept after)');
  // --base may be given more than once (base, base2, …): say, another commit and this tree's unbundled build.
  const bases = process.argv.flatMap((a, i) => (a === '--base' && process.argv[i + 1] ? [process.argv[i + 1]!] : []));
  const rounds = Number(arg('--rounds') ?? 3);
  const objects = Number(arg('--objects') ?? 100_000);
  const readRss = process.argv.includes('--rss');
  const nodeArgs = process.argv.filter((a) => a.startsWith('--node-arg=')).map((a) => a.slice('--node-arg='.length));
  const serverArgs = process.argv.filter((a) => a.startsWith('--server-arg=')).map((a) => a.slice('--server-arg='.length));
  const t0 = performance.now();
  const progress = (msg: string) => process.stderr.write(`[restart ${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${msg}\n`);
  mkdirSync(dataDir, { recursive: true });
  const kubeconfig = `${dataDir}/admin.kubeconfig`;
  const creds = existsSync(kubeconfig) ? readCredentials(kubeconfig) : await fill(dataDir, objects, progress);
  const builds: Record<string, string | undefined> = { this: undefined, ...Object.fromEntries(bases.map((b, i) => [i === 0 ? 'base' : `base${i + 1}`, b])) };
  const samples: Record<string, RestartSample[]> = Object.fromEntries(Object.keys(builds).map((k) => [k, []]));
  let bytes: number | undefined;
  for (let round = 0; round < rounds; round++) {
    const order = Object.keys(builds);
    if (round % 2 === 1) order.reverse();
    for (const name of order) {
      // At info, for the 'serving' line where this build gives its steps (every build alike, for a fair comparison).
      const s = await restartAndList(dataDir, creds, builds[name], nodeArgs, ['--log-level=info', ...serverArgs], bytes, readRss);
      bytes ??= s.bytes;
      samples[name]!.push(s);
      progress(`round ${round + 1} ${name.padEnd(5)}: ${cell(s)}`);
    }
  }
  for (const [name, xs] of Object.entries(samples)) {
    const m = (f: (s: RestartSample) => number) => fmtMs(median(xs.map(f)));
    process.stdout.write(`${name}: median of ${xs.length}: ready ${m((s) => s.readyMs)}, first byte ${m((s) => s.firstByteMs)}, last byte ${m((s) => s.lastByteMs)}, CPU ${m((s) => s.cpuMs)}, main thread ${m((s) => s.mainCpuMs)} (${m((s) => s.mainCpuAtReadyMs)} to ready)${readRss ? `, RSS ${fmtMB(median(xs.map((s) => s.rss!)))}` : ''}; list ${fmtMB(bytes ?? 0)}${stepMedians(xs)}\n`);
  }
  process.exit(0);
}
