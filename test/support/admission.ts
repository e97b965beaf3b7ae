// Admission requests for unit tests of the chain, plugins and webhooks.

import type { AdmissionRequest, Operation } from '../../src/admission/types.js';
import type { KindDefinition, KubeObject } from '../../src/api/kind.js';
import { isApiError, type ApiError } from '../../src/machinery/errors.js';
import { vocabulary } from '../../src/machinery/vocabulary.js';
import assert from 'node:assert/strict';

const optionsKind = { CREATE: 'CreateOptions', UPDATE: 'UpdateOptions', DELETE: 'DeleteOptions', CONNECT: 'CreateOptions' } as const;

export interface RequestParts {
  namespace?: string;
  subresource?: string;
  object?: KubeObject;
  oldObject?: KubeObject;
  dryRun?: boolean;
}

/** A request as the store makes one: the object for every operation but DELETE, the old one for every one but CREATE. */
export function admissionRequest(operation: Operation, kind: KindDefinition, name: string, parts: RequestParts = {}): AdmissionRequest {
  const apiVersion = kind.group ? `${kind.group}/${kind.version}` : kind.version;
  const object: KubeObject = parts.object ?? { apiVersion, kind: kind.kind, metadata: { name, namespace: parts.namespace } };
  return {
    uid: `uid-${name}`, operation, kind, name, namespace: parts.namespace, subresource: parts.subresource,
    object: operation === 'DELETE' ? undefined : object,
    oldObject: operation === 'CREATE' ? undefined : (parts.oldObject ?? structuredClone(object)),
    dryRun: parts.dryRun ?? false,
    options: { kind: optionsKind[operation], apiVersion: `${vocabulary.metaGroup}/v1`, ...(parts.dryRun ? { dryRun: ['All'] } : {}) },
  };
}

/** The ApiError a promise (or a function, which may also throw at once) rejects with; fails when it resolves. */
export async function rejection(p: Promise<unknown> | (() => unknown)): Promise<ApiError> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    assert.ok(isApiError(e), `an ApiError, got ${String((e as Error)?.stack ?? e)}`);
    return e;
  }
  assert.fail('the request was admitted');
}
