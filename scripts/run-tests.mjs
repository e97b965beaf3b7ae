// Runs every compiled test file under dist/test with node's test runner.
// Node 20 takes no globs, so the files are listed here.
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

/**
 * The files that took longest (the timing report's slowest files of a
 * clean .ci/run on Node 20), longest first. They start first, so that the workers end
 * together: node --test takes the files in the order given, and a long file
 * that comes late (integration/storage/etcd, about 12 s) otherwise runs alone at the
 * end while the other workers have nothing left. Every other file follows in
 * alphabetical order; a name here that no longer exists is passed over.
 */
const slowestFirst = [
  'e2e/cli-start', 'e2e/operators', 'e2e/workloads', 'e2e/services', 'e2e/apply', 'integration/storage/etcd', 'integration/restart',
  'e2e/certificates', 'e2e/aggregation', 'e2e/manifests', 'e2e/etcd', 'e2e/nodes-controllers', 'integration/watch',
  'integration/ops-shutdown', 'e2e/package', 'e2e/lifecycle', 'e2e/pods', 'e2e/kubectl', 'e2e/disruption', 'integration/hostile-patch',
].map((name) => join('dist/test', `${name}.test.js`));
const rank = (file) => (slowestFirst.includes(file) ? slowestFirst.indexOf(file) : slowestFirst.length);

/**
 * Test files run at once unless `--concurrency=N` says otherwise: more than
 * the two cores, since a test mostly waits (on its server, kubectl, etcd,
 * timers). Four took 0.73x the wall time of two at the same CPU time; six no
 * less than four (docs/perf/2026-12-07.md, the test suite's time).
 */
const defaultConcurrency = 4;

/**
 * `--set=lines`: what CI runs on the Node.js lines that do not run the whole
 * suite (.ci/run): the storage conformance suite on every driver, the TLS and
 * key material tests, etcd, SQLite across restarts and kill -9, and an
 * end-to-end set that drives the real kubectl.
 */
const sets = {
  lines: [
    'unit/storage/', 'integration/storage/',
    'unit/pki/', 'integration/pki/', 'integration/x509-authn', 'integration/client-connection',
    'e2e/etcd.test', 'integration/restart',
    'e2e/kubectl', 'e2e/cli-start',
  ],
};

// `--concurrency=N`: how many test files run at once (node --test's own
// option, given through); the default is chosen below.
let concurrency = defaultConcurrency;
const args = process.argv.slice(2).filter((arg) => {
  const given = /^--concurrency=(.*)$/.exec(arg)?.[1];
  if (given === undefined) return true;
  concurrency = Number(given);
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    console.error(`--concurrency takes a whole number of test files, at least 1, not ${JSON.stringify(given)}`);
    process.exit(2);
  }
  return false;
});
const only = args.flatMap((arg) => {
  const named = /^--set=(.*)$/.exec(arg)?.[1];
  if (named === undefined) return [arg];
  if (!Object.hasOwn(sets, named)) {
    console.error(`no test set named ${JSON.stringify(named)} (sets: ${Object.keys(sets).join(', ')})`);
    process.exit(2);
  }
  return sets[named];
});
// A compiled test whose source is gone (moved or deleted since the last build) is not run.
const hasSource = (file) => existsSync(file.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
const files = collect('dist/test')
  .filter(hasSource)
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort((a, b) => rank(a) - rank(b)); // stable: the rest keep their alphabetical order
// With no files, node --test would look for tests on its own and run helper scripts too.
if (files.length === 0) {
  console.error(`no test file matches ${only.map((o) => JSON.stringify(o)).join(' or ')}`);
  process.exit(1);
}
// Naming a reporter drops the default one, so the line's default is named too
// (TAP off a terminal before Node 23, spec otherwise); then where the time
// went, and the failure summary last, where CI's kept tail shows it.
const major = Number(process.versions.node.split('.')[0]);
const lineReporter = process.stdout.isTTY || major >= 23 ? 'spec' : 'tap';
const reporters = [
  `--test-reporter=${lineReporter}`, '--test-reporter-destination=stdout',
  `--test-reporter=${new URL('./timing-report.mjs', import.meta.url).href}`, '--test-reporter-destination=stdout',
  `--test-reporter=${new URL('./failure-summary.mjs', import.meta.url).href}`, '--test-reporter-destination=stdout',
];

// The tests start the CLI as users run it, the bundle (scripts/bundle.mjs):
// made here, from the sources, so that it is never older than the compiled tests.
const { bundle } = await import(new URL('./bundle.mjs', import.meta.url).href);
await bundle();

// Key material for every test server of the run, generated once here rather
// than by each server's first start (test/support/keymaterial.ts copies it).
const keyMaterialDir = mkdtempSync(join(tmpdir(), 'plat-test-keys-'));
const { ensureKeyMaterial } = await import(new URL('../dist/src/pki/index.js', import.meta.url).href);
await ensureKeyMaterial(keyMaterialDir, { serviceAccountKeyFiles: [] });
const env = { ...process.env, PLAT_TEST_KEY_MATERIAL: keyMaterialDir };

// No test takes a minute on a quiet machine (the slowest about 30 s); one that
// hangs (a child that never answers) fails after ten, rather than holding the
// run, and CI, until someone kills it.
const perTestTimeoutMs = 600_000;

const result = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, `--test-timeout=${perTestTimeoutMs}`, ...reporters, ...files], { stdio: 'inherit', env });
rmSync(keyMaterialDir, { recursive: true, force: true });
process.exit(result.status ?? 1);
