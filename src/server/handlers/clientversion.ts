// A typed upstream client (kubectl create role, kubectl auth can-i) names a
// group by its upstream name in the path and in the bodies it sends, and
// decodes answers only in the version it asked for. Its bodies are taken as
// ours and the answers go back in its version.

import type { KubeObject } from '../../api/kind.js';
import { materializeList, StoredObject, type StoredList } from '../../registry/objects.js';

export interface ClientVersion {
  /** The apiVersion the client speaks (`rbac.authorization.k8s.io/v1`). */
  theirs: string;
  /** The same version by our name. */
  ours: string;
}

/** A request body in the client's version, relabelled as ours (anything else is left for decoding to judge). */
export function bodyAsOurs(body: unknown, v: ClientVersion): unknown {
  if (typeof body === 'object' && body !== null && (body as KubeObject).apiVersion === v.theirs) return { ...(body as KubeObject), apiVersion: v.ours };
  return body;
}

/** An answer in our version, relabelled in the client's (shared stored objects are copied, never changed). */
export function answerAsTheirs(obj: KubeObject, v: ClientVersion): KubeObject {
  if (obj.apiVersion !== v.ours) return obj;
  const out: KubeObject = { ...obj, apiVersion: v.theirs };
  if (Array.isArray(obj.items)) out.items = obj.items.map((i: KubeObject) => answerAsTheirs(i, v));
  return out;
}

/** A stored object or list as an answer in the client's version. */
export function storedAsTheirs(value: StoredObject | StoredList, v: ClientVersion): KubeObject {
  return answerAsTheirs(value instanceof StoredObject ? value.object : materializeList(value), v);
}
