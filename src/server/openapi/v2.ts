// The OpenAPI v2 (Swagger 2.0) document: every route and every definition in one.

import type { KindDefinition } from '../../api/kind.js';
import { bearerTokenScheme, operationExtensions, responseDescription, securityRequirement, type DocumentInfo } from './common.js';
import { renderDefinitions } from './definitions.js';
import { pathParameter, queryParameter } from './parameters.js';
import type { Operation, Route } from './routes.js';
import { refPrefix, type Json } from './translate.js';

const ref = (definition: string) => ({ $ref: refPrefix('v2') + definition });

function renderOperation(op: Operation): Json {
  const parameters: Json[] = [];
  if (op.body) parameters.push({ name: 'body', in: 'body', required: op.body.required, schema: ref(op.body.definition) });
  for (const q of op.query) parameters.push(queryParameter(q, 'v2'));
  const responses: Json = {};
  for (const r of op.responses) {
    responses[r.code] = r.definition ? { description: responseDescription(r.code), schema: ref(r.definition) } : { description: responseDescription(r.code) };
  }
  const out: Json = {
    description: op.description,
    consumes: op.consumes,
    produces: op.produces,
    schemes: ['https'],
    tags: [op.tag],
    operationId: op.operationId,
  };
  if (parameters.length > 0) out.parameters = parameters;
  out.responses = responses;
  if (op.deprecated) out.deprecated = true;
  return Object.assign(out, operationExtensions(op));
}

function renderPathItem(route: Route): Json {
  const item: Json = {};
  for (const op of route.operations) item[op.method] = renderOperation(op);
  const params = pathParameters(route);
  if (params.length > 0) item.parameters = params;
  return item;
}

function pathParameters(route: Route): Json[] {
  const params = route.pathParams.map((p) => pathParameter(p, route.kind ?? '', 'v2'));
  // Discovery routes take no parameters; resource routes share `pretty`.
  if (route.kind) params.push(queryParameter('pretty', 'v2'));
  return params;
}

export function buildV2(kinds: KindDefinition[], routes: Route[], info: DocumentInfo): Json {
  const paths: Json = {};
  for (const route of routes) paths[route.path] = renderPathItem(route);
  return {
    swagger: '2.0',
    info: { title: info.title, version: info.version },
    paths,
    definitions: renderDefinitions(kinds, 'v2'),
    securityDefinitions: { BearerToken: bearerTokenScheme },
    security: securityRequirement,
  };
}
