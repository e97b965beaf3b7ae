// A start that fails leaves the data dir as it found it: one it made is
// removed (with the folders of its path it made), one that was empty is
// emptied, one in use keeps everything (its store and keys are someone's).

import { readdir, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** What the data dir held before this start: absent (with the first folder of its path this start makes), empty, or in use. */
export type DataDirState = { kind: 'absent'; topmost: string } | { kind: 'empty' } | { kind: 'used' };

export async function dataDirState(dataDir: string): Promise<DataDirState> {
  let topmost = resolve(dataDir);
  try {
    return (await readdir(topmost)).length === 0 ? { kind: 'empty' } : { kind: 'used' };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return { kind: 'used' };
  }
  // mkdir -p makes every missing folder of the path: the outermost of them goes again.
  for (let parent = dirname(topmost); parent !== topmost && !existsSync(parent); parent = dirname(parent)) topmost = parent;
  return { kind: 'absent', topmost };
}

/** After a failed start: puts the data dir back as `before` found it. */
export async function undoDataDir(dataDir: string, before: DataDirState): Promise<void> {
  if (before.kind === 'used') return;
  if (before.kind === 'absent') {
    await rm(before.topmost, { recursive: true, force: true });
    return;
  }
  for (const entry of await readdir(dataDir).catch(() => [])) await rm(join(dataDir, entry), { recursive: true, force: true });
}
