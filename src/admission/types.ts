// Admission: plugins that see every write after authorization and before
// persistence. Mutating plugins run first, in order; validating ones after.
// A rejection is an ApiError and ends the request.

import type { KindDefinition, KubeObject } from '../api/kind.js';
import type { UserInfo } from '../machinery/user.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionRequest {
  operation: Operation;
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
