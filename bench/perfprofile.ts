// Where a server's CPU goes per operation, by Linux perf: `perf record` samples
// the server's threads while they run on a CPU (the cpu-clock event), so a
// thread waiting for the CPU is never sampled. `node --cpu-prof` samples by
// wall clock instead: on this two-core machine shared with other sessions it
// charges the time a thread waited for the CPU to whatever it was doing then
// (writev and fdatasync came out at a tenth of a create each), which made
// its tables useless for cuts of a few microseconds. Started with
// --perf-basic-prof-only-functions, the server writes /tmp/perf-<pid>.map,
// from which perf names the JavaScript frames.
//
// Each sample is charged to the first JavaScript frame from the leaf (so a
// builtin such as JSON.stringify or a native call such as SQLite's is charged
// to the function that called it), by file; samples of the garbage collector
// are one row, samples with no JavaScript frame (the event loop, TLS and the
// kernel below it) one row, and the other threads (V8's compiler and GC
// helpers, libuv's pool: fdatasync) one row.
//
//   npm run bench -- perfprofile <perf.data> --ops <operations> [--top N] [--functions]

import { spawn, spawnSync } from 'node:child_process';

/** Whether `perf record` can run here (installed, and allowed to sample a process of ours). */
export function perfAvailable(): boolean {
  const r = spawnSync('perf', ['stat', '-e', 'cpu-clock', 'true'], { stdio: 'ignore' });
  return r.status === 0;
}

/** Node flags for a server to be profiled: its JIT code named for perf. */
export const perfNodeArgs = ['--perf-basic-prof-only-functions'];

/** Samples `pid` (all its threads, with call chains) into `file` until the answer is called. */
export async function perfRecord(pid: number, file: string, hz = 4999): Promise<() => Promise<void>> {
  const perf = spawn('perf', ['record', '-F', String(hz), '-g', '-p', String(pid), '-o', file], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => perf.once('exit', () => resolve()));
  // perf needs a moment to attach to every thread.
  await new Promise((r) => setTimeout(r, 1000));
  return async () => {
    perf.kill('SIGINT');
    await exited;
  };
}

export interface PerfRow {
  where: string;
  /** Microseconds per operation. */
  us: number;
}

export interface PerfSummary {
  /** Microseconds per operation on the main thread and on the others. */
  mainUs: number;
  otherUs: number;
  rows: PerfRow[];
}

/** A JavaScript frame of perf's output: its function, and the file it is in (ours under dist/, a package, or Node's). */
const jsFrame = /(?:JS|LazyCompile|Function):[*~^+]?(.*?) (?:file:\/\/(?!\S*node_modules)\S*?\/dist\/(\S+?)|(node:\S+?)|file:\/\/\S*\/node_modules\/(\S+?))(?::\d+)/;
const gcFrame = /Scavenge|MarkCompact|Heap::|GCTracer|Sweeper|ConcurrentMarking|IncrementalMarking|MemoryAllocator/;

/** Reads `perf script` of `file`: per-operation microseconds by file, for `operations` operations. */
export function summarisePerf(file: string, operations: number, byFunction = false): PerfSummary {
  const out = spawnSync('perf', ['script', '-i', file], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'ignore'] }).stdout;
  const samples: { tid: string; period: number; frames: string[] }[] = [];
  let current: { tid: string; period: number; frames: string[] } | undefined;
  for (const line of out.split('\n')) {
    if (line.trim() === '') { current = undefined; continue; }
    if (!/^\s/.test(line)) {
      // `node  8001 28318.090170:     200040 cpu-clock:pppH:`: command (may have spaces), thread, time, period (ns).
      const m = /^(.*?)\s+(\d+)\s+[\d.]+:\s+(\d+)\s/.exec(line);
      current = { tid: m?.[2] ?? '', period: Number(m?.[3] ?? 0), frames: [] };
      samples.push(current);
    } else current?.frames.push(line.trim());
  }
  // The main thread is the one sampled most (a server's JavaScript runs there).
  const perThread = new Map<string, number>();
  for (const s of samples) perThread.set(s.tid, (perThread.get(s.tid) ?? 0) + s.period);
  const main = [...perThread].sort((a, b) => b[1] - a[1])[0]?.[0];
  const charged = new Map<string, number>();
  const charge = (where: string, ns: number) => charged.set(where, (charged.get(where) ?? 0) + ns);
  let mainNs = 0;
  let otherNs = 0;
  for (const s of samples) {
    if (s.tid !== main) { otherNs += s.period; continue; }
    mainNs += s.period;
    if (gcFrame.test(s.frames.slice(0, 6).join(' '))) { charge('(garbage collector)', s.period); continue; }
    let where: string | undefined;
    for (const f of s.frames) {
      const m = jsFrame.exec(f);
      if (!m) continue;
      const [, name, ours, node, pkg] = m;
      where = ours ?? node ?? `node_modules/${pkg}`;
      if (byFunction) where += ` ${name || '(anonymous)'}`;
      break;
    }
    charge(where ?? '(no JavaScript frame: event loop, TLS, kernel)', s.period);
  }
  const us = (ns: number) => ns / 1000 / operations;
  const rows = [...charged].map(([where, ns]) => ({ where, us: us(ns) })).sort((a, b) => b.us - a.us);
  return { mainUs: us(mainNs), otherUs: us(otherNs), rows };
}

export function formatPerf(title: string, s: PerfSummary, top = 30): string {
  return [
    `${title}: main thread ${s.mainUs.toFixed(0)} µs per operation, other threads ${s.otherUs.toFixed(0)} µs`,
    ...s.rows.slice(0, top).map((r) => `${r.us.toFixed(1).padStart(8)} µs  ${r.where}`),
  ].join('\n');
}
