// Admission: plugins that see every write after authorization and before
// persistence. Mutating plugins run first, in order; validating ones after.
// A rejection is an ApiError and ends the request. A request carries what an
// AdmissionReview sends to a webhook.

import type { KindDefinition, KubeObject } from '../api/kind.js';
import type { UserInfo } from '../machinery/user.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** The options of the operation (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions), as a webhook sees them. */
export interface OperationOptions {
  kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';
  apiVersion: string;
  dryRun?: string[];
  fieldManager?: string;
  [option: string]: unknown;
}

export interface GroupVersionKind { group: string; version: string; kind: string }
export interface GroupVersionResource { group: string; version: string; resource: string }

/** The resource and kind a webhook is called with: the request's own, or an equivalent version its rule names. */
export interface CalledAs {
  resource: GroupVersionResource;
  kind: GroupVersionKind;
}

/** The least audit level at which an annotation is recorded, as upstream's audit levels. */
export type AuditLevel = 'Metadata' | 'Request';

export interface AuditAnnotation {
  value: string;
  level: AuditLevel;
}

export interface AdmissionRequest {
  /** Identifies this request to webhooks; their answers must carry it back. */
  uid: string;
  operation: Operation;
  /** The kind declaration of the object written (the parent's for sub-resources), at its stored version: the objects' shape. */
  kind: KindDefinition;
  /** The kind at the version (and group) the client's request named, when that is not the stored one. */
  requestedAs?: KindDefinition;
  /**
   * The resource the request was made on, when it is not the kind's own: an
   * Eviction (policy/v1) is created on pods, sub-resource eviction.
   */
  resource?: GroupVersionResource;
  subresource?: string;
  namespace?: string;
  name: string;
  /** The new object (mutating plugins may change it); absent on DELETE. */
  object?: KubeObject;
  /** The stored object; absent on CREATE. */
  oldObject?: KubeObject;
  user?: UserInfo;
  dryRun: boolean;
  options: OperationOptions;
  /**
   * Audit annotations plugins attach, by key, for the request's audit event.
   * Created by the first plugin that adds one (see `addAuditAnnotation`)
   * unless the caller hands in the request's audit context.
   */
  auditAnnotations?: Map<string, AuditAnnotation>;
  /** Warnings for the client (webhook responses carry some); created like `auditAnnotations`. */
  warnings?: string[];
}

/** Group, version and kind of the request's object, as an AdmissionReview names it. */
export function requestKind(request: AdmissionRequest): GroupVersionKind {
  const k = request.requestedAs ?? request.kind;
  return { group: k.group, version: k.version, kind: k.kind };
}

/** Group, version and resource of the request, as an AdmissionReview names it. */
export function requestResource(request: AdmissionRequest): GroupVersionResource {
  if (request.resource) return request.resource;
  const k = request.requestedAs ?? request.kind;
  return { group: k.group, version: k.version, resource: k.plural };
}

/** Adds an audit annotation; as upstream, a key once set keeps its first value. */
export function addAuditAnnotation(request: AdmissionRequest, key: string, value: string, level: AuditLevel = 'Metadata'): void {
  const annotations = (request.auditAnnotations ??= new Map());
  if (!annotations.has(key)) annotations.set(key, { value, level });
}

/** Adds a warning for the client. */
export function addWarning(request: AdmissionRequest, warning: string): void {
  (request.warnings ??= []).push(warning);
}

/**
 * One run of the mutating phase. When a plugin asks for it (a webhook changed
 * the object after an earlier webhook that wants to see the final object),
 * the chain runs the mutating phase a second time, as upstream's reinvoker:
 * `reinvoke` is then true. Plugins keep their own state across the rounds
 * under their name.
 */
export interface MutationRound {
  readonly reinvoke: boolean;
  /** Asks the chain for a second round (only the first round can ask). */
  requestReinvocation(): void;
  state<T>(plugin: string, create: () => T): T;
}

export interface AdmissionPlugin {
  readonly name: string;
  /** Changes the request's object; throws an ApiError to reject. */
  mutate?(request: AdmissionRequest, round: MutationRound): Promise<void> | void;
  /** Checks the final object; throws an ApiError to reject. */
  validate?(request: AdmissionRequest): Promise<void> | void;
  /**
   * Gives back what the plugin reserved for this request (quota) when a later
   * step rejected it. Called at most once per request, for plugins that ran.
   */
  release?(request: AdmissionRequest): Promise<void> | void;
}

export interface Admission {
  mutate(request: AdmissionRequest): Promise<void>;
  validate(request: AdmissionRequest): Promise<void>;
  /** The request failed after admission (validation, storage): plugins give back what they reserved. */
  abandon?(request: AdmissionRequest): Promise<void>;
}
