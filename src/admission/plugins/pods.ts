// What the pod plugins share: which requests are writes of a pod itself (not
// of a sub-resource), its containers in upstream's visiting order, node
// selector strings as upstream's ConvertSelectorToLabelsMap reads them, and
// tolerations compared as upstream's tolerations helpers compare them.

import type { KubeObject } from '../../api/kind.js';
import { ApiError } from '../../machinery/errors.js';
import { deepEqual } from '../../machinery/equal.js';
import { isLabelValue, isQualifiedName } from '../../machinery/validation.js';
import type { AdmissionRequest } from '../types.js';

/** The pod a create or update of the pod itself writes; undefined for other requests (sub-resources too). */
export function podWritten(r: AdmissionRequest): KubeObject | undefined {
  if (r.kind.group !== '' || r.kind.plural !== 'pods' || (r.subresource ?? '') !== '') return undefined;
  if (r.resource && (r.resource.group !== '' || r.resource.resource !== 'pods')) return undefined;
  if (r.operation !== 'CREATE' && r.operation !== 'UPDATE') return undefined;
  return r.object;
}

export type Container = Record<string, any>;

/** The container lists of a pod spec in upstream's order (VisitContainersWithPath). */
const containerLists = ['initContainers', 'containers', 'ephemeralContainers'] as const;

/** Each container of `spec` with its field path (`spec.containers[0]`). */
export function* containersOf(spec: KubeObject | undefined): Generator<[Container, string]> {
  for (const list of containerLists) {
    const containers: unknown = spec?.[list];
    if (!Array.isArray(containers)) continue;
    for (const [i, c] of containers.entries()) if (c && typeof c === 'object') yield [c as Container, `spec.${list}[${i}]`];
  }
}

/**
 * A failure upstream returns as a plain error rather than a Status: its
 * server answers 500 with the error's text and no reason
 * (ErrorToAPIStatus's fallback).
 */
export function plainError(message: string): ApiError {
  return new ApiError(500, '', message);
}

/** A node selector written `k=v,k2=v2` (upstream's ConvertSelectorToLabelsMap); throws an Error with upstream's text. */
export function selectorMap(text: string): Map<string, string> {
  const labels = new Map<string, string>();
  if (text === '') return labels;
  for (const part of text.split(',')) {
    const pair = part.split('=');
    if (pair.length !== 2) throw new Error(`invalid selector: [${pair.join(' ')}]`);
    const key = pair[0]!.trim();
    const keyProblems = isQualifiedName(key);
    if (keyProblems.length) throw new Error(`${key}: Invalid value: ${JSON.stringify(key)}: ${keyProblems.join('; ')}`);
    const value = pair[1]!.trim();
    const valueProblems = isLabelValue(value);
    if (valueProblems.length) throw new Error(`${key}: Invalid value: ${JSON.stringify(value)}: ${valueProblems.join('; ')}`);
    labels.set(key, value);
  }
  return labels;
}

/** Whether two label sets give one key different values (upstream's labels.Conflicts). */
export function labelsConflict(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): boolean {
  for (const [key, value] of a) if (b.has(key) && b.get(key) !== value) return true;
  return false;
}

/** An object's string map (labels, node selector) as a Map, without reading inherited keys. */
export function stringMap(value: unknown): Map<string, string> {
  const out = new Map<string, string>();
  if (!value || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [k, v] of Object.entries(value)) if (typeof v === 'string') out.set(k, v);
  return out;
}

/** A Map back into an object for the wire, keys set as own properties. */
export function mapObject(map: ReadonlyMap<string, string>): Record<string, string> {
  return Object.fromEntries(map);
}

export type Toleration = Record<string, any>;

const sameToleration = (a: Toleration, b: Toleration) => deepEqual(normalToleration(a), normalToleration(b));

/** Absent and empty fields count alike, as Go's zero values. */
function normalToleration(t: Toleration): Toleration {
  return { key: t.key ?? '', operator: t.operator ?? '', value: t.value ?? '', effect: t.effect ?? '', tolerationSeconds: t.tolerationSeconds ?? null };
}

/** Whether `ss` tolerates everything `t` tolerates (upstream's tolerations.isSuperset). */
export function toleratesSuperset(ss: Toleration, t: Toleration): boolean {
  if (sameToleration(ss, t)) return true;
  const ssKey = ss.key ?? '';
  // An empty key with Exists matches every key.
  if ((t.key ?? '') !== ssKey && (ssKey !== '' || ss.operator !== 'Exists')) return false;
  // An empty effect matches every effect.
  if ((t.effect ?? '') !== (ss.effect ?? '') && (ss.effect ?? '') !== '') return false;
  if (ss.effect === 'NoExecute' && typeof ss.tolerationSeconds === 'number') {
    if (typeof t.tolerationSeconds !== 'number' || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  switch (ss.operator ?? '') {
    case 'Equal':
    case '':
      return t.operator === 'Equal' && (t.value ?? '') === (ss.value ?? '');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

/** Both lists in one, a toleration another one covers left out (upstream's MergeTolerations). */
export function mergeTolerations(first: readonly Toleration[], second: readonly Toleration[]): Toleration[] {
  const all = [...first, ...second];
  const merged: Toleration[] = [];
  next: for (const [i, t] of all.entries()) {
    for (const kept of merged) if (toleratesSuperset(kept, t)) continue next;
    for (const later of all.slice(i + 1)) {
      // Of two equal tolerations the first is kept.
      if (!sameToleration(t, later) && toleratesSuperset(later, t)) continue next;
    }
    merged.push(t);
  }
  return merged;
}

/** Whether every toleration is covered by one of the whitelist (upstream's VerifyAgainstWhitelist). */
export function tolerationsWhitelisted(tolerations: readonly Toleration[], whitelist: readonly Toleration[]): boolean {
  if (whitelist.length === 0 || tolerations.length === 0) return true;
  return tolerations.every((t) => whitelist.some((w) => toleratesSuperset(w, t)));
}

/** Adds `toleration`, or replaces one with the same key, operator, value and effect (upstream's AddOrUpdateTolerationInPod). */
export function addOrUpdateToleration(spec: KubeObject, toleration: Toleration): void {
  const list: Toleration[] = Array.isArray(spec.tolerations) ? spec.tolerations : [];
  const same = (t: Toleration) => (t.key ?? '') === (toleration.key ?? '') && (t.operator ?? '') === (toleration.operator ?? '')
    && (t.value ?? '') === (toleration.value ?? '') && (t.effect ?? '') === (toleration.effect ?? '');
  const at = list.findIndex(same);
  if (at >= 0) {
    if (sameToleration(list[at]!, toleration)) return;
    list[at] = toleration;
  } else {
    list.push(toleration);
  }
  spec.tolerations = list;
}
