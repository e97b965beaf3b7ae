// Continue tokens: opaque base64url of a small JSON record naming the
// snapshot revision and the key to resume from.

import { errors } from '../machinery/errors.js';

interface ContinueRecord {
  v: 1;
  /** Revision of the snapshot the first page was read at; 0: the latest (after an expired token). */
  rv: number;
  /** Key to resume from (inclusive). */
  start: string;
}

export function encodeContinue(revision: number, startKey: string): string {
  const record: ContinueRecord = { v: 1, rv: revision, start: startKey };
  return Buffer.from(JSON.stringify(record)).toString('base64url');
}

export function decodeContinue(token: string, prefix: string): { revision: number; startKey: string } {
  let record: Partial<ContinueRecord>;
  try {
    record = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw errors.badRequest('continue key is not valid: illegal base64 data or malformed JSON');
  }
  if (record?.v !== 1 || !Number.isSafeInteger(record.rv) || typeof record.start !== 'string' || record.rv! < 0) {
    throw errors.badRequest('continue key is not valid: incorrect encoded start resourceVersion');
  }
  if (!record.start.startsWith(prefix) || record.start.includes('/../') || record.start.endsWith('/..')) {
    throw errors.badRequest('continue key is not valid: the key is outside the requested collection');
  }
  return { revision: record.rv!, startKey: record.start };
}
