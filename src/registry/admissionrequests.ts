// Every AdmissionRequest a write makes is built here: a stored write's
// (create, update, delete), an answered create's (pods/eviction, bindings,
// token requests) and a CONNECT's. Each is built the same way: a fresh uid,
// the requester, the operation's options, and the request's warnings and
// audit annotations, which plugins and webhooks add to.

import { randomUUID } from 'node:crypto';
import type { KindDefinition, KubeObject } from '../api/kind.js';
import type { AdmissionRequest, GroupVersionResource, Operation, OperationOptions } from '../admission/types.js';
import { decodeManagedFields } from '../machinery/managedfields/index.js';
import { vocabulary } from '../machinery/vocabulary.js';
import type { RequestScope } from './writeoptions.js';

/** Where a request acts: the kind written and, when the URL names another resource or a sub-resource, those. */
export interface AdmittedAt {
  kind: KindDefinition;
  /** The kind at the version the client named, when not the stored one. */
  requestedAs?: KindDefinition;
  resource?: GroupVersionResource;
  subresource?: string;
  /** Whether the resource is namespaced (a cluster-scoped one's request names no namespace). */
  namespaced: boolean;
}

/**
 * The request admission plugins see for `operation` on `name` with the new
 * `object` and the stored `oldObject`; a dry run when its options say so.
 */
export function admissionRequest(operation: Operation, at: AdmittedAt, name: string, namespace: string | undefined, scope: RequestScope,
  options: OperationOptions, object?: KubeObject, oldObject?: KubeObject): AdmissionRequest {
  const request: AdmissionRequest = {
    uid: randomUUID(), operation, kind: at.kind, subresource: at.subresource,
    name, namespace: at.namespaced ? namespace : undefined,
    object, oldObject, user: scope.user, dryRun: (options.dryRun?.length ?? 0) > 0, options,
    // Warnings from plugins (webhooks) reach the client with the store's own; annotations reach the audit event.
    warnings: scope.warnings, auditAnnotations: scope.auditAnnotations,
  };
  // Set only when there is one (no spread of a throw-away object on every write).
  if (at.requestedAs) request.requestedAs = at.requestedAs;
  if (at.resource) request.resource = at.resource;
  return request;
}

/** A CONNECT's options are never sent (a CONNECT review carries none); admission still wants a value. */
export const connectOptions: OperationOptions = { kind: 'CreateOptions', apiVersion: `${vocabulary.metaGroup}/v1` };

/** Upstream's warning when mutating admission left managedFields it cannot read. */
export const invalidManagedFieldsWarning = (why: string) =>
  `.metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: ${why}`;

/**
 * Upstream's managed-fields guard around mutating admission: managed fields
 * were worked out before it (so what plugins add belongs to no manager);
 * entries a plugin changed are kept when they can be read, and otherwise
 * put back as they were, with a warning.
 */
export function guardManagedFields(admitted: KubeObject, before: unknown, warnings: string[]): void {
  const meta = admitted.metadata!;
  const after = meta.managedFields;
  if (after === before) return;
  try {
    decodeManagedFields(after);
    return;
  } catch (e) {
    warnings.push(invalidManagedFieldsWarning((e as Error).message));
  }
  if (before === undefined) delete meta.managedFields;
  else meta.managedFields = before;
}
