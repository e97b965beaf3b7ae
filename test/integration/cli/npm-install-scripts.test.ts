// npm 11 lists dependencies whose install scripts the project has not
// reviewed (allowScripts in package.json) at the end of every install; a
// fresh `npm install` of this project lists none.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

test('every dependency with an install script is covered by allowScripts', (t) => {
  const r = spawnSync('npm', ['install-scripts', 'ls'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
  if (/Unknown command/.test(r.stderr + r.stdout)) {
    t.skip(`npm ${spawnSync('npm', ['--version'], { encoding: 'utf8' }).stdout.trim()} has no allowScripts (npm 11.16 and later)`);
    return;
  }
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^No packages with unreviewed install scripts\.$/m, r.stdout);
});
