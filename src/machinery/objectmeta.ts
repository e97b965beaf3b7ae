// ObjectMeta rules common to every kind: validation on create and update,
// generated names. Per-kind rules live in the kind's strategy.

import { randomFillSync } from 'node:crypto';
import { FieldError, fieldErrors } from './errors.js';
import { NameCheck, checkName, isLabelValue, isQualifiedName, isDns1123Label, fieldPath } from './validation.js';

export const totalAnnotationSizeLimit = 256 * 1024;

// Upstream leaves out vowels and look-alike digits so generated names spell no words.
const suffixAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
const maxGeneratedNameLength = 63 - 5;

/**
 * Random bytes drawn in blocks: a crypto call per character cost several
 * microseconds per name (every pod gets one for its token volume). A byte
 * picks a character when it falls below the largest multiple of the
 * alphabet's length, so every character is equally likely.
 */
const randomPool = Buffer.alloc(256);
let randomAt = randomPool.length;
const unbiasedBelow = 256 - (256 % suffixAlphabet.length);

function randomSuffixChar(): string {
  for (;;) {
    if (randomAt === randomPool.length) {
      randomFillSync(randomPool);
      randomAt = 0;
    }
    const byte = randomPool[randomAt++]!;
    if (byte < unbiasedBelow) return suffixAlphabet[byte % suffixAlphabet.length]!;
  }
}

export function generateName(base: string): string {
  const prefix = base.length > maxGeneratedNameLength ? base.slice(0, maxGeneratedNameLength) : base;
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += randomSuffixChar();
  return prefix + suffix;
}

export interface MetaRules {
  namespaced: boolean;
  nameCheck: NameCheck;
}

export function validateLabels(labels: unknown, field: string): FieldError[] {
  if (labels === undefined || labels === null) return [];
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(labels as Record<string, string>)) {
    errs.push(...checkName(isQualifiedName, field, k));
    errs.push(...isLabelValue(String(v)).map((m) => fieldErrors.invalid(field, v, m)));
  }
  return errs;
}

export function validateAnnotations(annotations: unknown, field: string): FieldError[] {
  if (annotations === undefined || annotations === null) return [];
  const errs: FieldError[] = [];
  let total = 0;
  for (const [k, v] of Object.entries(annotations as Record<string, string>)) {
    errs.push(...checkName(isQualifiedName, field, k.toLowerCase()).map((e) => fieldErrors.invalid(field, k, e.detail)));
    total += k.length + String(v).length;
  }
  if (total > totalAnnotationSizeLimit) {
    errs.push(new FieldError('FieldValueTooLong', field, `must have at most ${totalAnnotationSizeLimit} bytes`, undefined, false));
  }
  return errs;
}

export function validateObjectMeta(meta: Record<string, any>, rules: MetaRules): FieldError[] {
  const errs: FieldError[] = [];
  const name = meta.name as string | undefined;
  if (!name) {
    if (!meta.generateName) errs.push(fieldErrors.required('metadata.name', 'name or generateName is required'));
  } else {
    errs.push(...checkName(rules.nameCheck, 'metadata.name', name));
  }
  if (meta.generateName) {
    errs.push(...rules.nameCheck(String(meta.generateName) + 'a').map((m) => fieldErrors.invalid('metadata.generateName', meta.generateName, m)));
  }
  if (rules.namespaced) {
    if (!meta.namespace) errs.push(fieldErrors.required('metadata.namespace'));
    else errs.push(...checkName(isDns1123Label, 'metadata.namespace', meta.namespace));
  } else if (meta.namespace) {
    errs.push(fieldErrors.forbidden('metadata.namespace', 'not allowed on this type'));
  }
  if (typeof meta.generation === 'number' && meta.generation < 0) {
    errs.push(fieldErrors.invalid('metadata.generation', meta.generation, 'must be greater than or equal to 0'));
  }
  errs.push(...validateLabels(meta.labels, 'metadata.labels'));
  errs.push(...validateAnnotations(meta.annotations, 'metadata.annotations'));
  const finalizers: string[] = meta.finalizers ?? [];
  const seen = new Set<string>();
  finalizers.forEach((f, i) => {
    errs.push(...checkName(isQualifiedName, fieldPath('metadata.finalizers', i), f));
    if (seen.has(f)) errs.push(fieldErrors.duplicate(fieldPath('metadata.finalizers', i), f));
    seen.add(f);
  });
  const owners: any[] = meta.ownerReferences ?? [];
  let controllers = 0;
  owners.forEach((o, i) => {
    const base = fieldPath('metadata.ownerReferences', i);
    if (!o.apiVersion) errs.push(fieldErrors.invalid(`${base}.apiVersion`, o.apiVersion ?? '', 'version must not be empty'));
    if (!o.kind) errs.push(fieldErrors.invalid(`${base}.kind`, o.kind ?? '', 'kind must not be empty'));
    if (!o.name) errs.push(fieldErrors.invalid(`${base}.name`, o.name ?? '', 'name must not be empty'));
    if (!o.uid) errs.push(fieldErrors.invalid(`${base}.uid`, o.uid ?? '', 'uid must not be empty'));
    if (o.controller) controllers++;
  });
  if (controllers > 1) {
    errs.push(fieldErrors.invalid('metadata.ownerReferences', owners, 'Only one reference can have Controller set to true'));
  }
  return errs;
}

function immutable(field: string, value: unknown): FieldError {
  return fieldErrors.invalid(field, value, 'field is immutable');
}

export function validateObjectMetaUpdate(meta: Record<string, any>, old: Record<string, any>, rules: MetaRules): FieldError[] {
  const errs = validateObjectMeta(meta, rules);
  if (meta.name !== old.name) errs.push(immutable('metadata.name', meta.name));
  if ((meta.namespace ?? '') !== (old.namespace ?? '')) errs.push(immutable('metadata.namespace', meta.namespace));
  if (meta.uid !== old.uid) errs.push(immutable('metadata.uid', meta.uid));
  if (meta.creationTimestamp !== old.creationTimestamp) errs.push(immutable('metadata.creationTimestamp', meta.creationTimestamp));
  return errs;
}

