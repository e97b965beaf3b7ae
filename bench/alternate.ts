// Side-by-side get rows on one server: each load generator (one per way of
// authenticating) runs the same random gets in turn, an untimed tenth first
// (JIT, sockets, the one signature check or webhook call), then a few timed
// rounds; the best round of each counts, the one least disturbed by whatever
// else runs on the machine.

import { cpuMsPrecise } from './child.js';
import type { LoadGenerator, PhaseResult } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { fmtInt, fmtCpu, fmtMs, median } from './stats.js';

export type Measured = PhaseResult & { serverCpuMs: number };

export interface AlternatingGets {
  /** The server's process, whose CPU each phase is charged with. */
  pid: number;
  namespace: string;
  /** ServiceAccounts `sa-00000`… that the gets pick from. */
  population: number;
  /** Another collection whose objects `sa-00000`… the gets read (a namespace's secrets). */
  collectionPath?: string;
  /** Gets per timed round. */
  count: number;
  rounds: number;
  timeoutMs: number;
  /** Called between the untimed tenth and the timed rounds. */
  afterWarmUp?: () => void;
}

/** The best timed round of each generator, alternating them round by round. */
export async function bestOfAlternatingGets<K extends string>(generators: Record<K, LoadGenerator>, o: AlternatingGets): Promise<Record<K, Measured>> {
  let seed = 1;
  const get = (n: number): PhaseSpec => ({ kind: 'get', namespace: o.namespace, prefix: 'sa-', population: o.population, count: n, seed: seed++, ...(o.collectionPath ? { collectionPath: o.collectionPath } : {}) });
  const entries = Object.entries(generators) as [K, LoadGenerator][];
  for (const [, g] of entries) await g.run(get(o.count / 10), o.timeoutMs);
  o.afterWarmUp?.();
  const best = {} as Record<K, Measured>;
  for (let round = 0; round < o.rounds; round++) {
    for (const [k, g] of entries) {
      const cpu0 = cpuMsPrecise(o.pid);
      const r = await g.run(get(o.count), o.timeoutMs);
      const measured = { ...r, serverCpuMs: (cpuMsPrecise(o.pid) - cpu0) / r.requests };
      if (!best[k] || measured.perSec > best[k].perSec) best[k] = measured;
    }
  }
  return best;
}

/** One phase as a table cell: rate, latencies and server CPU per request. */
export function rateCell(r: Measured): string {
  return `${fmtInt(r.perSec)} req/s · p50 ${fmtMs(r.p50ms)} · p99 ${fmtMs(r.p99ms)} · server CPU ${fmtCpu(r.serverCpuMs)}/req`;
}

/** The round of median server CPU, with the median rate of all rounds. */
export function medianRound<T extends Measured>(xs: T[]): T {
  const cpu = median(xs.map((x) => x.serverCpuMs));
  return { ...xs.find((x) => x.serverCpuMs === cpu)!, perSec: median(xs.map((x) => x.perSec)) };
}

export interface AlternatingRounds {
  /** The server's process, whose CPU each phase is charged with. */
  pid: number;
  /** Requests per timed round (an untimed fifth of it warms each path first). */
  count: number;
  rounds: number;
  timeoutMs: number;
}

/**
 * The same phase against each path in turn, round after round; per path its
 * median round (bench/versions.ts and bench/deprecation.ts compare two paths so).
 */
export async function medianOfAlternating<K extends string>(gen: LoadGenerator, paths: Record<K, string>,
  phase: (path: string, count: number) => PhaseSpec, o: AlternatingRounds): Promise<Record<K, Measured>> {
  const keys = Object.keys(paths) as K[];
  for (const k of keys) await gen.run(phase(paths[k], o.count / 5), o.timeoutMs);
  const rounds = Object.fromEntries(keys.map((k) => [k, [] as Measured[]])) as Record<K, Measured[]>;
  for (let round = 0; round < o.rounds; round++) {
    for (const k of keys) {
      const cpu0 = cpuMsPrecise(o.pid);
      const r = await gen.run(phase(paths[k], o.count), o.timeoutMs);
      rounds[k].push({ ...r, serverCpuMs: (cpuMsPrecise(o.pid) - cpu0) / r.requests });
    }
  }
  return Object.fromEntries(keys.map((k) => [k, medianRound(rounds[k])])) as Record<K, Measured>;
}

/**
 * Pairs of rounds, `first` and `second` in turn (the order swapped every
 * other pair, so neither always runs just after the other), as long as the
 * machine's load drifts: per path its median round, and the median of the
 * pairs' ratios of `second`'s rate to `first`'s (each pair ran under about
 * the same load).
 */
export async function pairedMedianGets(first: LoadGenerator, second: LoadGenerator, o: AlternatingGets): Promise<{ first: Measured; second: Measured; ratio: number; ratios: number[] }> {
  let seed = 1;
  const get = (n: number): PhaseSpec => ({ kind: 'get', namespace: o.namespace, prefix: 'sa-', population: o.population, count: n, seed: seed++, ...(o.collectionPath ? { collectionPath: o.collectionPath } : {}) });
  for (const g of [first, second]) await g.run(get(o.count / 10), o.timeoutMs);
  o.afterWarmUp?.();
  const measure = async (g: LoadGenerator): Promise<Measured> => {
    const cpu0 = cpuMsPrecise(o.pid);
    const r = await g.run(get(o.count), o.timeoutMs);
    return { ...r, serverCpuMs: (cpuMsPrecise(o.pid) - cpu0) / r.requests };
  };
  const firsts: Measured[] = [];
  const seconds: Measured[] = [];
  const ratios: number[] = [];
  for (let pair = 0; pair < o.rounds; pair++) {
    let a: Measured;
    let b: Measured;
    if (pair % 2 === 0) {
      a = await measure(first);
      b = await measure(second);
    } else {
      b = await measure(second);
      a = await measure(first);
    }
    firsts.push(a);
    seconds.push(b);
    ratios.push(b.perSec / a.perSec);
  }
  return { first: medianRound(firsts), second: medianRound(seconds), ratio: median(ratios), ratios };
}
