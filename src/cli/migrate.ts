// `plat-apiserver migrate --from <store> --to <store>`: copies every object
// of one store into another, empty one (a data folder into a cluster store,
// for instance), keeping names, uids and creation times. The server must
// not be running on the source meanwhile: the data folder's store is locked.

import { commandName, Flag, FlagError, parseFlags, serverFlags } from './flags.js';
import { stringType, type FlagType } from './flagtypes.js';
import { copyStore, openBackend, parseStoreAddress, type StorageConfig } from '../storage/index.js';
import type { ServerOptions } from '../server/options.js';

/** Server flags that describe how to reach a cluster store; they apply to whichever end is one. */
const sharedFlags = new Set(['etcd-prefix', 'etcd-cafile', 'etcd-certfile', 'etcd-keyfile', 'request-timeout', 'help']);
const usage = `${commandName} migrate --from sqlite:<data dir> --to etcd3:<url>[,<url>...] [flags]`;

export interface MigrateCommand {
  from: string;
  to: string;
  options: ServerOptions;
}

export function parseMigrateFlags(argv: readonly string[]): MigrateCommand | { help: string } {
  const ends: { from?: string; to?: string } = {};
  const end = (name: 'from' | 'to', help: string): Flag => ({
    name, help, type: stringType as FlagType<unknown>, defaultText: () => undefined,
    apply: (_options, value) => { ends[name] = value as string; },
  });
  const flags = [
    end('from', 'The store to copy: sqlite:<data dir> or etcd3:<url>[,<url>...].'),
    end('to', 'The empty store to copy into, in the same form.'),
    ...serverFlags.filter((flag) => sharedFlags.has(flag.name)),
  ];
  const parsed = parseFlags(argv, flags, usage);
  if ('help' in parsed) return parsed;
  if (!('options' in parsed)) throw new FlagError('migrate takes no --version');
  if (ends.from === undefined || ends.to === undefined) throw new FlagError('migrate needs both --from and --to');
  return { from: ends.from, to: ends.to, options: parsed.options };
}

function storeConfig(address: string, flag: string, options: ServerOptions, mustExist: boolean): StorageConfig {
  let config: StorageConfig;
  try {
    config = parseStoreAddress(address, options.requestTimeoutMs);
  } catch (e) {
    throw new FlagError(`invalid argument ${JSON.stringify(address)} for "${flag}" flag: ${(e as Error).message}`, flag, address);
  }
  return {
    ...config, mustExist,
    prefix: options.etcdPrefix, caFile: options.etcdCaFile, certFile: options.etcdCertFile, keyFile: options.etcdKeyFile,
  };
}

/** Runs the copy; resolves with the line to print. */
export async function runMigrate(command: MigrateCommand, progress?: (line: string) => void): Promise<string> {
  const fromConfig = storeConfig(command.from, '--from', command.options, true);
  const toConfig = storeConfig(command.to, '--to', command.options, false);
  const source = openBackend(fromConfig);
  try {
    const target = openBackend(toConfig);
    try {
      const result = await copyStore(source, target, {
        onProgress: (copied, total) => progress?.(`copied ${copied} of ${total}`),
      });
      return `copied ${result.copied} keys from ${command.from} to ${command.to} (source revision ${result.revision})`;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}
