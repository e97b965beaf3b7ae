// The bench's one entry point: `npm run bench -- <suite> [flags]` runs one
// suite by name (bench/suites.ts lists them, bench/README.md says what each
// measures and its target); without a suite, the full run (`all`).
// `npm run bench -- list` names every suite with its flags; `<suite> --help`
// explains them. Flags are parsed here, by bench/args.ts, against the ones
// the suite declares; a suite that keeps its own parser (its owner's) runs as
// a child process of its file with the rest of the command line.
// A suite's rows are printed as one markdown table, then which targets were
// met and missed; progress goes to stderr.

import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { BenchArgsError, flagHelp, parseBenchArgs, usageOf } from './args.js';
import { findSuite, isOwn, suites, type Suite } from './suites.js';
import { markdownTable } from './table.js';
import { targetSummary } from './targets.js';

const flagsOf = (s: Suite) => (isOwn(s) ? s.usage : `${s.operands ? `${s.operands} ` : ''}${usageOf(s.flags)}` || '(no flags)');
const usageLine = (s: Suite) => `npm run bench -- ${s.name} ${flagsOf(s)}`.trimEnd();

function list(): string {
  const width = Math.max(...suites.map((s) => s.name.length));
  return [
    'usage: npm run bench -- [<suite>] [flags]   (no suite: all)',
    '',
    ...suites.map((s) => `  ${s.name.padEnd(width)}  ${s.what}\n  ${' '.repeat(width)}  ${flagsOf(s)}`),
    '',
    '`npm run bench -- <suite> --help` explains its flags.',
  ].join('\n') + '\n';
}

function help(s: Suite): string {
  if (isOwn(s)) return `usage: ${usageLine(s)}\n${s.what}\n(flags as the head of bench/${s.file} describes them)\n`;
  return `usage: ${usageLine(s)}\n${s.what}\n${s.flags.length ? flagHelp(s.flags) + '\n' : ''}`;
}

async function main(argv: string[]): Promise<number> {
  const named = argv[0] !== undefined && !argv[0].startsWith('-') ? argv[0] : undefined;
  if (named === 'list') {
    process.stdout.write(list());
    return 0;
  }
  const s = findSuite(named ?? 'all');
  if (!s) {
    process.stderr.write(`no suite named ${JSON.stringify(named)}\n\n${list()}`);
    return 2;
  }
  const rest = named === undefined ? argv : argv.slice(1);
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(help(s));
    return 0;
  }
  if (isOwn(s)) {
    const file = fileURLToPath(new URL(`./${s.file.replace(/\.ts$/, '.js')}`, import.meta.url));
    const child = spawnSync(process.execPath, [...(s.nodeArgs ?? []), file, ...rest], { stdio: 'inherit' });
    return child.status ?? 1;
  }
  let args;
  try {
    args = parseBenchArgs(rest, s.flags);
    if (args.positionals.length > 0 && !s.operands) {
      throw new BenchArgsError(`unexpected ${JSON.stringify(args.positionals[0])}`);
    }
  } catch (e) {
    if (!(e instanceof BenchArgsError)) throw e;
    process.stderr.write(`${e.message}\n${help(s)}`);
    return 2;
  }
  const t0 = performance.now();
  const progress = (m: string) => process.stderr.write(`[${s.name} ${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${m}\n`);
  const rows = await s.run(args, progress);
  if (rows) process.stdout.write(markdownTable(rows) + targetSummary(rows));
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e) => {
    if (e instanceof BenchArgsError) {
      process.stderr.write(`${e.message}\n`);
      process.exit(2);
    }
    process.stderr.write(`bench failed: ${(e as Error)?.stack ?? String(e)}\n`);
    process.exit(1);
  },
);
