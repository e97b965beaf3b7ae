// The few calls the SQLite store makes of a SQLite binding, over either of
// two: the better-sqlite3 addon, which serves by default, or Node's built-in
// `node:sqlite`. Both run the same SQL, so the file is the same either way,
// and both pass the backend conformance suite. The built-in one would spare
// the addon's compile step, but on Node 24 it reads single keys about a third
// slower and ranges about an eighth slower (bench/sqlite-drivers.ts,
// bench/README.md), so it is used only when asked for; the bench measures it
// again on each new Node line.

import { createRequire } from 'node:module';
import { product } from '../machinery/vocabulary.js';

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

/**
 * The addon, unless `PLAT_SQLITE_DRIVER=node:sqlite` asks for the built-in
 * binding (the bench compares the two this way), which is refused where it is
 * missing or would print an experimental-feature warning.
 */
export function chooseDriver(env: NodeJS.ProcessEnv = process.env): DriverName {
  const asked = env[driverVariable];
  if (asked === undefined || asked === '' || asked === 'better-sqlite3') return 'better-sqlite3';
  if (asked !== 'node:sqlite') throw new Error(`${driverVariable} must be better-sqlite3 or node:sqlite, not ${JSON.stringify(asked)}`);
  if (!builtinAvailable()) throw new Error(`${driverVariable}=node:sqlite needs Node 24.15 or later (this is ${process.version})`);
  return asked;
}

/**
 * The bindings this Node can load: the addon always, the built-in one where
 * it loads without a flag and without a warning, from Node 24.15 on (24.14
 * and Node 22 print an ExperimentalWarning when it loads) and on 26.
 */
export function availableDrivers(): DriverName[] {
  return builtinAvailable() ? ['node:sqlite', 'better-sqlite3'] : ['better-sqlite3'];
}

function builtinAvailable(): boolean {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  return major >= 26 || (major === 24 && minor >= 15);
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

function openAddon(path: string): SqlDatabase {
  const Database = require('better-sqlite3') as typeof import('better-sqlite3');
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
interface BuiltinModule {
  DatabaseSync: new (path: string) => { exec(sql: string): void; prepare(sql: string): BuiltinStatement; close(): void };
}

function openBuiltin(path: string): SqlDatabase {
  const { DatabaseSync } = require('node:sqlite') as BuiltinModule;
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
