// Built code named by its sources: lines read from the source map or the line
// table beside a built file, and stack traces that name the source file and line.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { transformSync } from 'esbuild';
import { encodeLineTable, lineTableOf, mapStackTraces, originalPosition } from '../../../src/machinery/sourcemaps.js';

const dir = mkdtempSync(join(tmpdir(), 'plat-sourcemaps-'));
const source = join(dir, 'thrower.ts');
// Blank lines and type-only lines that the built file drops, so built and source lines differ.
const code = [
  'interface Shape { sides: number }',
  '',
  'type Name = string;',
  '',
  'export function explode(name: Name): Shape {',
  '  const shape: Shape = { sides: name.length };',
  "  if (shape.sides > 0) throw new Error('boom ' + name);",
  '  return shape;',
  '}',
  '',
].join('\n');
const built = transformSync(code, { loader: 'ts', format: 'esm', sourcemap: 'external', sourcefile: 'thrower.ts' });
const builtFile = join(dir, 'thrower.js');
writeFileSync(builtFile, `${built.code}//# sourceMappingURL=thrower.js.map\n`);
writeFileSync(`${builtFile}.map`, built.map);

const keep = Error.prepareStackTrace;
after(() => {
  Error.prepareStackTrace = keep;
  rmSync(dir, { recursive: true, force: true });
});

test('a built line maps to the source line its map names, read from the map or from a line table', () => {
  const builtLines = built.code.split('\n');
  const line = builtLines.findIndex((l) => l.includes('throw new Error')) + 1;
  assert.notEqual(line, 7, 'the built line differs from the source line');
  assert.deepEqual(originalPosition(builtFile, line), { file: source, line: 7 });
  assert.deepEqual(originalPosition(pathToFileURL(builtFile).href, line), { file: source, line: 7 });
  assert.deepEqual(originalPosition(builtFile, line + 1), { file: source, line: 8 });
  assert.equal(originalPosition(builtFile, 999), undefined, 'a line past the map');
  assert.equal(originalPosition(join(dir, 'nomap.js'), 1), undefined, 'a file without a map');
  assert.equal(originalPosition('node:internal/x', 1), undefined);

  // The same answers from a line table written beside a built file that has no map (as the bundle's chunks have both).
  const copy = join(dir, 'tabled', 'thrower.js');
  mkdirSync(dirname(copy));
  writeFileSync(copy, built.code);
  writeFileSync(`${copy}.lines`, encodeLineTable(lineTableOf(built.map, `${builtFile}.map`), `${copy}.lines`));
  assert.deepEqual(originalPosition(copy, line), { file: source, line: 7 });
  assert.deepEqual(originalPosition(copy, 1), { file: source, line: 5 }, 'the types before it are gone from the built file');
});

test('with stack traces mapped, a thrown error names the source file and line', async () => {
  const { explode } = await import(pathToFileURL(builtFile).href) as { explode(name: string): unknown };
  mapStackTraces();
  let stack = '';
  try {
    explode('x');
  } catch (e) {
    stack = (e as Error).stack ?? '';
  }
  assert.match(stack, /^Error: boom x\n/);
  assert.ok(stack.includes(`at explode (${source}:7)`), stack);
  assert.ok(!stack.includes('thrower.js'), stack);
});
