// What auditing costs: two servers (built CLI children, fresh sqlite data
// dirs) in the same run, one without audit (the default) and one with a
// policy auditing everything at Metadata to a log file. ServiceAccount
// creates and gets run on each in rounds of plain, audited, audited, plain,
// and each figure is the mean of its runs, so that a neighbour's burst on
// the shared CPUs favours neither; the target compares server CPU per
// request, steadier than req/s.

import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { vocabulary } from '../src/machinery/vocabulary.js';
import { BenchServer, cpuMs, cpuMsPrecise, startBenchServer } from './child.js';
import { LoadGenerator, PhaseResult } from './load.js';
import type { PhaseSpec } from './load-protocol.js';
import { fmtInt, fmtMB, fmtCpu, fmtMs } from './stats.js';
import { Row, target } from './table.js';

export interface AuditBenchOptions {
  quick: boolean;
  progress: (msg: string) => void;
}

const CONCURRENCY = 16;
const PHASE_TIMEOUT_MS = 120_000;
const goalOverheadPct = 10;

interface Measured extends PhaseResult {
  serverCpuMs: number;
}

interface Side {
  server: BenchServer;
  load: LoadGenerator;
}

export async function benchAudit(opts: AuditBenchOptions): Promise<Row[]> {
  const { quick, progress } = opts;
  const COUNT = quick ? 500 : 2_500;
  const ROUNDS = quick ? 2 : 3;
  // A get costs ~45 µs of server CPU, and a neighbour's burst on the shared
  // cores moves a phase's figure by more than the few per cent measured: many
  // short phases (a quarter of a second), so that bursts weigh on both sides
  // alike. The scheduler's nanosecond count times them, not 10 ms ticks.
  const GET_COUNT = quick ? 1_000 : 5_000;
  const GET_ROUNDS = quick ? 2 : 20;
  const WARMUP = quick ? 500 : 3_000;
  const root = mkdtempSync(join(tmpdir(), 'plat-bench-audit-'));
  const policy = join(root, 'policy.yaml');
  const logPath = join(root, 'audit.log');
  writeFileSync(policy, `apiVersion: ${vocabulary.auditGroup}/v1\nkind: Policy\nrules:\n- level: Metadata\n`);
  const sides: Side[] = [];
  try {
    const start = async (name: string, extraArgs: string[]): Promise<Side> => {
      const dataDir = join(root, name);
      const server = await startBenchServer({ dataDir, extraArgs });
      const side = { server, load: new LoadGenerator({ url: server.url, creds: server.creds, concurrency: CONCURRENCY }) };
      sides.push(side);
      return side;
    };
    const plain = await start('plain', []);
    const audited = await start('audited', ['--audit-policy-file', policy, '--audit-log-path', logPath]);
    const run = async (side: Side, spec: PhaseSpec): Promise<Measured> => {
      const cpu0 = cpuMsPrecise(side.server.pid);
      const r = await side.load.run(spec, PHASE_TIMEOUT_MS);
      return { ...r, serverCpuMs: (cpuMsPrecise(side.server.pid) - cpu0) / r.requests };
    };
    for (const side of [plain, audited]) {
      await side.load.run({ kind: 'namespaces', names: ['warm', ...Array.from({ length: ROUNDS }, (_, r) => [`r${r}a`, `r${r}b`]).flat()] }, PHASE_TIMEOUT_MS);
      await run(side, { kind: 'create', namespace: 'warm', prefix: 'sa-', count: WARMUP, remember: false });
      await run(side, { kind: 'get', namespace: 'warm', prefix: 'sa-', population: WARMUP, count: WARMUP, seed: 1 });
    }
    const mean = (ms: Measured[]): Measured => {
      const avg = (f: (m: Measured) => number) => ms.reduce((sum, m) => sum + f(m), 0) / ms.length;
      return {
        ...ms[0]!, requests: ms.reduce((n, m) => n + m.requests, 0), perSec: avg((m) => m.perSec), p50ms: avg((m) => m.p50ms),
        p99ms: avg((m) => m.p99ms), serverCpuMs: avg((m) => m.serverCpuMs),
      };
    };
    // Each round's namespaces are its own, so creates never meet names of an earlier round.
    const phase = async (spec: (round: number, half: 'a' | 'b') => PhaseSpec, what: string, rounds: number) => {
      progress(`audit: ${what}, ${rounds} rounds of plain / audited / audited / plain…`);
      const p: Measured[] = [];
      const a: Measured[] = [];
      for (let round = 0; round < rounds; round++) {
        p.push(await run(plain, spec(round, 'a')));
        a.push(await run(audited, spec(round, 'a')));
        a.push(await run(audited, spec(round, 'b')));
        p.push(await run(plain, spec(round, 'b')));
      }
      return { plain: mean(p), audited: mean(a) };
    };
    const creates = await phase((round, half) => ({ kind: 'create', namespace: `r${round}${half}`, prefix: 'sa-', count: COUNT, remember: false }), `${fmtInt(COUNT)} creates`, ROUNDS);
    // The token controller finishes the last creates' secrets first: that work belongs to neither side's gets.
    for (const side of sides) await settled(side.server.pid);
    const gets = await phase((round, half) => ({
      kind: 'get', namespace: `r${round % ROUNDS}${half}`, prefix: 'sa-', population: COUNT, count: GET_COUNT, seed: round,
    }), `${fmtInt(GET_COUNT)} gets`, GET_ROUNDS);
    const logBytes = statSync(logPath).size;

    const cell = (m: Measured, base?: Measured) => {
      const over = base ? ` (${overhead(m, base)} server CPU vs. no audit)` : '';
      return `${fmtInt(m.perSec)} req/s · p50 ${fmtMs(m.p50ms)} · p99 ${fmtMs(m.p99ms)} · server CPU ${fmtCpu(m.serverCpuMs)}/req${over}`;
    };
    const pct = (m: Measured, base: Measured) => ((m.serverCpuMs - base.serverCpuMs) / base.serverCpuMs) * 100;
    const goal = `< ${goalOverheadPct} % server CPU over no audit`;
    return [
      { metric: `audit: create ServiceAccount, no audit (default; ${2 * ROUNDS} × ${fmtInt(COUNT)} POSTs, ${CONCURRENCY} clients, mean)`, result: cell(creates.plain), target: '—' },
      { metric: `audit: create ServiceAccount, audit at Metadata to a file (${2 * ROUNDS} × ${fmtInt(COUNT)} POSTs, mean)`, result: cell(creates.audited, creates.plain), target: target(goal, pct(creates.audited, creates.plain) < goalOverheadPct) },
      { metric: `audit: get ServiceAccount, no audit (${2 * GET_ROUNDS} × ${fmtInt(GET_COUNT)} GETs, mean)`, result: cell(gets.plain), target: '—' },
      { metric: `audit: get ServiceAccount, audit at Metadata to a file (${2 * GET_ROUNDS} × ${fmtInt(GET_COUNT)} GETs, mean; log ${fmtMB(logBytes)} in all)`, result: cell(gets.audited, gets.plain), target: target(goal, pct(gets.audited, gets.plain) < goalOverheadPct) },
    ];
  } finally {
    for (const side of sides) {
      await side.load.close().catch(() => {});
      await side.server.stop(5000).catch(() => {});
    }
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Waits until a server is nearly idle (at most one 10 ms tick of CPU in
 * 300 ms; 10 s at most): work left over from one phase is not the next one's.
 */
async function settled(pid: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  let last = cpuMs(pid);
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = cpuMs(pid);
    if (now - last <= 10) return;
    last = now;
  }
}

function overhead(m: Measured, base: Measured): string {
  const pct = ((m.serverCpuMs - base.serverCpuMs) / base.serverCpuMs) * 100;
  return `${pct >= 0 ? '+' : ''}${pct.toFixed(1)} %`;
}
