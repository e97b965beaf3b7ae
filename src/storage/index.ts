// Picks and opens a storage backend; the rest of the server sees only Backend.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Backend } from './backend.js';
import { EtcdBackend } from './etcd/store.js';
import { MemoryBackend } from './memory/store.js';
import { openSqliteBackend } from './sqlite/store.js';
import { selectDriver } from './sqlite/driver.js';
import type { BackendKind } from './kinds.js';

export { backendKinds, defaultBackendKind, isSharedStore, type BackendKind } from './kinds.js';

export interface StorageConfig {
  kind: BackendKind;
  /** The file-backed store lives at `${dataDir}/store.db`. */
  dataDir: string;
  /** Refuse to create the file-backed store: it must be there already. */
  mustExist?: boolean;
  /** Cluster store: member client URLs, key prefix, TLS files and the deadline of each call. */
  servers?: string[];
  prefix?: string;
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  requestTimeoutMs?: number;
  /** Events expire this long after their last write (cluster store only, as upstream). */
  eventTtlSeconds?: number;
  /** Most bytes a stored value may have (default: etcd's 1.5 MiB); a larger write fails with 'TooLarge'. */
  maxValueBytes?: number;
  /** Most bytes the recent events a file or cluster store keeps in memory for its watchers may hold. */
  watchHubBytes?: number;
  /** Told a line to say at start: which SQLite binding serves when it is not the usual one. */
  notice?: (line: string) => void;
}

/** Where objects' keys begin in every store. */
const registryRoot = '/registry';

export function openBackend(config: StorageConfig): Backend {
  switch (config.kind) {
    case 'memory':
      return new MemoryBackend({ maxValueBytes: config.maxValueBytes });
    case 'sqlite': {
      const path = join(config.dataDir, 'store.db');
      if (config.mustExist && !existsSync(path)) throw new Error(`${config.dataDir} holds no store (no ${path})`);
      const { driver, notice } = selectDriver();
      if (notice) config.notice?.(notice);
      return openSqliteBackend(path, driver, { maxValueBytes: config.maxValueBytes, watchHubBytes: config.watchHubBytes });
    }
    case 'etcd3':
      if ((config.certFile === undefined) !== (config.keyFile === undefined)) {
        throw new Error('a client certificate for the cluster store needs its key, and the key its certificate');
      }
      return new EtcdBackend({
        endpoints: config.servers ?? [],
        keyPrefix: keyPrefixFor(config.prefix ?? registryRoot),
        tls: {
          ca: config.caFile ? readFileSync(config.caFile) : undefined,
          cert: config.certFile ? readFileSync(config.certFile) : undefined,
          key: config.keyFile ? readFileSync(config.keyFile) : undefined,
        },
        requestTimeoutMs: config.requestTimeoutMs ?? 60_000,
        expiring: config.eventTtlSeconds ? [{ prefix: `${registryRoot}/events/`, ttlSeconds: config.eventTtlSeconds }] : [],
        maxValueBytes: config.maxValueBytes,
        watchHubBytes: config.watchHubBytes,
      });
    default:
      throw new Error(`unknown storage backend ${String(config.kind)}`);
  }
}

/**
 * Keys already begin with /registry, so the default prefix adds nothing and
 * keys read the same in every store; "/<name>/registry" puts them under
 * /<name>; any other prefix goes in front of /registry.
 */
export function keyPrefixFor(prefix: string): string {
  const trimmed = prefix.replace(/\/+$/, '');
  return trimmed.endsWith(registryRoot) ? trimmed.slice(0, -registryRoot.length) : trimmed;
}

/** Opens a store named as `sqlite:<data dir>`, `memory:` or `etcd3:<url>[,<url>...]` (the migrate command's form). */
export function parseStoreAddress(address: string, requestTimeoutMs = 60_000): StorageConfig {
  const colon = address.indexOf(':');
  const kind = colon < 0 ? address : address.slice(0, colon);
  const rest = colon < 0 ? '' : address.slice(colon + 1);
  switch (kind) {
    case 'sqlite':
      if (rest === '') throw new Error('sqlite: needs a data folder, as sqlite:<dir>');
      return { kind, dataDir: rest };
    case 'etcd3':
      if (rest === '') throw new Error('etcd3: needs member URLs, as etcd3:<url>[,<url>...]');
      return { kind, dataDir: '', servers: rest.split(','), requestTimeoutMs };
    default:
      throw new Error(`unknown store ${JSON.stringify(kind)}: expected sqlite:<dir> or etcd3:<urls>`);
  }
}

export { startCompactor } from './compactor.js';
export type { CompactorOptions } from './compactor.js';
export { MemoryBackend } from './memory/store.js';
export { SqliteBackend, openSqliteBackend } from './sqlite/store.js';
export { EtcdBackend } from './etcd/store.js';
export { copyStore } from './migrate.js';
export { timedBackend } from './timed.js';
export type { StorageObserver } from './timed.js';
export type { CopyResult } from './migrate.js';
export * from './backend.js';
