// The worker thread of sqlite-preload.ts: reads every live key of a store
// file at its latest revision, in pages, on a read-only connection of its
// own, and posts each page to the thread that started it with the values'
// memory transferred (not copied). Asked to stop, it ends after the page it
// is reading. It closes the file before it says it is done, so the server can
// then open it with its exclusive lock.

import { parentPort, workerData } from 'node:worker_threads';
import { ownCopy } from './bytes.js';
import { openDatabase } from './sqlite-driver.js';
import { prepareStatements } from './sqlite-schema.js';
import type { PreloadMessage } from './sqlite-preload.js';

/** Rows per page: one message each. */
const pageRows = 1_000;
/** How much of the file the read may map (as the store's own long reads do). */
const mappedReadBytes = 2 ** 34;

function post(message: PreloadMessage, transfer: ArrayBuffer[] = []): void {
  parentPort!.postMessage(message, transfer);
}

/** workerData: the file, and a flag the server raises when it wants the file now (see StorePreload.snapshot). */
interface PreloadTask {
  path: string;
  stop: Int32Array;
}

function preload({ path, stop }: PreloadTask): void {
  const db = openDatabase(path, undefined, { readOnly: true });
  try {
    db.exec(`PRAGMA mmap_size = ${mappedReadBytes}`);
    const sql = prepareStatements(db);
    // One read transaction: every page at the same revision.
    db.exec('BEGIN');
    const revision = sql.lastRevision.get()!.rev;
    // Every TEXT sorts below a BLOB: the empty BLOB bounds "all keys".
    const upper = Buffer.alloc(0);
    let lower = '';
    let complete = false;
    while (Atomics.load(stop, 0) === 0) {
      const rows = sql.rangePage.all({ lower, upper, revision, limit: pageRows });
      if (rows.length === 0) {
        complete = true;
        break;
      }
      const keys: string[] = [];
      const modRevisions = new Float64Array(rows.length);
      const createRevisions = new Float64Array(rows.length);
      const values: ArrayBuffer[] = [];
      rows.forEach((row, i) => {
        keys.push(row.name);
        modRevisions[i] = row.id;
        createRevisions[i] = row.create_revision;
        // Each value its own allocation (storage/bytes.ts), handed over whole.
        const v = row.value;
        const own = v.byteOffset === 0 && v.byteLength === v.buffer.byteLength ? v : ownCopy(v);
        values.push(own.buffer as ArrayBuffer);
      });
      post({ page: { keys, modRevisions, createRevisions, values } }, [...values, modRevisions.buffer, createRevisions.buffer]);
      if (rows.length < pageRows) {
        complete = true;
        break;
      }
      lower = `${rows[rows.length - 1]!.name}\0`;
    }
    db.exec('COMMIT');
    db.close();
    post({ done: { revision, complete } });
  } catch (err) {
    db.close();
    throw err;
  }
}

try {
  preload(workerData as PreloadTask);
} catch (err) {
  post({ failed: err instanceof Error ? err.message : String(err) });
}
