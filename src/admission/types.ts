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

export interface AdmissionRequest {
  /** Identifies this request to webhooks; their answers must carry it back. */
  uid: string;
  operation: Operation;
  /** The kind declaration of the object written (the parent's for sub-resources). */
  kind: KindDefinition;
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
}

/** Group, version and kind of the request's object, as an AdmissionReview names it. */
export function requestKind(request: AdmissionRequest): GroupVersionKind {
  return { group: request.kind.group, version: request.kind.version, kind: request.kind.kind };
}

/** Group, version and resource of the request, as an AdmissionReview names it. */
export function requestResource(request: AdmissionRequest): GroupVersionResource {
  return { group: request.kind.group, version: request.kind.version, resource: request.kind.plural };
}

export interface AdmissionPlugin {
  readonly name: string;
  /** Changes the request's object; throws an ApiError to reject. */
  mutate?(request: AdmissionRequest): Promise<void> | void;
  /** Checks the final object; throws an ApiError to reject. */
  validate?(request: AdmissionRequest): Promise<void> | void;
}

export interface Admission {
  mutate(request: AdmissionRequest): Promise<void>;
  validate(request: AdmissionRequest): Promise<void>;
}
