// The preparation `npm test` runs first, on a PATH of fakes: kubectl,
// openssl and promtool answer, etcd is missing, and apt-get is a script that records how
// it was called (and, when told to, installs a fake etcd or fails).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../support/server.js';

const script = new URL('../../../../scripts/prepare-tests.mjs', import.meta.url).pathname;
const isRoot = process.getuid?.() === 0;

function executable(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
}

function fakePath(options: { kubectlMinor?: number; apt?: 'installs' | 'fails' | 'absent' } = {}): { dir: string; aptLog: string } {
  const dir = tempDir();
  const aptLog = join(dir, 'apt.log');
  const minor = options.kubectlMinor ?? 32;
  executable(join(dir, 'kubectl'), `echo '{"clientVersion":{"major":"1","minor":"${minor}","gitVersion":"v1.${minor}.3"}}'`);
  executable(join(dir, 'openssl'), 'echo "OpenSSL 3.0.0"');
  executable(join(dir, 'promtool'), 'echo "promtool, version 2.42.0"');
  const apt = options.apt ?? 'installs';
  if (apt !== 'absent') {
    // The fake etcd that "installing etcd-server" puts on the PATH; /bin/chmod because PATH holds only the fakes.
    const install = apt === 'installs'
      ? `printf '#!/bin/sh\\necho etcd Version: 3.4.0\\n' > '${join(dir, 'etcd')}'; /bin/chmod 755 '${join(dir, 'etcd')}'`
      : 'echo "E: Unable to fetch some archives" >&2; exit 100';
    executable(join(dir, 'apt-get'), [
      `echo "$*" >> '${aptLog}'`,
      'case "$1" in',
      `  install) ${install} ;;`,
      'esac',
    ].join('\n'));
  }
  return { dir, aptLog };
}

function prepare(dir: string) {
  const r = spawnSync(process.execPath, [script], { env: { PATH: dir }, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function aptCalls(aptLog: string): string[] {
  return existsSync(aptLog) ? readFileSync(aptLog, 'utf8').trim().split('\n') : [];
}

test('a missing etcd is installed with one apt-get update and one apt-get install of its package, one line saying so', () => {
  const { dir, aptLog } = fakePath();
  const r = prepare(dir);
  if (isRoot) {
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(aptCalls(aptLog), ['update -qq', 'install -y -qq etcd-server']);
    assert.deepEqual(r.stdout.trim().split('\n'), ['prepare-tests: installing etcd-server (for etcd: not found)']);
  } else {
    // Without root it never calls the package manager; it says what to run.
    assert.equal(r.code, 1);
    assert.deepEqual(aptCalls(aptLog), []);
    assert.match(r.stderr, /sudo apt-get update && sudo apt-get install -y etcd-server\n/);
  }
});

test('when apt-get fails, it stops with status 1, naming the program and the exact install command', () => {
  const { dir, aptLog } = fakePath({ apt: 'fails' });
  const r = prepare(dir);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no test was run/);
  assert.match(r.stderr, /^ {2}etcd: not found$/m);
  assert.match(r.stderr, /apt-get update && (sudo )?apt-get install -y etcd-server$/m);
  if (isRoot) {
    assert.deepEqual(aptCalls(aptLog), ['update -qq', 'install -y -qq etcd-server']);
    assert.match(r.stderr, /apt-get install exited with status 100:\n {4}E: Unable to fetch some archives/);
  }
  assert.equal(existsSync(join(dir, 'etcd')), false);
});

test('kubectl too far from v1.32 is named with where to get it and never asked of apt; without apt-get nothing is installed', () => {
  const { dir, aptLog } = fakePath({ kubectlMinor: 29, apt: 'absent' });
  const r = prepare(dir);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^ {2}kubectl: found v1\.29\.3, the tests need v1\.31 to v1\.33$/m);
  assert.match(r.stderr, /For kubectl: install kubectl v1\.32 from https:\/\/kubernetes\.io\/docs\/tasks\/tools\//);
  assert.match(r.stderr, /apt-get install -y etcd-server$/m);
  assert.doesNotMatch(r.stderr, /install -y .*kubectl/);
  assert.deepEqual(aptCalls(aptLog), []);
});

test('with everything present it prints nothing and exits 0', () => {
  const { dir, aptLog } = fakePath();
  executable(join(dir, 'etcd'), 'echo etcd Version: 3.4.0');
  const r = prepare(dir);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout + r.stderr, '');
  assert.deepEqual(aptCalls(aptLog), []);
});
