// The bench's one entry point: its argument parser (bench/args.ts) and its
// list of suites (bench/suites.ts), which bench/README.md's table must match.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { BenchArgsError, parseBenchArgs, usageOf } from '../../../bench/args.js';
import { findSuite, isOwn, suites } from '../../../bench/suites.js';

const benchDir = fileURLToPath(new URL('../../../../bench/', import.meta.url));

test('flags parse to their types, in both spellings; absent ones are false or undefined', () => {
  const a = parseBenchArgs(['--quick', '--rounds', '3', '--base=/x/main.js', 'file.cpuprofile'], ['quick', 'rounds', 'base', 'keep', 'count']);
  assert.deepEqual({ ...a }, { positionals: ['file.cpuprofile'], quick: true, rounds: 3, base: '/x/main.js', keep: false, count: undefined });
  assert.equal(parseBenchArgs(['--rounds=7'], ['rounds']).rounds, 7);
});

test('a flag the suite does not take, a short flag, a count that is not a whole number ≥ 1 or a missing value is refused with words that name it', () => {
  const refused = (argv: string[], words: RegExp) => assert.throws(() => parseBenchArgs(argv, ['quick', 'rounds']), (e: unknown) => e instanceof BenchArgsError && words.test(e.message));
  refused(['--perf'], /unknown flag --perf/);
  refused(['--no-such'], /unknown flag --no-such/);
  refused(['-q'], /unknown flag -q/);
  refused(['--rounds', 'three'], /--rounds takes a whole number, at least 1, not "three"/);
  refused(['--rounds=0'], /whole number, at least 1/);
  refused(['--rounds=-2'], /whole number/);
  refused(['--rounds=2.5'], /whole number/);
  refused(['--rounds='], /whole number/);
  refused(['--rounds'], /--rounds/);
  refused(['--quick=yes'], /--quick/);
});

test('a usage line names each flag with its value', () => {
  assert.equal(usageOf(['quick', 'rounds', 'base']), '[--quick] [--rounds N] [--base CLI]');
});

test('every suite has a unique name, an existing file, and a row in bench/README.md', () => {
  const names = suites.map((s) => s.name);
  assert.equal(new Set(names).size, names.length, 'suite names are unique');
  const readme = readFileSync(`${benchDir}README.md`, 'utf8');
  // The file column of the table: `| suite | file | … |`, a cell may name two files.
  const filesInTable = new Set(readme.split('\n').filter((l) => l.startsWith('| ')).flatMap((l) => (l.split(' | ')[1] ?? '').split(/,\s*/)));
  for (const s of suites) {
    assert.ok(existsSync(`${benchDir}${s.file}`), `${s.name}: bench/${s.file} exists`);
    assert.ok(filesInTable.has(s.file), `${s.name}: bench/README.md's table has a row for ${s.file}`);
    assert.equal(findSuite(s.name), s);
    if (!isOwn(s)) for (const flag of s.flags) assert.ok(usageOf([flag]).startsWith(`[--${flag}`));
  }
  assert.equal(findSuite('no-such-suite'), undefined);
});
