// Errors of the patch algorithms, shaped as the upstream patch handler answers.

import { ApiError, errors } from '../errors.js';

/**
 * 422 as upstream's generic server response for a patch that cannot be
 * applied (failed json-patch `test`, missing path, lists of lists): a fixed
 * message, the detail in the one cause.
 */
export function patchRejected(detail: string): ApiError {
  return new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {
    causes: [{ reason: 'UnexpectedServerResponse', message: detail }],
  });
}

/** 400 for a malformed patch document or directive. */
export function badPatch(message: string): ApiError {
  return errors.badRequest(message);
}
