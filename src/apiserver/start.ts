// startServer: a server built from its parts (assemble.ts), with what a
// start owes the folder it was given: a failed start closes what it opened,
// last made first, and leaves the data dir as it found it.

import { StorageError } from '../storage/index.js';
import { createLogger } from '../server/logging.js';
import { defaultServerOptions, type ServerOptions } from '../server/options.js';
import { Closers } from './closers.js';
import { dataDirState, undoDataDir } from './datadir.js';
import { assemble, type RunningServer } from './assemble.js';

export { packageVersion } from './version.js';
export type { ServerOptions } from '../server/options.js';
export type { RunningServer } from './assemble.js';

export async function startServer(overrides: Partial<ServerOptions> = {}): Promise<RunningServer> {
  const options: ServerOptions = { ...defaultServerOptions, ...overrides };
  const log = createLogger({ level: options.logLevel, format: options.loggingFormat, destination: options.logDestination });
  const closers = new Closers();
  const dataDirBefore = await dataDirState(options.dataDir);
  try {
    return await assemble(options, log, closers);
  } catch (e) {
    for (const err of await closers.closeAll()) log.debug({ err }, 'closing after a failed start');
    // A store another process holds means the folder is not this start's to tidy.
    if (!(e instanceof StorageError && e.code === 'Unavailable')) await undoDataDir(options.dataDir, dataDirBefore);
    throw e;
  }
}
