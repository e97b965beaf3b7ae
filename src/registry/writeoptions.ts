// What a write is asked with and what it answers: the options every write
// road of the store takes (WriteOptions and those of patch and delete), where
// a write lands, and how admission reports them. Kept apart from store.ts,
// which holds the roads themselves.

import { product, vocabulary } from '../machinery/vocabulary.js';
import type { UserInfo } from '../machinery/user.js';
import type { KindDefinition, KubeObject } from '../api/kind.js';
import type { AuditAnnotation, GroupVersionResource, OperationOptions } from '../admission/types.js';
import type { DecodeOptions } from '../api/decode.js';

export interface WriteOptions extends DecodeOptions {
  dryRun: boolean;
  /** Who asks, for admission. */
  user?: UserInfo;
  /** Owner of the fields this write sets (fieldManager, or derived from the User-Agent). */
  manager?: string;
  /** The request's audit annotations, when it is audited: admission plugins add theirs to it. */
  auditAnnotations?: Map<string, AuditAnnotation>;
  /**
   * The upstream name the request gave the kind's group (apiextensions.k8s.io
   * for our apiextensions group), when it used one: managed fields record the
   * write's apiVersion, and apply conflicts name it, as the client named it.
   */
  clientGroup?: string;
  /** The kind at the version the request named, when not the stored one (admission reviews name it). */
  requestedAs?: KindDefinition;
  /**
   * The request was admitted as a whole (an answered create: pods/binding,
   * pods/eviction): the writes it makes are not admitted again, as upstream's
   * sub-resources write straight to storage.
   */
  admitted?: boolean;
}

/** Manager recorded for writes that name none (the server's own). */
export const serverManager = `${product.name}-apiserver`;

export interface PatchOptions {
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  orphanDependents?: boolean;
}

export interface DeleteResult {
  object: KubeObject;
  /** False when the object stays because finalizers hold it. */
  removed: boolean;
}

/**
 * Where a write lands: the main resource, or a sub-resource that owns some
 * fields of the object (status, finalize) and changes nothing else.
 */
export interface WriteTarget {
  subresource?: string;
}

/** What an answered create is admitted as: its object's kind, and the resource and sub-resource of its URL. */
export interface AnsweredCreate {
  kind: KindDefinition;
  resource: GroupVersionResource;
  subresource?: string;
}

/** Options of the operation, as admission reports them (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions). */
export function operationOptions(kind: OperationOptions['kind'], opts: WriteOptions, extra: Record<string, unknown> = {}): OperationOptions {
  const options: OperationOptions = { kind, apiVersion: `${vocabulary.metaGroup}/v1`, ...extra };
  if (opts.dryRun) options.dryRun = ['All'];
  if (opts.manager) options.fieldManager = opts.manager;
  return options;
}
