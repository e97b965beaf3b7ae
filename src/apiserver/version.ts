// This package's version, for /version and --version; its own module so that
// --version reads it without loading the server.

import { readFile } from 'node:fs/promises';

/** This package's version (package.json). */
export async function packageVersion(): Promise<string> {
  try {
    const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8'));
    return String(pkg.version);
  } catch {
    return '0.0.0';
  }
}
