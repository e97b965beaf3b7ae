// Makes sure the programs the test suite runs besides Node are there before
// any test starts (`npm test` and `.ci/run` both call it): a missing one
// would otherwise surface as one failing suite among hundreds of passing
// ones. What Debian packages can supply is installed when this runs as root
// with apt (one `apt-get update`, one `apt-get install`); anything else stops
// the run with exit status 1 and the command that would fix it. A program is
// never a reason to skip a test.
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** kubectl must be within one minor version of this (the version the end-to-end tests were written against). */
const kubectlMinor = 32;
const kubectlDownload = `https://kubernetes.io/docs/tasks/tools/ (for example https://dl.k8s.io/release/v1.${kubectlMinor}.0/bin/linux/amd64/kubectl)`;

/**
 * Every external program a test runs, in one list. `pkg` is the Debian
 * package that supplies it; without one it is never installed here.
 */
const requirements = [
  {
    // The end-to-end tests drive the real kubectl. Debian's candidates are other versions, so it is only checked.
    name: 'kubectl',
    check: () => checkKubectl(),
    obtain: `install kubectl v1.${kubectlMinor} from ${kubectlDownload} onto the PATH`,
  },
  { name: 'etcd', pkg: 'etcd-server', check: () => runs('etcd', ['--version']) },
  { name: 'openssl', pkg: 'openssl', check: () => runs('openssl', ['version']) },
  // The metrics test lints /metrics with Prometheus's own checker.
  { name: 'promtool', pkg: 'prometheus', check: () => runs('promtool', ['--version']) },
  {
    // Debian's python3-kubernetes installs for the system interpreter, whatever python3 comes first on the PATH.
    name: '/usr/bin/python3 with the kubernetes module',
    pkg: 'python3-kubernetes',
    check: () => runs('/usr/bin/python3', ['-c', 'import kubernetes']),
  },
];

/** undefined when the program answers, else why not. */
function runs(command, args) {
  const r = spawnSync(command, args, { stdio: 'ignore', timeout: 30_000 });
  if (r.error) return r.error.code === 'ENOENT' ? 'not found' : r.error.message;
  return r.status === 0 ? undefined : `exits with status ${r.status ?? r.signal}`;
}

function checkKubectl() {
  const r = spawnSync('kubectl', ['version', '--client', '-o', 'json'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error) return r.error.code === 'ENOENT' ? 'not found' : r.error.message;
  let version;
  try {
    version = JSON.parse(r.stdout).clientVersion;
  } catch {
    return `kubectl version --client -o json answered no version (status ${r.status})`;
  }
  // Builds may carry a suffix on the minor ("32+").
  const major = parseInt(version?.major, 10);
  const minor = parseInt(version?.minor, 10);
  if (major === 1 && Math.abs(minor - kubectlMinor) <= 1) return undefined;
  return `found ${version?.gitVersion ?? `v${version?.major}.${version?.minor}`}, the tests need v1.${kubectlMinor - 1} to v1.${kubectlMinor + 1}`;
}

function missing() {
  const out = [];
  for (const r of requirements) {
    const problem = r.check();
    if (problem !== undefined) out.push({ ...r, problem });
  }
  return out;
}

const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

/** Runs apt-get; undefined on success, else what went wrong (with the end of its output). */
function aptGet(args) {
  const r = spawnSync('apt-get', args, { env: aptEnv, encoding: 'utf8', timeout: 15 * 60_000 });
  if (r.error) return r.error.code === 'ENOENT' ? 'apt-get is not on the PATH' : r.error.message;
  if (r.status === 0) return undefined;
  const tail = `${r.stdout}${r.stderr}`.trim().split('\n').slice(-5).join('\n    ');
  return `apt-get ${args[0]} exited with status ${r.status ?? r.signal}${tail ? `:\n    ${tail}` : ''}`;
}

/** Looked up on the PATH rather than run, so that finding it has no effects of its own. */
function hasApt() {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir || '.', 'apt-get'), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

function main() {
  let lacking = missing();
  const packages = [...new Set(lacking.filter((r) => r.pkg).map((r) => r.pkg))];
  const isRoot = process.getuid?.() === 0;
  let installFailure;
  if (packages.length > 0) {
    if (!isRoot) installFailure = 'not running as root';
    else if (!hasApt()) installFailure = 'apt-get is not on the PATH';
    else {
      for (const r of lacking) if (r.pkg) console.log(`prepare-tests: installing ${r.pkg} (for ${r.name}: ${r.problem})`);
      installFailure = aptGet(['update', '-qq']) ?? aptGet(['install', '-y', '-qq', ...packages]);
      lacking = missing();
    }
  }
  if (lacking.length === 0) return 0;

  const lines = ['prepare-tests: the tests need programs this machine lacks; no test was run.'];
  for (const r of lacking) lines.push(`  ${r.name}: ${r.problem}`);
  const stillNeeded = [...new Set(lacking.filter((r) => r.pkg).map((r) => r.pkg))];
  if (stillNeeded.length > 0) {
    if (installFailure) lines.push(`They were not installed: ${installFailure}.`);
    const sudo = isRoot ? '' : 'sudo ';
    lines.push(`Install with: ${sudo}apt-get update && ${sudo}apt-get install -y ${stillNeeded.join(' ')}`);
  }
  for (const r of lacking) if (r.obtain) lines.push(`For ${r.name}: ${r.obtain}.`);
  console.error(lines.join('\n'));
  return 1;
}

process.exitCode = main();
