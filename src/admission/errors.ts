// The errors plugins answer with, shaped as upstream's admission errors.

import { errors, type ApiError, type Qualified } from '../machinery/errors.js';
import type { AdmissionRequest } from './types.js';

/** The resource a request writes, as errors name it. */
export function qualifiedOf(request: AdmissionRequest): Qualified {
  return { group: request.resource?.group ?? request.kind.group, resource: request.resource?.resource ?? request.kind.plural };
}

/** 403 for the object of the request: `<resource> "<name>" is forbidden: <why>` (upstream's admission.NewForbidden). */
export function forbiddenRequest(request: AdmissionRequest, why: string): ApiError {
  return errors.forbidden(qualifiedOf(request), request.name, why);
}
