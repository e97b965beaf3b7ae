// Pieces shared by the v2 and v3 renderers.

import { ext, upstreamExt } from './names.js';
import type { Operation, Response } from './routes.js';
import type { Json } from './translate.js';

export interface DocumentInfo {
  title: string;
  version: string;
}

const responseText: Record<Response['code'], string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '401': 'Unauthorized',
};

export function responseDescription(code: Response['code']): string {
  return responseText[code];
}

/** Action and kind identity of an operation, under our names and the upstream ones. */
export function operationExtensions(op: Operation): Json {
  const out: Json = {};
  if (op.action) {
    out[upstreamExt.action] = op.action;
    out[ext.action] = op.action;
  }
  if (op.gvk) {
    out[upstreamExt.gvk] = { group: op.gvk.group, kind: op.gvk.kind, version: op.gvk.version };
    out[ext.gvk] = { group: op.gvk.group, kind: op.gvk.kind, version: op.gvk.version };
  }
  return out;
}

/** Clients authenticate with a bearer token in the Authorization header (or a client certificate). */
export const bearerTokenScheme = {
  type: 'apiKey',
  description: 'Bearer token authentication',
  name: 'authorization',
  in: 'header',
};

export const securityRequirement = [{ BearerToken: [] as string[] }];
