// The two ways a webhook call goes wrong, as upstream tells them apart: the
// webhook could not be called or answered nonsense (a CallingWebhookError,
// which the failure policy may ignore), or it rejected the request (an
// ApiError built from its status, which always stands).

import { ApiError } from '../../machinery/errors.js';
import { hasOwn } from '../../machinery/ownkeys.js';
import type { StatusCause, StatusDetails, StatusReason } from '../../machinery/errors.js';
import { qualifiedOf } from '../errors.js';
import type { AdmissionRequest } from '../types.js';

export class CallingWebhookError extends Error {
  override name = 'CallingWebhookError';
  constructor(
    readonly webhook: string,
    /** What went wrong, e.g. `failed to call webhook: Post "https://…": context deadline exceeded`. */
    readonly reason: string,
    /** The HTTP code the failure stands for (the webhook's own, or 503 when it gave none), for metrics. */
    readonly code: number = 503,
  ) {
    super(`failed calling webhook "${webhook}": ${reason}`);
  }
}

/** The status a webhook sent with its rejection, as far as it is well formed. */
export interface WebhookStatus {
  code?: number;
  message?: string;
  reason?: string;
  details?: StatusDetails;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** Keeps the Status fields a webhook may set and that have the right types. */
export function webhookStatus(raw: unknown): WebhookStatus {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
  const r = raw as Record<string, unknown>;
  const status: WebhookStatus = {};
  if (hasOwn(r, 'code') && Number.isInteger(r.code)) status.code = r.code as number;
  status.message = text(hasOwn(r, 'message') ? r.message : undefined);
  status.reason = text(hasOwn(r, 'reason') ? r.reason : undefined);
  const d = hasOwn(r, 'details') ? r.details : undefined;
  if (typeof d === 'object' && d !== null && !Array.isArray(d)) {
    const details = d as Record<string, unknown>;
    const kept: StatusDetails = {};
    for (const key of ['name', 'group', 'kind', 'uid'] as const) {
      const value = hasOwn(details, key) ? text(details[key]) : undefined;
      if (value !== undefined) kept[key] = value;
    }
    const causes = hasOwn(details, 'causes') ? details.causes : undefined;
    if (Array.isArray(causes)) {
      kept.causes = causes.filter((c) => typeof c === 'object' && c !== null).map((c: Record<string, unknown>) => {
        const cause: StatusCause = {};
        for (const key of ['reason', 'message', 'field'] as const) {
          const value = hasOwn(c, key) ? text(c[key]) : undefined;
          if (value !== undefined) cause[key] = value;
        }
        return cause;
      });
    }
    status.details = kept;
  }
  return status;
}

/** A webhook's rejection; `metricCode` is the code it sent (403 when none), for the rejection counter. */
export class WebhookRejection extends ApiError {
  constructor(code: number, reason: StatusReason, message: string, details: StatusDetails, readonly metricCode: number) {
    super(code, reason, message, details);
  }
}

/**
 * The HTTP code a rejection answers with. No code is 403 (the spec). A code
 * below 400 would tell the client the request went through, so it is 400.
 * Codes of 400 and above are the webhook's, as upstream writes them on the
 * status line; past 999 no HTTP status line can carry the code (upstream's
 * response writer panics and the request ends in a 500), so it is a 500.
 */
export function rejectionCode(code: number | undefined): number {
  if (code === undefined || code === 0) return 403;
  if (code < 400) return 400;
  return code > 999 ? 500 : code;
}

/**
 * The error a rejection by webhook `webhook` answers with (upstream's
 * ToStatusErr): the webhook's code (403 by default) and reason, its message
 * after `admission webhook "<name>" denied the request`, prefixed as a 403
 * (or a 500) about the request's object.
 */
export function rejectionError(request: AdmissionRequest, webhook: string, status: WebhookStatus): WebhookRejection {
  const code = rejectionCode(status.code);
  const deniedBy = `admission webhook "${webhook}" denied the request`;
  const why = status.message ?? status.reason;
  const message = why !== undefined ? `${deniedBy}: ${why}` : `${deniedBy} without explanation`;
  const name = request.name || 'Unknown';
  const q = qualifiedOf(request);
  const internal = code === 500;
  const details: StatusDetails = status.details ?? (internal ? { causes: [{ message }] } : { ...(q.group ? { group: q.group } : {}), kind: q.resource, name });
  const prefix = internal ? 'Internal error occurred' : `${q.group ? `${q.resource}.${q.group}` : q.resource} "${name}" is forbidden`;
  const reason = (status.reason ?? (internal ? 'InternalError' : 'Forbidden')) as StatusReason;
  return new WebhookRejection(code, reason, `${prefix}: ${message}`, details, status.code || 403);
}
