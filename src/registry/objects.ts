// Object <-> stored bytes. The resourceVersion is never stored: it is the
// key's modRevision, set on the way out, as etcd-backed servers do.

import type { KeyValue } from '../storage/backend.js';
import type { KubeObject } from '../api/kind.js';

export function toStoredBytes(obj: KubeObject): Buffer {
  const meta = obj.metadata ?? {};
  const rv = meta.resourceVersion;
  delete meta.resourceVersion;
  const bytes = Buffer.from(JSON.stringify(obj));
  if (rv !== undefined) meta.resourceVersion = rv;
  return bytes;
}

export function fromKeyValue(kv: KeyValue): KubeObject {
  const obj = JSON.parse(kv.value.toString('utf8')) as KubeObject;
  obj.metadata ??= {};
  obj.metadata.resourceVersion = String(kv.modRevision);
  return obj;
}

/** Parses a client-supplied resourceVersion; undefined when absent or empty. */
export function parseResourceVersion(rv: unknown): number | undefined {
  if (rv === undefined || rv === null || rv === '') return undefined;
  const n = Number(rv);
  return Number.isSafeInteger(n) && n >= 0 && String(rv).trim() !== '' ? n : NaN;
}
