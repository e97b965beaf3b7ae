#!/usr/bin/env node
// The plat-apiserver command: flags in, a running server out. Exits 2 on a
// bad flag, 1 when the server cannot start (one line saying why), 0 after a
// clean stop on SIGINT/SIGTERM. `migrate` copies one store into another and
// exits (1 when the copy fails).
//
// Only the flags are loaded before the flags are read (a bad flag, --help and
// --version answer without loading the server); the server's modules
// (serve.ts and all it reaches) load after, with Node's compile cache where
// Node has one.

import module from 'node:module';
// Node has started and loaded this file: the first step of a start (apiserver/phases.ts).
performance.mark('start:node');
import { commandName, FlagError, parseFlags } from './flags.js';
import { mapStackTraces } from '../machinery/sourcemaps.js';

// From Node 22.1 on, compiled code is kept on disk and the next start skips
// compiling it (most of the server's modules load after this line); Node 20
// has no such cache and compiles every start.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();

// The CLI runs as a bundle (scripts/bundle.mjs): stack traces name our sources through its source maps.
mapStackTraces();

function say(text: string): void {
  if (process.stderr.writable) process.stderr.write(text);
}

function badFlags(e: unknown): never {
  if (e instanceof FlagError) {
    process.stderr.write(`Error: ${e.message}\nRun with --help to see the flags.\n`);
    process.exit(2);
  }
  throw e;
}

async function migrate(argv: string[]): Promise<void> {
  const { parseMigrateFlags, runMigrate } = await import('./migrate.js');
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
    say(`${commandName} migrate: ${(e as Error)?.message ?? String(e)}\n`);
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
  if ('version' in parsed) {
    const [{ packageVersion }, { versionInfo }] = await Promise.all([import('../apiserver/version.js'), import('../server/discovery.js')]);
    process.stdout.write(`${commandName} ${versionInfo(await packageVersion()).gitVersion}\n`);
    return;
  }
  const options = parsed.options;
  const { serve } = await import('./serve.js');
  performance.mark('start:modules');
  await serve(options);
}

main(process.argv.slice(2)).catch((e) => {
  say(`${commandName}: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
