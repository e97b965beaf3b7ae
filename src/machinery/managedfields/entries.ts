// metadata.managedFields as stored: one entry per manager and operation
// (Update entries also per apiVersion), each with its field set in FieldsV1.
// Decoding turns the list into sets keyed by a manager identifier built as
// upstream builds it, so conflict messages name managers the same way.

import { FieldError, fieldErrors } from '../errors.js';
import { rfc3339Now } from '../time.js';
import { isObject, type JsonObject } from '../patch/json.js';
import { fromFieldsV1, toFieldsV1 } from './fieldsv1.js';
import { compareStrings } from './pathelement.js';
import type { ManagedSets } from './updater.js';
import { validateFieldManager } from './useragent.js';

export type ManagedFieldsOperation = 'Apply' | 'Update';

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: ManagedFieldsOperation;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: JsonObject;
  subresource?: string;
}

/** Decoded managed fields: sets and the time each was last changed, by manager identifier. */
export interface Managed {
  sets: ManagedSets;
  times: Map<string, string | undefined>;
}

export function emptyManaged(): Managed {
  return { sets: new Map(), times: new Map() };
}

interface ManagerId { manager?: string; operation?: string; apiVersion?: string; subresource?: string }

/**
 * The identity of an entry: manager, operation, subresource, and for Update
 * entries the apiVersion (an applier keeps one entry whatever version it uses).
 */
export function managerIdentifier(e: ManagerId): string {
  // Every write names its entries' identities again, and they are few: each made once. Each part length-prefixed: no two keys alike.
  const m = e.manager ?? '', o = e.operation ?? '', v = e.apiVersion ?? '', r = e.subresource ?? '';
  const key = `${m.length}:${m}${o.length}:${o}${v.length}:${v}${r.length}:${r}`;
  let id = identifiers.get(key);
  if (id === undefined) {
    const fields: Record<string, string> = {};
    if (e.manager) fields.manager = e.manager;
    if (e.operation) fields.operation = e.operation;
    if (e.apiVersion && e.operation !== 'Apply') fields.apiVersion = e.apiVersion;
    if (e.subresource) fields.subresource = e.subresource;
    id = JSON.stringify(fields);
    remember(identifiers, key, id);
  }
  return id;
}

/** The parts of an identifier; read-only (shared by every caller of the same identifier). */
export function parseIdentifier(id: string): Readonly<ManagerId> {
  let parts = parsedIdentifiers.get(id);
  if (parts === undefined) {
    try {
      const v: unknown = JSON.parse(id);
      parts = isObject(v) ? (v as ManagerId) : { manager: id };
    } catch {
      parts = { manager: id };
    }
    remember(parsedIdentifiers, id, Object.freeze(parts));
  }
  return parts;
}

/** Managers are named by clients: each memo is emptied when it reaches this many identities. */
const maxRememberedIdentifiers = 1000;
const identifiers = new Map<string, string>();
const parsedIdentifiers = new Map<string, Readonly<ManagerId>>();

function remember<V>(memo: Map<string, V>, key: string, value: V): void {
  if (memo.size >= maxRememberedIdentifiers) memo.clear();
  memo.set(key, value);
}

/** How conflict messages name a manager: `"name"`, with subresource and version for Update entries. */
export function printManager(id: string): string {
  const e = parseIdentifier(id);
  let s = JSON.stringify(e.manager ?? '');
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') s += ` using ${e.apiVersion ?? ''}`;
  return s;
}

/** Decodes entries; throws an Error (upstream's wording) on a malformed one. */
export function decodeManagedFields(entries: unknown): Managed {
  const managed = emptyManaged();
  if (entries === undefined || entries === null) return managed;
  if (!Array.isArray(entries)) throw new Error('managedFields must be a list');
  entries.forEach((raw, i) => {
    if (!isObject(raw)) throw new Error(`managed fields entry ${i} must be an object`);
    const e = raw as ManagedFieldsEntry;
    if (e.operation !== 'Apply' && e.operation !== 'Update') throw new Error('operation must be `Apply` or `Update`');
    if (!e.apiVersion) throw new Error('apiVersion must not be empty');
    if (!e.fieldsType) throw new Error(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1') throw new Error(`invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`);
    const id = managerIdentifier(e);
    managed.sets.set(id, { set: fromFieldsV1(e.fieldsV1 ?? {}), apiVersion: e.apiVersion, applied: e.operation === 'Apply' });
    managed.times.set(id, e.time);
  });
  return managed;
}

function unixSeconds(time: string | undefined): number {
  if (!time) return 0;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
}

/** Encodes sets as entries, ordered as upstream: Apply before Update, then by time, manager, apiVersion, subresource. */
export function encodeManagedFields(managed: Managed): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = [];
  for (const [id, vs] of managed.sets) {
    const who = parseIdentifier(id);
    const e: ManagedFieldsEntry = {};
    if (who.manager) e.manager = who.manager;
    e.operation = vs.applied ? 'Apply' : 'Update';
    e.apiVersion = vs.apiVersion;
    const time = managed.times.get(id);
    if (time) e.time = time;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = toFieldsV1(vs.set);
    if (who.subresource) e.subresource = who.subresource;
    entries.push(e);
  }
  return entries.sort((p, q) =>
    compareStrings(p.operation ?? '', q.operation ?? '')
    || unixSeconds(p.time) - unixSeconds(q.time)
    || compareStrings(p.manager ?? '', q.manager ?? '')
    || compareStrings(p.apiVersion ?? '', q.apiVersion ?? '')
    || compareStrings(p.subresource ?? '', q.subresource ?? ''));
}

/** A write that sets managedFields to a list of one empty entry clears them all (an empty list does not). */
export function isResetManagedFields(v: unknown): boolean {
  return Array.isArray(v) && v.length === 1 && isObject(v[0]) && Object.keys(v[0]).length === 0;
}

export function timestamp(now: Date): string {
  return rfc3339Now(now);
}

const maxSubresourceNameLength = 256;

/** ObjectMeta validation of managedFields, as upstream (422 causes). */
export function validateManagedFields(entries: unknown, path = 'metadata.managedFields'): FieldError[] {
  if (!Array.isArray(entries)) return [];
  const errs: FieldError[] = [];
  entries.forEach((raw, i) => {
    const p = `${path}[${i}]`;
    const e = (isObject(raw) ? raw : {}) as ManagedFieldsEntry;
    if (e.operation !== 'Apply' && e.operation !== 'Update') {
      errs.push(fieldErrors.invalid(`${p}.operation`, e.operation ?? '', 'must be `Apply` or `Update`'));
    }
    if (e.fieldsType && e.fieldsType !== 'FieldsV1') {
      errs.push(fieldErrors.invalid(`${p}.fieldsType`, e.fieldsType, 'must be `FieldsV1`'));
    }
    errs.push(...validateFieldManager(e.manager ?? '', `${p}.manager`));
    if ((e.subresource ?? '').length > maxSubresourceNameLength) {
      errs.push(fieldErrors.tooLong(`${p}.subresource`, maxSubresourceNameLength));
    }
  });
  return errs;
}
