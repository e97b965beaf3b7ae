#!/usr/bin/env node
// The plat-apiserver command: flags in, a running server out. Exits 2 on a
// bad flag, 0 after a clean stop on SIGINT/SIGTERM. `migrate` copies one
// store into another and exits (1 when the copy fails).

import { commandName, FlagError, parseFlags } from './flags.js';
import { parseMigrateFlags, runMigrate } from './migrate.js';
import { startServer } from '../server/start.js';

function badFlags(e: unknown): never {
  if (e instanceof FlagError) {
    process.stderr.write(`Error: ${e.message}\nRun with --help to see the flags.\n`);
    process.exit(2);
  }
  throw e;
}

async function migrate(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseMigrateFlags(argv);
  } catch (e) {
    badFlags(e);
  }
  if ('help' in parsed) {
    process.stdout.write(parsed.help);
    return;
  }
  try {
    process.stdout.write(`${await runMigrate(parsed)}\n`);
  } catch (e) {
    if (e instanceof FlagError) badFlags(e);
    process.stderr.write(`${commandName} migrate: ${(e as Error)?.message ?? String(e)}\n`);
    process.exit(1);
  }
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'migrate') return migrate(argv.slice(1));
  let parsed;
  try {
    parsed = parseFlags(argv);
  } catch (e) {
    badFlags(e);
  }
  if ('help' in parsed) {
    process.stdout.write(parsed.help);
    return;
  }
  const server = await startServer(parsed.options);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`received ${signal}, shutting down\n`);
    server.stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main(process.argv.slice(2)).catch((e) => {
  process.stderr.write(`${commandName}: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
