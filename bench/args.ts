// The one argument parser of the bench: every flag any suite takes is
// declared once here (its type and what it does), each suite names the ones
// it takes (bench/suites.ts), and `npm run bench -- <suite> ...` parses the
// command line against that list, so a flag means the same thing in every
// suite and one a suite does not take is refused rather than ignored.

import { parseArgs } from 'node:util';

export interface FlagSpec {
  type: 'boolean' | 'string' | 'number';
  /** What the value is, in the usage line (`--rounds N`). */
  value?: string;
  help: string;
  /** Given more than once, every value is kept (in order). */
  multiple?: boolean;
}

/** Every flag of every suite. */
export const flagTable = {
  quick: { type: 'boolean', help: 'a smoke run: fewer objects, requests and rounds' },
  rounds: { type: 'number', value: 'N', help: 'alternated rounds of each side' },
  count: { type: 'number', value: 'N', help: 'requests per round' },
  keep: { type: 'boolean', help: 'keep the temporary data dirs (and profiles in them)' },
  'cpu-prof': { type: 'boolean', help: 'run the server under node --cpu-prof and print its hot spots (results file not written)' },
  perf: { type: 'boolean', help: 'profile the server with Linux perf where the suite offers it' },
  functions: { type: 'boolean', help: 'with --perf: where CPU went by function' },
  'keep-perf': { type: 'boolean', help: 'with --perf: keep the perf data files' },
  base: { type: 'string', value: 'CLI', help: "another build's dist/src/cli/main.js beside this one" },
  baseline: { type: 'string', value: 'COMMIT', help: 'the commit to build in a temporary folder and run beside this build' },
  entry: { type: 'string', value: 'CLI', help: "the server's entry script instead of this build's" },
  backend: { type: 'string', value: 'sqlite|etcd3', help: 'etcd3: the foundation rows again on a local etcd (needs the etcd binary)' },
  'no-reads': { type: 'boolean', help: 'skip the reading-at-scale rows' },
  'no-memory': { type: 'boolean', help: 'skip the memory and selector rows' },
  'no-cache': { type: 'boolean', help: 'skip the in-process watch cache rows' },
  'no-store': { type: 'boolean', help: 'skip the raw storage rows' },
  heavy: { type: 'boolean', help: 'the 100,000-object loads too (default in a full run)' },
  light: { type: 'boolean', help: 'without the 100,000-object loads' },
  top: { type: 'number', value: 'N', help: 'rows of the summary' },
  ops: { type: 'number', value: 'N', help: 'operations the profile covers (for the per-operation figures)' },
} as const satisfies Record<string, FlagSpec>;

export type FlagName = keyof typeof flagTable;

type ValueOf<F extends FlagName> = (typeof flagTable)[F]['type'] extends 'boolean' ? boolean
  : (typeof flagTable)[F]['type'] extends 'number' ? number | undefined : string | undefined;

/** What was given: each declared flag's value (false or undefined when absent) and the words that are not flags. */
export type ParsedArgs<F extends FlagName> = { [K in F]: ValueOf<K> } & { positionals: string[] };

/** A command line the suite cannot take; `npm run bench` prints it with the suite's usage and exits 2. */
export class BenchArgsError extends Error {}

/** `--rounds N` and `--rounds=N` alike; a flag not in `allowed` is an error, as is a count that is not a whole number ≥ 1. */
export function parseBenchArgs<F extends FlagName>(argv: readonly string[], allowed: readonly F[]): ParsedArgs<F> {
  const options: Record<string, { type: 'boolean' | 'string'; multiple?: boolean }> = {};
  for (const name of allowed) {
    const spec: FlagSpec = flagTable[name];
    options[name] = { type: spec.type === 'boolean' ? 'boolean' : 'string', ...(spec.multiple ? { multiple: true } : {}) };
  }
  for (const arg of argv) {
    if (arg === '--') break;
    const name = /^--([^=]+)/.exec(arg)?.[1];
    if (name !== undefined && !(allowed as readonly string[]).includes(name)) throw new BenchArgsError(`unknown flag --${name}`);
    if (/^-[^-]/.test(arg)) throw new BenchArgsError(`unknown flag ${arg}`);
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options, strict: true, allowPositionals: true });
  } catch (e) {
    // Left to node:util: a value missing ("Option '--rounds <value>' argument missing") or given to a boolean.
    throw new BenchArgsError((e as Error).message);
  }
  const out: Record<string, unknown> = { positionals: parsed.positionals };
  for (const name of allowed) {
    const spec: FlagSpec = flagTable[name];
    const given = (parsed.values as Record<string, string | boolean | undefined>)[name];
    if (spec.type === 'boolean') out[name] = given === true;
    else if (spec.type === 'number') out[name] = given === undefined ? undefined : count(name, String(given));
    else out[name] = given;
  }
  return out as ParsedArgs<F>;
}

/** Every number flag counts something (rounds, requests, rows): a whole number, at least 1. */
function count(name: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n < 1) throw new BenchArgsError(`--${name} takes a whole number, at least 1, not ${JSON.stringify(text)}`);
  return n;
}

/** The flags part of a usage line: `[--quick] [--rounds N]`. */
export function usageOf(allowed: readonly FlagName[]): string {
  return allowed.map((name) => {
    const spec: FlagSpec = flagTable[name];
    return `[--${name}${spec.value ? ` ${spec.value}` : ''}]`;
  }).join(' ');
}

/** One line per flag: name, value and what it does. */
export function flagHelp(allowed: readonly FlagName[]): string {
  return allowed.map((name) => {
    const spec: FlagSpec = flagTable[name];
    return `  --${`${name}${spec.value ? ` ${spec.value}` : ''}`.padEnd(20)} ${spec.help}`;
  }).join('\n');
}
