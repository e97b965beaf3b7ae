// The write path against its ceiling: ConfigMap creates and unconditional
// PUTs (no resourceVersion, as `kubectl replace` sends) of 1 KiB, beside the
// same requests to the no-work HTTPS server (bench/nowork-server.ts: same TLS
// set-up, reads each body, answers fixed small JSON), driven by one load
// generator in alternated rounds (which side goes first alternates too). Each
// side's rate is the median of its rounds, and its server CPU per request the
// median round's; the ratio divides the two medians. ConfigMaps leave no
// controller work, so this is the write path alone (the ServiceAccount rows
// of bench/run.ts carry the token controller's).
//
//   npm run bench -- writes [--quick] [--cpu-prof] [--perf]
//
// With --cpu-prof the server runs under `node --cpu-prof`, and its hot spots
// are printed to stderr at the end (its rates are then not the real ones).
// With --perf, after the rounds, one more phase of creates and one of PUTs
// run under Linux perf, and where each one's server CPU went is printed to
// stderr in µs per operation (bench/perfprofile.ts; on a loaded machine
// these are the figures to trust, not --cpu-prof's).

import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { readdirSync, rmSync } from 'node:fs';
import { cpuMsPrecise, settle, startNoWorkServer } from './child.js';
import { LoadGenerator } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { Measured, medianRound, rateCell } from './alternate.js';
import { formatProfile } from './profile.js';
import { formatPerf, perfAvailable, perfNodeArgs, perfRecord, summarisePerf } from './perfprofile.js';
import { withBenchServer } from './session.js';
import { fmtInt } from './stats.js';
import { Row, target } from './table.js';

export interface WritesBenchOptions {
  quick: boolean;
  /** Alternated rounds of each side (`--rounds N`); otherwise the suite's own count. */
  rounds?: number;
  progress: (msg: string) => void;
  /** Run the server under --cpu-prof and print its profile to stderr. */
  cpuProf?: boolean;
  /** Profile one more phase of creates and of PUTs with Linux perf, printed to stderr. */
  perf?: boolean;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 120_000;
const BYTES = 1024;
const namespace = 'writes';
export const writeGoals = { create: 0.65, replace: 0.45 };

/** A phase with the client's CPU per request beside the server's. */
type Timed = Measured & { clientCpuMs: number };

export interface WritesFigures {
  rows: Row[];
  /** The creates' median round (server CPU per create, rate), for the etcd row that compares with it. */
  create: Measured;
}

export async function benchWrites(opts: WritesBenchOptions): Promise<WritesFigures> {
  const { quick, progress, cpuProf = false } = opts;
  const perf = opts.perf === true && perfAvailable();
  if (opts.perf && !perf) progress('writes: perf is not available here (no profile)');
  const COUNT = quick ? 400 : 2_000;
  const ROUNDS = opts.rounds ?? (quick ? 5 : 7);
  const profDir = `/tmp/plat-bench-writes-prof-${process.pid}`;
  const nodeArgs = [...(cpuProf ? ['--cpu-prof', '--cpu-prof-dir', profDir] : []), ...(perf ? perfNodeArgs : [])];
  const figures = await withBenchServer('plat-bench-writes-', CONCURRENCY, async ({ server: s, dataDir }) => {
    const noWork = await startNoWorkServer(dataDir);
    const gen = new LoadGenerator({ url: s.url, noWorkUrl: noWork.url, creds: s.creds, concurrency: CONCURRENCY });
    try {
      await gen.run({ kind: 'namespaces', names: [namespace, 'writes-warm'] }, PHASE_TIMEOUT_MS);
      const population = COUNT * ROUNDS;
      const noWorkSpec = (method: 'POST' | 'PUT', count: number): PhaseSpec =>
        ({ kind: 'nowork', method, namespace, prefix: 'cm-', population, count, configMapBytes: BYTES });
      // Warm both servers and the client (JIT, sockets) on untimed requests of each shape.
      const warm = quick ? 1_000 : 2_000;
      progress(`writes: warm-up (${fmtInt(warm)} untimed of each)…`);
      await gen.run({ kind: 'create-cm', namespace: 'writes-warm', prefix: 'w-', count: warm, bytes: BYTES }, PHASE_TIMEOUT_MS);
      await gen.run({ kind: 'replace-cm', namespace: 'writes-warm', prefix: 'w-', population: warm, count: warm, bytes: BYTES, round: 0 }, PHASE_TIMEOUT_MS);
      await gen.run(noWorkSpec('POST', warm * 2), PHASE_TIMEOUT_MS);
      await gen.run(noWorkSpec('PUT', warm * 2), PHASE_TIMEOUT_MS);
      // The client's CPU too (this process: the load generator's worker thread and ours), for the ceiling rows.
      const timed = async (pid: number, spec: PhaseSpec): Promise<Timed> => {
        await settle(pid, 5_000);
        const cpu0 = cpuMsPrecise(pid);
        const client0 = process.cpuUsage();
        const r = await gen.run(spec, PHASE_TIMEOUT_MS);
        const client = process.cpuUsage(client0);
        return { ...r, serverCpuMs: (cpuMsPrecise(pid) - cpu0) / r.requests, clientCpuMs: (client.user + client.system) / 1000 / r.requests };
      };
      const sideBySide = async (method: 'POST' | 'PUT', real: (round: number) => PhaseSpec) => {
        const sides = { real: [] as Timed[], noWork: [] as Timed[] };
        for (let round = 0; round < ROUNDS; round++) {
          const turns = [
            async () => sides.real.push(await timed(s.pid, real(round))),
            async () => sides.noWork.push(await timed(noWork.pid, noWorkSpec(method, COUNT))),
          ];
          if (round % 2 === 1) turns.reverse();
          for (const t of turns) await t();
        }
        return { real: medianRound(sides.real), noWork: medianRound(sides.noWork) };
      };
      progress(`writes: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} ConfigMap creates and as many no-work POSTs…`);
      const create = await sideBySide('POST', (round) => ({ kind: 'create-cm', namespace, prefix: 'cm-', count: COUNT, first: round * COUNT, bytes: BYTES }));
      progress(`writes: create ${rateCell(create.real)}; no-work ${rateCell(create.noWork)}`);
      progress(`writes: ${ROUNDS} alternated rounds of ${fmtInt(COUNT)} unconditional ConfigMap PUTs and as many no-work PUTs…`);
      const replace = await sideBySide('PUT', (round) => ({ kind: 'replace-cm', namespace, prefix: 'cm-', population, count: COUNT, first: round * COUNT, bytes: BYTES, round: round + 1 }));
      progress(`writes: replace ${rateCell(replace.real)}; no-work ${rateCell(replace.noWork)}`);
      if (perf) {
        const profiled = async (name: string, spec: PhaseSpec) => {
          await settle(s.pid, 5_000);
          const file = `${profDir}-${name}.perf.data`;
          const stop = await perfRecord(s.pid, file);
          const r = await gen.run(spec, PHASE_TIMEOUT_MS);
          await settle(s.pid, 5_000);
          await stop();
          process.stderr.write(formatPerf(`writes: ${name} under perf, ${fmtInt(r.requests)} at ${fmtInt(r.perSec)}/s`, summarisePerf(file, r.requests), 40) + '\n');
          rmSync(file, { force: true });
        };
        const n = quick ? 3_000 : 6_000;
        progress(`writes: ${fmtInt(n)} creates and ${fmtInt(n)} PUTs under perf…`);
        await profiled('create', { kind: 'create-cm', namespace: 'writes-warm', prefix: 'perf-', count: n, bytes: BYTES });
        await profiled('replace', { kind: 'replace-cm', namespace: 'writes-warm', prefix: 'perf-', population: n, count: n, bytes: BYTES, round: 1 });
      }
      const ratio = (a: Measured, b: Measured) => a.perSec / b.perSec;
      // What the machine's cores allow at best: every core busy with nothing but this server's work and the
      // client's, for the CPU each request took (the server's summed over its threads). A ratio above this
      // ceiling needs less CPU per request, not more parallelism.
      const cores = availableParallelism();
      const ceiling = (a: Timed, b: Timed) => {
        const perRequestMs = a.serverCpuMs + a.clientCpuMs;
        const bestPerSec = (cores * 1000) / perRequestMs;
        return `at most ${(bestPerSec / b.perSec).toFixed(2)} on ${cores} cores (${fmtInt(bestPerSec)} req/s from ${(perRequestMs * 1000).toFixed(0)} µs a request: server ${(a.serverCpuMs * 1000).toFixed(0)} over all its threads, client ${(a.clientCpuMs * 1000).toFixed(0)}); the no-work server's client ${(b.clientCpuMs * 1000).toFixed(0)} µs a request`;
      };
      const cell = (a: Measured, b: Measured) => `${ratio(a, b).toFixed(2)} (${fmtInt(a.perSec)} / ${fmtInt(b.perSec)} req/s; server CPU ${(a.serverCpuMs * 1000).toFixed(0)} / ${(b.serverCpuMs * 1000).toFixed(0)} µs per request)`;
      const each = `median of ${ROUNDS} alternated rounds of ${fmtInt(COUNT)}, ${CONCURRENCY} clients`;
      const rows: Row[] = [
        { metric: `writes: create ConfigMap of 1 KiB (${each})`, result: rateCell(create.real), target: '—' },
        { metric: `writes: no-work HTTPS server, the same POSTs (${each})`, result: rateCell(create.noWork), target: '—' },
        { metric: `writes: unconditional PUT of a ConfigMap of 1 KiB, new labels (${each})`, result: rateCell(replace.real), target: '—' },
        { metric: `writes: no-work HTTPS server, the same PUTs (${each})`, result: rateCell(replace.noWork), target: '—' },
        { metric: 'writes: ratio, ConfigMap creates / no-work POSTs', result: cell(create.real, create.noWork), target: target(`≥ ${writeGoals.create}`, ratio(create.real, create.noWork) >= writeGoals.create) },
        { metric: 'writes: ratio, unconditional ConfigMap PUTs / no-work PUTs', result: cell(replace.real, replace.noWork), target: target(`≥ ${writeGoals.replace}`, ratio(replace.real, replace.noWork) >= writeGoals.replace) },
        { metric: 'writes: the ratio these creates could reach with every core busy (server and client CPU per create as measured)', result: ceiling(create.real, create.noWork), target: '—' },
        { metric: 'writes: the same for the unconditional PUTs', result: ceiling(replace.real, replace.noWork), target: '—' },
      ];
      return { rows, create: create.real };
    } finally {
      await gen.close().catch(() => {});
      await noWork.stop();
    }
  }, { nodeArgs });
  if (cpuProf) {
    for (const f of readdirSync(profDir).filter((f) => f.endsWith('.cpuprofile'))) process.stderr.write(formatProfile(join(profDir, f), 40) + '\n');
  }
  return figures;
}
