// Runs every compiled test file under dist/test with node's test runner.
// Node 20 takes no globs, so the files are listed here; one file at a time
// keeps servers and kubectl runs from fighting over the two cores.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith('.test.js')) out.push(path);
  }
  return out;
}

const only = process.argv.slice(2);
const files = collect('dist/test').filter((f) => only.length === 0 || only.some((o) => f.includes(o)));
// With no files, node --test would look for tests on its own and run helper scripts too.
if (files.length === 0) {
  console.error(`no test file matches ${only.map((o) => JSON.stringify(o)).join(' or ')}`);
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--test', '--test-concurrency=2', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
