// This package's version, for /version and --version; its own module so that
// --version reads it without loading the server.

import { readFile } from 'node:fs/promises';
import { product } from '../machinery/vocabulary.js';

/**
 * This package's version: the nearest package.json of ours above this
 * module, which is three folders up from dist/src/apiserver/ and two from
 * the bundle in dist/bin/.
 */
export async function packageVersion(): Promise<string> {
  for (const up of ['../../', '../../../']) {
    try {
      const pkg = JSON.parse(await readFile(new URL(`${up}package.json`, import.meta.url), 'utf8'));
      if (pkg?.name === `${product.name}-apiserver`) return String(pkg.version);
    } catch { /* not here */ }
  }
  return '0.0.0';
}
