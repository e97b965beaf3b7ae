// A test reporter that says where the suite's time goes: after the run, the
// slowest files and the slowest tests, each with its duration. With
// PLAT_TEST_TIMINGS=<path> every file's and test's duration is also written
// there as JSON, for comparing two runs.
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const SHOWN_FILES = 20;
const SHOWN_TESTS = 40;

const seconds = (ms) => (ms / 1000).toFixed(1).padStart(6);

export default async function* timingReport(source) {
  /** file → its own duration as the runner reports it, else the sum of its top-level tests. */
  const files = new Map();
  const tests = [];
  for await (const event of source) {
    const { name, file, nesting, details } = event.data ?? {};
    const ms = details?.duration_ms;
    if (file === undefined || typeof ms !== 'number') continue;
    const entry = files.get(file) ?? { own: undefined, summed: 0, topLevel: Infinity };
    files.set(file, entry);
    // The runner completes each file as a test named by its path: the file's whole time, hooks and loading included.
    if (nesting === 0 && typeof name === 'string' && name.endsWith(file)) {
      if (event.type === 'test:complete') entry.own = ms;
      continue;
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    // The file's outermost tests (nesting 0 on Node 22+, 1 inside Node 20's file test) add up to the file.
    if (nesting < entry.topLevel) {
      entry.topLevel = nesting;
      entry.summed = 0;
    }
    if (nesting === entry.topLevel) entry.summed += ms;
    if (details?.type !== 'suite') tests.push({ file, name, ms });
  }
  if (files.size === 0) return;
  // A test defined in a shared module (the storage conformance suite) names that module, not the test file that ran it.
  const fileRows = [...files].filter(([file]) => file.endsWith('.test.js')).map(([file, e]) => ({ file: relative(process.cwd(), file), ms: e.own ?? e.summed }));
  fileRows.sort((a, b) => b.ms - a.ms);
  tests.sort((a, b) => b.ms - a.ms);
  const total = fileRows.reduce((sum, row) => sum + row.ms, 0);
  const shownFiles = fileRows.slice(0, SHOWN_FILES);
  const shownTests = tests.slice(0, SHOWN_TESTS);
  const share = (rows) => Math.round((100 * rows.reduce((sum, row) => sum + row.ms, 0)) / total);
  yield `\n== time by file: ${fileRows.length} files, ${seconds(total).trim()} s summed over both workers\n`;
  yield `slowest ${shownFiles.length} files (${share(shownFiles)}% of it):\n`;
  for (const row of shownFiles) yield `${seconds(row.ms)} s  ${row.file}\n`;
  yield `slowest ${shownTests.length} tests (${share(shownTests)}% of it):\n`;
  for (const row of shownTests) yield `${seconds(row.ms)} s  ${relative(process.cwd(), row.file)}: ${row.name}\n`;
  const out = process.env.PLAT_TEST_TIMINGS;
  if (out) {
    writeFileSync(out, JSON.stringify({ files: fileRows, tests: tests.map((t) => ({ ...t, file: relative(process.cwd(), t.file) })) }, null, 1));
  }
}
