// The few calls the SQLite store makes of a SQLite binding, over either of
// two: the better-sqlite3 addon, which serves by default, or Node's built-in
// `node:sqlite`. Both run the same SQL, so the file is the same either way,
// and both pass the backend conformance suite. The built-in one spares the
// addon's compile step, but on Node 24 it reads single keys about a third
// slower and ranges about an eighth slower (bench/sqlite-drivers.ts), so it
// serves when asked for, or when the addon, an optional dependency, is
// missing or fails to load (no prebuilt binary and no C++ toolchain).

import { createRequire } from 'node:module';
import { product } from '../../machinery/vocabulary.js';

/** Positional parameters (a tuple) or named ones (one object). */
type Args<P> = P extends readonly unknown[] ? P : [P];

export interface SqlStatement<P = unknown[], R = unknown> {
  get(...params: Args<P>): R | undefined;
  all(...params: Args<P>): R[];
  run(...params: Args<P>): void;
}

export interface SqlDatabase {
  readonly driver: DriverName;
  exec(sql: string): void;
  prepare<P = unknown[], R = unknown>(sql: string): SqlStatement<P, R>;
  /** Runs `body` in one transaction: committed when it returns, rolled back when it throws. */
  transaction(body: () => void): void;
  close(): void;
}

export type DriverName = 'node:sqlite' | 'better-sqlite3';

const require = createRequire(import.meta.url);

/** The environment variable that picks the binding: `PLAT_SQLITE_DRIVER`, from the product's prefix. */
export const driverVariable = `${product.envPrefix}_SQLITE_DRIVER`;

/** Loads each binding, throwing why it cannot (replaced in tests to stand for a machine without the addon). */
export interface DriverLoaders {
  addon(): AddonModule;
  builtin(): BuiltinModule;
}

export const defaultLoaders: DriverLoaders = { addon: loadAddon, builtin: loadBuiltin };

/** The binding to use, and the line to say at start when it is the built-in one because the addon could not be loaded. */
export interface DriverChoice {
  driver: DriverName;
  notice?: string;
}

/**
 * `PLAT_SQLITE_DRIVER` when set (node:sqlite is refused where this Node has
 * none); otherwise the addon where it loads, else node:sqlite where this Node
 * has it, else an error that names the ways out.
 */
export function selectDriver(env: NodeJS.ProcessEnv = process.env, loaders: DriverLoaders = defaultLoaders): DriverChoice {
  const asked = env[driverVariable];
  if (asked === 'better-sqlite3') return { driver: asked };
  if (asked === 'node:sqlite') {
    const missing = failureOf(loaders.builtin);
    if (missing !== undefined) throw new Error(`${driverVariable}=node:sqlite needs Node 22.13 or later (this is ${process.version}: ${missing})`);
    return { driver: asked };
  }
  if (asked !== undefined && asked !== '') throw new Error(`${driverVariable} must be better-sqlite3 or node:sqlite, not ${JSON.stringify(asked)}`);
  const addonFailure = failureOf(loaders.addon);
  if (addonFailure === undefined) return { driver: 'better-sqlite3' };
  const builtinFailure = failureOf(loaders.builtin);
  if (builtinFailure === undefined) {
    return { driver: 'node:sqlite', notice: `SQLite through Node's built-in node:sqlite: the better-sqlite3 addon could not be loaded (${addonFailure})` };
  }
  throw new Error(`the SQLite store needs the better-sqlite3 addon, which could not be loaded (${addonFailure}), ` +
    `or Node's built-in node:sqlite, which Node ${process.version} does not have. Either install the addon ` +
    '(npm install better-sqlite3; it compiles where no prebuilt binary fits, which needs python3, make and a C++ compiler), ' +
    'or run on Node 22.13 or later, or choose another store with --storage-backend');
}

/** The binding to use (see selectDriver). */
export function chooseDriver(env: NodeJS.ProcessEnv = process.env, loaders: DriverLoaders = defaultLoaders): DriverName {
  return selectDriver(env, loaders).driver;
}

/** The bindings this Node can load, the built-in one first (tests and the bench run each). */
export function availableDrivers(loaders: DriverLoaders = defaultLoaders): DriverName[] {
  const drivers: DriverName[] = [];
  if (failureOf(loaders.builtin) === undefined) drivers.push('node:sqlite');
  if (failureOf(loaders.addon) === undefined) drivers.push('better-sqlite3');
  return drivers;
}

/** Why `load` fails, in one line, or undefined when it works. */
function failureOf(load: () => unknown): string | undefined {
  try {
    load();
    return undefined;
  } catch (err) {
    // On one line: a module's stack of requirers left out, an ABI mismatch's two lines joined.
    const message = (err instanceof Error ? err.message : String(err)).split(/\n\s*Require stack:/)[0]!.replace(/\s+/g, ' ').trim();
    return message.length > 300 ? `${message.slice(0, 300)}…` : message;
  }
}

/** SQLITE_BUSY as either binding reports it: another connection holds the lock. */
export function isBusy(err: unknown): boolean {
  const e = err as { code?: string; errcode?: number };
  // node:sqlite gives the numeric result code (extended codes keep the primary one in the low byte).
  return e?.code === 'SQLITE_BUSY' || (typeof e?.errcode === 'number' && (e.errcode & 0xff) === 5);
}

export function openDatabase(path: string, driver: DriverName = chooseDriver()): SqlDatabase {
  return driver === 'node:sqlite' ? openBuiltin(path) : openAddon(path);
}

/** The transaction calls as prepared statements, shared by both bindings. */
function transactions(prepare: (sql: string) => { run(): unknown }): (body: () => void) => void {
  const begin = prepare('BEGIN');
  const commit = prepare('COMMIT');
  const rollback = prepare('ROLLBACK');
  return (body) => {
    begin.run();
    try {
      body();
      commit.run();
    } catch (err) {
      try {
        rollback.run();
      } catch {
        // Some failures (a full disk, I/O errors) end the transaction themselves; the first error is the one to report.
      }
      throw err;
    }
  };
}

/**
 * From Node 24 on, every native object the addon wraps (a database, a
 * statement) registers an environment cleanup hook and removes it in its
 * destructor, which needs a current JavaScript context. When the garbage
 * collector frees such an object it runs the destructor with none, and Node
 * aborts the process (`RemoveEnvironmentCleanupHook`: `(env) != nullptr`),
 * at any moment after a store was closed or a statement dropped. So on those
 * lines they are never left to the collector: they stay referenced here and
 * are freed by the cleanup hooks at exit, where a context exists. Each store
 * holds a dozen statements for its life anyway; after close their SQLite
 * handles are finalized and only the small wrappers remain.
 */
const keptForExit: object[] = [];
const collectorUnsafe = Number(process.versions.node.split('.')[0]) >= 24;
function keep<T extends object>(wrapper: T): T {
  if (collectorUnsafe) keptForExit.push(wrapper);
  return wrapper;
}

export type AddonModule = typeof import('better-sqlite3');
let addon: AddonModule | undefined;

/** The addon, whose native part loads with its first database: one in memory, opened and closed once, proves it loads. */
function loadAddon(): AddonModule {
  if (addon) return addon;
  const Database = require('better-sqlite3') as AddonModule;
  keep(new Database(':memory:')).close();
  return addon = Database;
}

function openAddon(path: string): SqlDatabase {
  const Database = loadAddon();
  const db = keep(new Database(path));
  const transaction = transactions((sql) => keep(db.prepare(sql)));
  return {
    driver: 'better-sqlite3',
    exec: (sql) => void db.exec(sql),
    // The addon's statements already have this shape: handed out as they are, nothing in between on the hot path.
    prepare: <P, R>(sql: string) => keep(db.prepare(sql)) as unknown as SqlStatement<P, R>,
    transaction,
    close: () => void db.close(),
  };
}

/** What this file uses of node:sqlite (the project's @types/node is the oldest supported line's, which has no node:sqlite). */
interface BuiltinStatement {
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  run(...params: unknown[]): unknown;
}
export interface BuiltinModule {
  DatabaseSync: new (path: string) => { exec(sql: string): void; prepare(sql: string): BuiltinStatement; close(): void };
}

let builtin: BuiltinModule | undefined;

/**
 * node:sqlite, without its ExperimentalWarning (printed on Node 22 and
 * before 24.15): the server says in its own log which binding serves.
 * On Node 20, and on 22 before 22.13 without a flag, there is none.
 */
function loadBuiltin(): BuiltinModule {
  if (builtin) return builtin;
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/SQLite is an experimental feature/.test(text)) return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return builtin = require('node:sqlite') as BuiltinModule;
  } finally {
    process.emitWarning = emitWarning;
  }
}

function openBuiltin(path: string): SqlDatabase {
  const { DatabaseSync } = loadBuiltin();
  const db = new DatabaseSync(path);
  const transaction = transactions((sql) => db.prepare(sql));
  return {
    driver: 'node:sqlite',
    exec: (sql) => db.exec(sql),
    prepare<P, R>(sql: string): SqlStatement<P, R> {
      const statement = db.prepare(sql);
      return {
        get: (...params) => asBuffers(statement.get(...params)) as R | undefined,
        all: (...params) => statement.all(...params).map(asBuffers) as R[],
        run: (...params) => void statement.run(...params),
      };
    },
    transaction,
    close: () => db.close(),
  };
}

/** node:sqlite reads BLOBs as plain Uint8Arrays; the store hands out Buffers (a view, no copy). */
function asBuffers<T>(row: T): T {
  if (row === undefined || row === null) return row;
  const record = row as Record<string, unknown>;
  for (const column in record) {
    const value = record[column];
    if (value instanceof Uint8Array && !Buffer.isBuffer(value)) {
      record[column] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  }
  return row;
}
