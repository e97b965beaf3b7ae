// The flag reference page (docs/flags.md) is what scripts/flags-doc.mjs
// writes from the flag table, and it lists every flag `--help` prints, with
// the same meaning and default.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { flagReference, serverFlags } from '../../../src/cli/flags.js';

const root = new URL('../../../../', import.meta.url);

test('docs/flags.md is up to date with the flag table (node scripts/flags-doc.mjs writes it)', () => {
  assert.equal(readFileSync(new URL('docs/flags.md', root), 'utf8'), flagReference());
});

test('docs/flags.md and --help list the same flags with the same meaning', () => {
  const help = spawnSync(process.execPath, [new URL('dist/bin/plat-apiserver.js', root).pathname, '--help'], { encoding: 'utf8' }).stdout;
  const page = readFileSync(new URL('docs/flags.md', root), 'utf8');
  const named = (text: string) => new Set([...text.matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1]));
  const rows = page.split('\n').filter((l) => l.startsWith('| `-'));
  const helpRows = help.split('\n').filter((l) => /^\s+(-\w, )?\s*--/.test(l));
  assert.equal(rows.length, helpRows.length);
  assert.equal(rows.length, serverFlags.length);
  for (const flag of serverFlags) {
    const row = rows.find((r) => r.includes(`\`--${flag.name}\``));
    const helpRow = helpRows.find((r) => new RegExp(`--${flag.name}( |$)`).test(r));
    assert.ok(row && helpRow, flag.name);
    assert.ok(row.includes(flag.help.replace(/\|/g, '\\|')), `${flag.name}: ${row}`);
    assert.ok(helpRow.includes(flag.help), `${flag.name}: ${helpRow}`);
    const shown = /\(default (.*)\)$/.exec(helpRow)?.[1];
    if (shown !== undefined) assert.ok(row.includes(`\`${shown.replace(/\|/g, '\\|')}\``), `${flag.name} default ${shown}: ${row}`);
  }
  for (const name of named(rows.join('\n'))) assert.ok(named(help).has(name), name);
});
