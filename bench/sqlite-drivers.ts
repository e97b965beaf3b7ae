// The two SQLite bindings side by side on this Node: the store rows (group
// commits from 16 callers, single-row commits from one, gets, range reads)
// and a server's ServiceAccount creates and gets, each binding's server
// started alike. Rounds alternate which binding goes first; each row reports
// the median over the rounds, since other work on the machine disturbs single
// rounds. Usage: npm run bench -- sqlite-drivers [--rounds N]
// (node:sqlite needs Node 22.13 or later).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteBackend } from '../src/storage/sqlite/store.js';
import { availableDrivers, driverVariable, type DriverName } from '../src/storage/sqlite/driver.js';
import { BenchServer, cpuMs, startBenchServer } from './child.js';
import { LoadGenerator } from './load.js';
import { measureBackend } from './storage.js';
import { fmtCpu, fmtInt } from './stats.js';

const drivers: DriverName[] = ['better-sqlite3', 'node:sqlite'];
const STORE_KEYS = 10_000;
const CREATES = 2_000;
const GETS = 10_000;
const POPULATION = 2_000;
const PHASE_TIMEOUT_MS = 120_000;

/** Per row, per driver: the rate of each round (and server CPU per request for server rows). */
type Samples = Map<string, Record<DriverName, { rate: number; cpuMs?: number }[]>>;

function record(samples: Samples, row: string, driver: DriverName, rate: number, cpu?: number): void {
  let entry = samples.get(row);
  if (!entry) samples.set(row, entry = { 'better-sqlite3': [], 'node:sqlite': [] });
  entry[driver].push({ rate, cpuMs: cpu });
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function storeRound(samples: Samples, driver: DriverName): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-drivers-'));
  try {
    const backend = openSqliteBackend(join(dir, 'store.db'), driver);
    const rows = await measureBackend('store:', backend, STORE_KEYS);
    await backend.close();
    for (const r of rows) record(samples, r.name, driver, r.opsPerSec);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Side {
  server: BenchServer;
  load: LoadGenerator;
  dir: string;
}

async function startSide(driver: DriverName): Promise<Side> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-drivers-server-'));
  const server = await startBenchServer({ dataDir: dir, env: { [driverVariable]: driver } });
  const load = new LoadGenerator({ url: server.url, creds: server.creds, concurrency: 16 });
  await load.run({ kind: 'namespaces', names: ['bench', 'bench-warm'] }, PHASE_TIMEOUT_MS);
  // The population the gets pick from, and the JIT warmed on both sides of the connection.
  await load.run({ kind: 'create', namespace: 'bench', prefix: 'sa-', count: POPULATION, remember: false }, PHASE_TIMEOUT_MS);
  await load.run({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: POPULATION, count: 2_000, seed: 1 }, PHASE_TIMEOUT_MS);
  return { server, load, dir };
}

async function serverRound(samples: Samples, driver: DriverName, side: Side, round: number): Promise<void> {
  const pid = side.server.pid;
  let cpu0 = cpuMs(pid);
  const create = await side.load.run({ kind: 'create', namespace: 'bench-warm', prefix: `r${round}-`, count: CREATES, remember: false }, PHASE_TIMEOUT_MS);
  record(samples, `server: create ServiceAccount (${fmtInt(CREATES)} POSTs, 16 clients)`, driver, create.perSec, (cpuMs(pid) - cpu0) / create.requests);
  cpu0 = cpuMs(pid);
  const get = await side.load.run({ kind: 'get', namespace: 'bench', prefix: 'sa-', population: POPULATION, count: GETS, seed: 100 + round }, PHASE_TIMEOUT_MS);
  record(samples, `server: get ServiceAccount (${fmtInt(GETS)} random GETs)`, driver, get.perSec, (cpuMs(pid) - cpu0) / get.requests);
}

function table(samples: Samples, rounds: number): string {
  const lines = [
    `| row (Node ${process.version}, median of ${rounds} alternated rounds) | better-sqlite3 | node:sqlite | node:sqlite / better-sqlite3 |`,
    '|---|---|---|---|',
  ];
  for (const [row, byDriver] of samples) {
    const cell = (d: DriverName) => {
      const rates = byDriver[d].map((s) => s.rate);
      const cpus = byDriver[d].flatMap((s) => (s.cpuMs === undefined ? [] : [s.cpuMs]));
      const cpu = cpus.length ? ` · server CPU ${fmtCpu(median(cpus))}/req` : '';
      return `${fmtInt(median(rates))}/s${cpu} (rounds: ${rates.map(fmtInt).join(', ')})`;
    };
    const ratio = median(byDriver['node:sqlite'].map((s) => s.rate)) / median(byDriver['better-sqlite3'].map((s) => s.rate));
    lines.push(`| ${row} | ${cell('better-sqlite3')} | ${cell('node:sqlite')} | ${ratio.toFixed(3)} |`);
  }
  return lines.join('\n') + '\n';
}

/** Prints its table itself (a column per driver) and keeps it in bench/results.sqlite-drivers.node<major>.md. */
export async function benchSqliteDrivers({ rounds, progress }: { rounds: number; progress: (m: string) => void }): Promise<void> {
  if (!availableDrivers().includes('node:sqlite')) {
    throw new Error(`node:sqlite cannot serve on Node ${process.version} (it needs 22.13 or later); nothing to compare`);
  }
  const samples: Samples = new Map();
  const load0 = loadavg().map((x) => x.toFixed(2)).join(' ');
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? drivers : [...drivers].reverse();
    for (const driver of order) await storeRound(samples, driver);
    progress(`round ${round + 1}/${rounds}: store rows done`);
  }
  const sides = {} as Record<DriverName, Side>;
  try {
    for (const driver of drivers) sides[driver] = await startSide(driver);
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? drivers : [...drivers].reverse();
      for (const driver of order) await serverRound(samples, driver, sides[driver], round);
      progress(`round ${round + 1}/${rounds}: server rows done`);
    }
  } finally {
    for (const side of Object.values(sides)) {
      await side.load.close();
      await side.server.stop();
      rmSync(side.dir, { recursive: true, force: true });
    }
  }
  const text = `${table(samples, rounds)}\nLoad average ${load0} before, ${loadavg().map((x) => x.toFixed(2)).join(' ')} after.\n`;
  process.stdout.write(text);
  writeFileSync(new URL(`../../bench/results.sqlite-drivers.node${process.versions.node.split('.')[0]}.md`, import.meta.url), text);
}
