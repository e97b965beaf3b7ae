// Small file helpers for key material: private files, atomic replacement.

import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, basename, join } from 'node:path';

export const privateFileMode = 0o600;
export const publicFileMode = 0o644;
export const privateDirMode = 0o700;

/** Creates `dir` (and parents) with mode 0700; an existing folder keeps its mode. */
export async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: privateDirMode });
}

/** The file's text, or undefined when it does not exist. */
export async function readTextIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Writes `text` to a temporary file beside `path` with `mode`, flushes it and
 * renames it into place, so readers see the old file or the whole new one,
 * never half of it (a crash mid-write must not leave a truncated key).
 */
export async function writeFileAtomic(path: string, text: string, mode: number): Promise<void> {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temporary, 'wx', mode);
  try {
    await handle.writeFile(text, 'utf8');
    // open() applies the umask; set the mode explicitly so 0600 is exact.
    await handle.chmod(mode);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await rm(temporary, { force: true });
    throw error;
  }
  await handle.close();
  try {
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
