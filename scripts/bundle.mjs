// The CLI as users run it: one ESM bundle of src/cli/main.ts and all it
// imports, packages included, written to dist/bin/ (`bin`, `npm start`, the
// tests and the bench all spawn dist/bin/plat-apiserver.js). Loading a few
// files instead of ~1,000 modules is most of what a start spends before it
// does any work. Code behind a dynamic import (the server itself, migrate,
// CEL, the X.509 library) stays in chunks of its own, read only when first
// imported. Built from the TypeScript sources in well under a second; only
// the line tables written beside the chunks use tsc's output (run tsc first).
//
//   node scripts/bundle.mjs [--metafile FILE]
import { build } from 'esbuild';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
export const bundleDir = `${root}dist/bin`;

/**
 * Left to Node's own loader: native addons and the packages that load them.
 * pino is bundled: its transports (a worker file found beside its own
 * module) are the one part that would not work from the bundle, and the
 * server writes its lines itself, without a transport.
 */
const external = ['better-sqlite3', '@bufbuild/re2', 're2js'];

export async function bundle({ metafile } = {}) {
  rmSync(bundleDir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: {
      'plat-apiserver': 'src/cli/main.ts',
      // A worker thread's file, found beside the code that starts it (pki/issuer-thread.ts).
      'issue-worker': 'src/pki/issue-worker.ts',
    },
    outdir: bundleDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external,
    // A package's ES build where it has one: a CommonJS build imported by import() gives only a default export here, where Node would find its named exports.
    mainFields: ['module', 'main'],
    // Stack traces name our sources when source maps are on (cli/main.ts turns them on).
    sourcemap: 'linked',
    sourcesContent: false,
    // Packages written as CommonJS require() Node's built-ins, which an ES module has no require() for.
    banner: { js: "import { createRequire as __platRequire } from 'node:module'; const require = __platRequire(import.meta.url);" },
    metafile: Boolean(metafile),
    logLevel: 'warning',
  });
  if (metafile) writeFileSync(metafile, JSON.stringify(result.metafile));
  asciiOnly();
  await writeLineTables();
  return result;
}

/**
 * esbuild writes strings and names in ASCII (its `charset` default) but
 * keeps some comments and regular expression literals as written, and one
 * character outside ASCII in a chunk (a µ, an arrow) makes Node decode the
 * whole file the slow way and V8 hold and scan it as a two-byte string. In
 * a comment an escape means the same to a reader, and in a regular
 * expression `\uXXXX` matches the same character (a pair of them, with or
 * without the u flag, the same character beyond the BMP). Lines stay where
 * the line tables say.
 */
function asciiOnly() {
  for (const name of readdirSync(bundleDir)) {
    if (!name.endsWith('.js')) continue;
    const file = join(bundleDir, name);
    const text = readFileSync(file, 'utf8');
    const ascii = text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    if (ascii !== text) writeFileSync(file, ascii);
  }
}

/**
 * Beside each chunk, the line table that names a frame's source file and
 * line without decoding the chunk's source map at run time
 * (src/machinery/sourcemaps.ts, built by tsc before this runs).
 */
async function writeLineTables() {
  const { lineTableOf, encodeLineTable } = await import(new URL('../dist/src/machinery/sourcemaps.js', import.meta.url).href);
  for (const name of readdirSync(bundleDir)) {
    if (!name.endsWith('.js.map')) continue;
    const mapFile = join(bundleDir, name);
    const tableFile = mapFile.replace(/\.map$/, '.lines');
    writeFileSync(tableFile, encodeLineTable(lineTableOf(readFileSync(mapFile, 'utf8'), mapFile), tableFile));
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--metafile');
  await bundle({ metafile: i >= 0 ? process.argv[i + 1] : undefined });
}
