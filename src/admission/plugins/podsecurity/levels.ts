// Pod Security levels, policy versions and the policy of a namespace, read
// from its labels as upstream's pod-security-admission reads them: a label
// that cannot be parsed falls back to the strictest choice for enforce
// (restricted, latest) and to privileged for audit and warn, and the error
// is reported beside the policy rather than refusing the pod.

import { FieldError, fieldErrors } from '../../../machinery/errors.js';
import { ownValue } from '../../../machinery/ownkeys.js';
import { keyPath } from '../../../machinery/validation.js';
import { productGroup } from '../../../machinery/vocabulary.js';

export type Level = 'privileged' | 'baseline' | 'restricted';
export const levels: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/** A policy version: v1.<minor>, or latest (newer than every numbered one, future ones included). */
export type Version = number | 'latest';
export const latest = 'latest' as const;

export function versionText(v: Version): string {
  return v === latest ? latest : `v1.${v}`;
}

/** Whether `a` is older than `b`. */
export function olderThan(a: Version, b: Version): boolean {
  if (a === latest) return false;
  return b === latest || a < b;
}

export interface LevelVersion {
  level: Level;
  version: Version;
}

export function levelVersionText(lv: LevelVersion): string {
  return `${lv.level}:${versionText(lv.version)}`;
}

/** Two level-versions check the same (both privileged, or equal), as upstream's Equivalent. */
export function equivalent(a: LevelVersion, b: LevelVersion): boolean {
  return (a.level === 'privileged' && b.level === 'privileged') || (a.level === b.level && a.version === b.version);
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export const modes = ['enforce', 'audit', 'warn'] as const;
export type Mode = typeof modes[number];

export function fullyPrivileged(p: Policy): boolean {
  return p.enforce.level === 'privileged' && p.audit.level === 'privileged' && p.warn.level === 'privileged';
}

export function policiesEquivalent(a: Policy, b: Policy): boolean {
  return modes.every((m) => equivalent(a[m], b[m]));
}

/** -1, 0 or 1 as `a` is less strict than, as strict as, or stricter than `b`. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(levels.indexOf(a) - levels.indexOf(b));
}

export const levelError = `must be one of ${levels.join(', ')}`;
export const versionError = 'must be "latest" or "v1.x"';

/** The level named, or undefined when `text` names none. */
export function parseLevel(text: string): Level | undefined {
  return (levels as readonly string[]).includes(text) ? text as Level : undefined;
}

const versionPattern = /^v1\.(0|[1-9][0-9]*)$/;

/** The version named, or undefined when `text` is neither `latest` nor `v1.<minor>`. */
export function parseVersion(text: string): Version | undefined {
  if (text === latest) return latest;
  const match = versionPattern.exec(text);
  if (!match) return undefined;
  const minor = Number(match[1]);
  // A minor past what a number holds exactly is no version upstream could parse either.
  return Number.isSafeInteger(minor) ? minor : undefined;
}

/**
 * The namespace labels of each mode: ours first, then upstream's
 * `pod-security.kubernetes.io/` names, which manifests written for upstream
 * carry (a namespace that has both is read by ours).
 */
export const labelPrefixes: readonly string[] = [`${productGroup('pod-security')}/`, 'pod-security.kubernetes.io/'];

/** Our prefix, for audit annotations (upstream writes them under its label prefix). */
export const annotationPrefix = labelPrefixes[0]!;

interface FoundLabel {
  key: string;
  value: string;
}

function findLabel(labels: Record<string, unknown>, name: string): FoundLabel | undefined {
  for (const prefix of labelPrefixes) {
    const value = ownValue(labels, prefix + name);
    if (typeof value === 'string') return { key: prefix + name, value };
  }
  return undefined;
}

/** Whether the namespace labels set `mode` or its version (under either prefix). */
export function labelsSet(labels: Record<string, unknown> | undefined, mode: Mode): boolean {
  return !!labels && (findLabel(labels, mode) !== undefined || findLabel(labels, `${mode}-version`) !== undefined);
}

const labelsField = 'metadata.labels';

/**
 * The policy the labels give, `defaults` where they say nothing. Errors name
 * each label that could not be parsed; the policy is always whole. As
 * upstream, warn follows an enforce label that is stricter than it when no
 * warn label is set.
 */
export function policyFromLabels(labels: Record<string, unknown> | undefined, defaults: Policy): { policy: Policy; errors: FieldError[] } {
  const policy: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: FieldError[] = [];
  if (!labels) return { policy, errors };
  let enforceLevelSet = false;
  let warnLevelSet = false;
  let warnVersionSet = false;
  for (const mode of modes) {
    const level = findLabel(labels, mode);
    if (level) {
      const parsed = parseLevel(level.value);
      if (parsed === undefined) errors.push(fieldErrors.invalid(keyPath(labelsField, level.key), level.value, levelError));
      // Enforce fails closed; audit and warn fail open.
      policy[mode].level = parsed ?? (mode === 'enforce' ? 'restricted' : 'privileged');
      if (mode === 'enforce') enforceLevelSet = parsed !== undefined;
      if (mode === 'warn') warnLevelSet = true;
    }
    const version = findLabel(labels, `${mode}-version`);
    if (version) {
      const parsed = parseVersion(version.value);
      if (parsed === undefined) errors.push(fieldErrors.invalid(keyPath(labelsField, version.key), version.value, versionError));
      policy[mode].version = parsed ?? latest;
      if (mode === 'warn') warnVersionSet = true;
    }
  }
  if (!warnLevelSet && enforceLevelSet && compareLevels(policy.enforce.level, policy.warn.level) > 0) {
    policy.warn.level = policy.enforce.level;
    if (!warnVersionSet) policy.warn.version = policy.enforce.version;
  }
  return { policy, errors };
}
