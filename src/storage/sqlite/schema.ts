// The revision log on disk, laid out the way kine does it: one row per write,
// id = the write's revision. A tombstone row (deleted = 1) carries no value;
// its prev_revision row holds the value that was deleted.

import type { SqlDatabase } from './driver.js';

export const schemaVersion = 1;

export const schema = `
CREATE TABLE IF NOT EXISTS kv (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  created INTEGER NOT NULL,
  deleted INTEGER NOT NULL,
  create_revision INTEGER NOT NULL,
  prev_revision INTEGER NOT NULL,
  value BLOB NOT NULL
);
-- Covers "latest row of a key at a revision" and the range scans' filters.
CREATE INDEX IF NOT EXISTS kv_name_id ON kv (name, id, deleted);
CREATE TABLE IF NOT EXISTS meta (
  name TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
`;

/** Names of the meta rows. */
export const metaKeys = {
  schema: 'schema_version',
  /** Reads and watches below this revision are refused. */
  compacted: 'compacted_revision',
  /** Rows at or below this revision have been swept by compaction. */
  swept: 'swept_revision',
} as const;

export interface VersionRow {
  id: number;
  create_revision: number;
  deleted: number;
  value: Buffer;
}

export interface RangeRow {
  name: string;
  id: number;
  create_revision: number;
  value: Buffer;
}

export interface HistoryRow {
  id: number;
  name: string;
  deleted: number;
  create_revision: number;
  value: Buffer;
  prev_id: number | null;
  prev_create_revision: number | null;
  prev_value: Buffer | null;
}

// Range bounds: keys lie in [lower, upper). With no upper bound (empty
// prefix) an empty BLOB is bound instead, since every TEXT sorts below every
// BLOB in SQLite; this keeps one statement per query.
const latestAtRevision = `k.id = (SELECT MAX(x.id) FROM kv x WHERE x.name = k.name AND x.id <= @revision)`;

export function prepareStatements(db: SqlDatabase) {
  return {
    latest: db.prepare<[string], VersionRow>(
      'SELECT id, create_revision, deleted, value FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1'),
    atRevision: db.prepare<[string, number], VersionRow>(
      'SELECT id, create_revision, deleted, value FROM kv WHERE name = ? AND id <= ? ORDER BY id DESC LIMIT 1'),
    insert: db.prepare<[number, string, number, number, number, number, Buffer]>(
      `INSERT INTO kv (id, name, created, deleted, create_revision, prev_revision, value)
       VALUES (?, ?, ?, ?, ?, ?, ?)`),
    rangePage: db.prepare<{ lower: string; upper: string | Buffer; revision: number; limit: number }, RangeRow>(
      `SELECT k.name, k.id, k.create_revision, k.value FROM kv k
       WHERE k.name >= @lower AND k.name < @upper AND k.id <= @revision AND k.deleted = 0
         AND ${latestAtRevision}
       ORDER BY k.name LIMIT @limit`),
    // The newest row of each key, read from the covering index alone
    // (SQLite takes bare columns from the row that gives the MAX).
    rangeCount: db.prepare<{ lower: string; upper: string | Buffer; revision: number }, { n: number }>(
      `SELECT COUNT(*) AS n FROM (
         SELECT MAX(id) AS id, deleted FROM kv
         WHERE name >= @lower AND name < @upper AND id <= @revision
         GROUP BY name HAVING deleted = 0)`),
    history: db.prepare<{ lower: string; upper: string | Buffer; after: number; upTo: number }, HistoryRow>(
      `SELECT k.id, k.name, k.deleted, k.create_revision, k.value,
              p.id AS prev_id, p.create_revision AS prev_create_revision, p.value AS prev_value
       FROM kv k LEFT JOIN kv p ON p.id = k.prev_revision
       WHERE k.id > @after AND k.id <= @upTo AND k.name >= @lower AND k.name < @upper
       ORDER BY k.id`),
    lastRevision: db.prepare<[], { rev: number }>(
      `SELECT MAX(IFNULL((SELECT seq FROM sqlite_sequence WHERE name = 'kv'), 0),
                  IFNULL((SELECT MAX(id) FROM kv), 0)) AS rev`),
    getMeta: db.prepare<[string], { value: number }>('SELECT value FROM meta WHERE name = ?'),
    setMeta: db.prepare<[string, number]>(
      'INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value'),
    // Compaction of the rows in (after, upTo]: each row supersedes its
    // predecessor, and tombstones are not needed to read at or above upTo.
    sweepSuperseded: db.prepare<{ after: number; upTo: number }>(
      `DELETE FROM kv WHERE id IN (
         SELECT prev_revision FROM kv WHERE id > @after AND id <= @upTo AND prev_revision > 0)`),
    sweepTombstones: db.prepare<{ after: number; upTo: number }>(
      'DELETE FROM kv WHERE id > @after AND id <= @upTo AND deleted = 1'),
    ping: db.prepare<[], { ok: number }>('SELECT 1 AS ok'),
  };
}

export type Statements = ReturnType<typeof prepareStatements>;
