// What a write is asked with and what it answers, in three parts that change
// for different reasons: the request's scope (who asks, and what the request
// gathers on its way: warnings, audit annotations), the operation's own
// options (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions), and
// the body as it was sent. Where a write lands (a sub-resource, the version
// the path names) is its target. Kept apart from store.ts, which holds the
// road itself.

import { product, vocabulary } from '../machinery/vocabulary.js';
import type { UserInfo } from '../machinery/user.js';
import type { NumberText } from '../machinery/duplicates.js';
import type { KindDefinition, KubeObject } from '../api/kind.js';
import type { VersionCodec } from '../api/codec.js';
import type { AuditAnnotation, GroupVersionResource, OperationOptions } from '../admission/types.js';
import type { DecodeOptions, FieldValidation } from '../api/decode.js';
import type { PatchType } from './patch.js';

/** The request a write belongs to: the same for every write it makes (an eviction's status write and delete). */
export interface RequestScope {
  /** Who asks, for admission and the kind's preparation. */
  user?: UserInfo;
  /** Warning header texts for the response: decoding, plugins and webhooks, the kind's own. */
  warnings: string[];
  /** The request's audit annotations, when it is audited: admission plugins add theirs to it. */
  auditAnnotations?: Map<string, AuditAnnotation>;
  /**
   * The upstream name the request gave the kind's group (apiextensions.k8s.io
   * for our apiextensions group), when it used one: managed fields record the
   * write's apiVersion, and apply conflicts name it, as the client named it.
   */
  clientGroup?: string;
  /**
   * The request was admitted as a whole (an answered create: pods/binding,
   * pods/eviction): the writes it makes are not admitted again, as upstream's
   * sub-resources write straight to storage.
   */
  admitted?: boolean;
}

/** The options of a create, update or patch (upstream's CreateOptions, UpdateOptions, PatchOptions). */
export interface WriteOptions {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** Owner of the fields this write sets (fieldManager, or derived from the User-Agent). */
  manager?: string;
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

export interface DeleteOptions {
  dryRun?: boolean;
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  orphanDependents?: boolean;
}

/** A body as the client sent it: its parsed value, and what its text told that the value lost. */
export interface Sent {
  value: unknown;
  /** Strict-decoding messages for keys the text repeated. */
  duplicates?: string[];
  /** The literal text of the body's numbers, when it was JSON. */
  numberText?: NumberText;
}

/** A patch as the client sent it, with its type (the request's content type). */
export interface SentPatch extends Sent {
  type: PatchType;
}

/** How a sent body is decoded for this request: the operation's fieldValidation, the scope's warnings. */
export function decodeOptions(body: Sent, opts: WriteOptions, scope: RequestScope): DecodeOptions {
  return { fieldValidation: opts.fieldValidation, warnings: scope.warnings, duplicates: body.duplicates, numberText: body.numberText };
}

/** Manager recorded for writes that name none (the server's own). */
export const serverManager = `${product.name}-apiserver`;

export interface DeleteResult {
  object: KubeObject;
  /** False when the object stays because finalizers hold it. */
  removed: boolean;
}

/**
 * Where a write lands: the main resource, or a sub-resource that owns some
 * fields of the object (status, finalize) and changes nothing else; at the
 * version the path names, when not the stored one (its codec).
 */
export interface WriteTarget {
  subresource?: string;
  codec?: VersionCodec;
}

/** What an answered create is admitted as: its object's kind, and the resource and sub-resource of its URL. */
export interface AnsweredCreate {
  kind: KindDefinition;
  resource: GroupVersionResource;
  subresource?: string;
}

/** Options of the operation, as admission reports them (CreateOptions, UpdateOptions, PatchOptions). */
export function operationOptions(kind: OperationOptions['kind'], opts: WriteOptions): OperationOptions {
  const options: OperationOptions = { kind, apiVersion: `${vocabulary.metaGroup}/v1` };
  if (opts.force) options.force = true;
  if (opts.dryRun) options.dryRun = ['All'];
  if (opts.manager) options.fieldManager = opts.manager;
  return options;
}

/** DeleteOptions as admission reports them. */
export function deleteOperationOptions(options: DeleteOptions): OperationOptions {
  const reported: OperationOptions = { kind: 'DeleteOptions', apiVersion: `${vocabulary.metaGroup}/v1` };
  if (options.propagationPolicy) reported.propagationPolicy = options.propagationPolicy;
  if (options.gracePeriodSeconds !== undefined) reported.gracePeriodSeconds = options.gracePeriodSeconds;
  if (options.preconditions) reported.preconditions = options.preconditions;
  if (options.dryRun) reported.dryRun = ['All'];
  return reported;
}
