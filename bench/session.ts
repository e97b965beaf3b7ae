// What a bench of one server needs around its measurements: a fresh sqlite
// data dir, the built CLI child on it, an HTTPS agent for set-up requests and
// the load generator, all removed afterwards whatever happened; and the
// entry point of a bench file its owner also runs directly.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent } from 'node:https';
import { BenchServer, startBenchServer, type StartOptions } from './child.js';
import { LoadGenerator } from './load.js';
import type { Row } from './table.js';
import { BenchArgsError, parseBenchArgs, usageOf } from './args.js';

export interface BenchSession {
  server: BenchServer;
  /** The server's data dir (its pki/ serves the no-work server too). */
  dataDir: string;
  /** One keep-alive connection with the admin's credentials, for set-up requests. */
  agent: Agent;
  load: LoadGenerator;
}

/** `start`: more of the server's start options (another entry script, flags). */
export async function withBenchServer<T>(dataDirPrefix: string, concurrency: number, fn: (session: BenchSession) => Promise<T>,
  start: Omit<StartOptions, 'dataDir'> = {}): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), dataDirPrefix));
  let server: BenchServer | undefined;
  let load: LoadGenerator | undefined;
  let agent: Agent | undefined;
  try {
    server = await startBenchServer({ ...start, dataDir });
    agent = new Agent({ keepAlive: true, maxSockets: 1, ca: server.creds.ca, cert: server.creds.cert, key: server.creds.key });
    load = new LoadGenerator({ url: server.url, creds: server.creds, concurrency });
    return await fn({ server, dataDir, agent, load });
  } finally {
    agent?.destroy();
    await load?.close().catch(() => {});
    await server?.stop(2000).catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * When `moduleUrl` is the script node was started with (a suite whose owner
 * runs its file directly): runs the bench and prints its rows, its flags
 * (`--quick` alone) parsed by the bench's one parser.
 */
export async function runAlone(moduleUrl: string, bench: (opts: { quick: boolean; progress: (m: string) => void }) => Promise<Row[]>): Promise<void> {
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? '').href) return;
  let quick: boolean;
  try {
    ({ quick } = parseBenchArgs(process.argv.slice(2), ['quick']));
  } catch (e) {
    if (!(e instanceof BenchArgsError)) throw e;
    process.stderr.write(`${e.message}\nusage: ${usageOf(['quick'])}\n`);
    process.exit(2);
  }
  const rows = await bench({ quick, progress: (m) => process.stderr.write(`${m}\n`) });
  for (const r of rows) process.stdout.write(`| ${r.metric} | ${r.result} | ${r.target} |\n`);
}
