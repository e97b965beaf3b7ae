// The options of a request, from its query (and, for deletes, its body), as
// upstream's CreateOptions, UpdateOptions, PatchOptions, ListOptions and
// DeleteOptions: decoded with their types and validated before the store runs.

import { errors, fieldErrors, type FieldError } from '../../machinery/errors.js';
import { managerFromUserAgent, validateFieldManager } from '../../machinery/managedfields/index.js';
import { DeleteOptions as DeleteOptionsSchema } from '../../api/meta/v1.js';
import { pruneObject } from '../../api/prune.js';
import type { DeleteOptions, FieldValidation, ListOptions, RequestScope, WriteOptions } from '../../registry/store.js';
import { bodyFormat, readBody } from '../negotiation.js';
import { decodeBody } from '../../api/wire.js';
import type { SchemaLookup } from '../../api/protobuf/index.js';
import type { RequestContext } from '../filters.js';
import { integerParam, queryBool } from '../params.js';

/** dryRun values upstream knows: All is the only one. */
function dryRunErrors(values: string[]): FieldError[] {
  return values.filter((v) => v !== 'All').map((v) => fieldErrors.notSupported('dryRun', v, ['All']));
}

export function writeOptions(scope: RequestContext, optionsKind: string): WriteOptions {
  const query = scope.query;
  const dryRun = query.getAll('dryRun');
  const dryRunInvalid = dryRunErrors(dryRun);
  if (dryRunInvalid.length) throw errors.invalidOptions(optionsKind, dryRunInvalid);
  const fv = query.get('fieldValidation') ?? 'Warn';
  if (!['Ignore', 'Warn', 'Strict'].includes(fv)) {
    throw errors.badRequest(`fieldValidation parameter unsupported: ${fv} (supported values: Ignore, Warn, Strict)`);
  }
  const fieldManager = query.get('fieldManager');
  if (fieldManager !== null) {
    const errs = validateFieldManager(fieldManager);
    if (errs.length) throw errors.invalidOptions(optionsKind, errs);
  }
  const manager = fieldManager ?? managerFromUserAgent(scope.req.headers['user-agent']);
  return { dryRun: dryRun.length > 0, fieldValidation: fv as FieldValidation, manager };
}

/** What every write of the request shares: who asks, the warnings it gathers, its audit annotations, the group name it used. */
export function requestScope(scope: RequestContext): RequestScope {
  const clientGroup = scope.info?.clientGroup;
  return { user: scope.user, warnings: [], auditAnnotations: scope.auditAnnotations, ...(clientGroup !== undefined ? { clientGroup } : {}) };
}

export function listOptions(query: URLSearchParams): ListOptions {
  const limit = integerParam(query, 'limit');
  return {
    labelSelector: query.get('labelSelector'),
    fieldSelector: query.get('fieldSelector'),
    limit: limit && limit > 0 ? limit : undefined,
    continue: query.get('continue'),
    resourceVersion: query.get('resourceVersion'),
    resourceVersionMatch: query.get('resourceVersionMatch'),
  };
}

const propagationPolicies = ['Foreground', 'Background', 'Orphan'];

/**
 * DeleteOptions from the body (typed: a string where a list or an integer
 * belongs is a 400, another kind is a 400) and the query (which wins), then
 * validated as upstream (422 Invalid DeleteOptions).
 */
export async function deleteOptions(scope: RequestContext, protobufSchemas: SchemaLookup): Promise<DeleteOptions> {
  const raw = await readBody(scope.req);
  let body: Record<string, any> = {};
  if (raw.length > 0) {
    const decoded = decodeBody(raw, bodyFormat(scope.req.headers['content-type']), protobufSchemas);
    scope.audit?.keepRequestObject(decoded);
    if (decoded !== null) {
      if (typeof decoded !== 'object' || Array.isArray(decoded)) {
        throw errors.badRequest('the object provided is unrecognized (must be of type DeleteOptions): json: cannot unmarshal non-object into Go value of type v1.DeleteOptions');
      }
      const kind = (decoded as Record<string, unknown>).kind;
      if (kind !== undefined && kind !== '' && kind !== 'DeleteOptions') {
        throw errors.badRequest(`${typeof kind === 'string' ? kind : JSON.stringify(kind)} is not suitable for converting to "DeleteOptions": the object provided is unrecognized (must be of type DeleteOptions)`);
      }
      body = pruneObject(decoded as Record<string, unknown>, DeleteOptionsSchema, 'DeleteOptions', 'v1').object;
    }
  }
  const query = scope.query;
  const grace = integerParam(query, 'gracePeriodSeconds') ?? body.gracePeriodSeconds;
  const policy: string | undefined = query.get('propagationPolicy') ?? body.propagationPolicy;
  const orphan = queryBool(query, 'orphanDependents') ?? body.orphanDependents;
  const dryRun: string[] = query.getAll('dryRun').length ? query.getAll('dryRun') : (body.dryRun ?? []);
  const errs: FieldError[] = [];
  if (orphan !== undefined && policy !== undefined) {
    errs.push(fieldErrors.invalid('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (policy !== undefined && !propagationPolicies.includes(policy)) {
    errs.push(fieldErrors.notSupported('propagationPolicy', policy, [...propagationPolicies, 'nil']));
  }
  errs.push(...dryRunErrors(dryRun));
  if (errs.length) throw errors.invalidOptions('DeleteOptions', errs);
  return { gracePeriodSeconds: grace, preconditions: body.preconditions, propagationPolicy: policy, orphanDependents: orphan, dryRun: dryRun.length > 0 };
}
