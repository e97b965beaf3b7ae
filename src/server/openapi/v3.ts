// OpenAPI v3 documents: one per group version (plus the discovery roots), each
// holding only its own paths and the schemas reachable from them.

import type { KindDefinition } from '../../api/kind.js';
import { bearerTokenScheme, operationExtensions, responseDescription, securityRequirement, type DocumentInfo } from './common.js';
import { definitionSchemas, groupVersionKinds, renderDefinition } from './definitions.js';
import { pathParameter, queryParameter } from './parameters.js';
import type { Operation, Route } from './routes.js';
import { collectRefs, refPrefix, type Json } from './translate.js';

const ref = (definition: string) => ({ $ref: refPrefix('v3') + definition });

function content(mediaTypes: string[], definition: string): Json {
  const out: Json = {};
  for (const mt of mediaTypes) out[mt] = { schema: ref(definition) };
  return out;
}

function renderOperation(op: Operation): Json {
  const out: Json = { tags: [op.tag], description: op.description, operationId: op.operationId };
  const parameters = op.query.map((q) => queryParameter(q, 'v3'));
  if (parameters.length > 0) out.parameters = parameters;
  if (op.body) out.requestBody = { content: content(op.consumes, op.body.definition), required: op.body.required };
  const responses: Json = {};
  for (const r of op.responses) {
    responses[r.code] = r.definition
      ? { description: responseDescription(r.code), content: content(op.produces, r.definition) }
      : { description: responseDescription(r.code) };
  }
  out.responses = responses;
  if (op.deprecated) out.deprecated = true;
  return Object.assign(out, operationExtensions(op));
}

function renderPathItem(route: Route): Json {
  const item: Json = {};
  for (const op of route.operations) item[op.method] = renderOperation(op);
  const params = route.pathParams.map((p) => pathParameter(p, route.kind ?? '', 'v3'));
  if (route.kind) params.push(queryParameter('pretty', 'v3'));
  if (params.length > 0) item.parameters = params;
  return item;
}

/** Names reachable from `roots` through `$ref`s, following definitions transitively. */
function reachable(roots: Set<string>, rendered: (name: string) => Json | undefined): Map<string, Json> {
  const out = new Map<string, Json>();
  const queue = [...roots];
  while (queue.length > 0) {
    const name = queue.pop()!;
    if (out.has(name)) continue;
    const schema = rendered(name);
    if (!schema) continue; // a dangling reference; the unit tests keep the catalog free of them
    out.set(name, schema);
    for (const next of collectRefs(schema, 'v3', new Set())) if (!out.has(next)) queue.push(next);
  }
  return out;
}

/** Document key (`api/v1`, `apis/<g>/<v>`, `api`, `apis`, `apis/<g>`) -> v3 document. */
export function buildV3(kinds: KindDefinition[], routes: Route[], info: DocumentInfo): Map<string, Json> {
  const schemas = definitionSchemas(kinds);
  const gvks = groupVersionKinds(kinds);
  const cache = new Map<string, Json>();
  const rendered = (name: string): Json | undefined => {
    if (!cache.has(name)) {
      const schema = schemas.get(name);
      if (!schema) return undefined;
      cache.set(name, renderDefinition(schema, gvks.get(name), 'v3'));
    }
    return cache.get(name);
  };

  const byDoc = new Map<string, Route[]>();
  for (const route of routes) byDoc.set(route.doc, [...(byDoc.get(route.doc) ?? []), route]);

  const docs = new Map<string, Json>();
  for (const key of [...byDoc.keys()].sort()) {
    const paths: Json = {};
    for (const route of byDoc.get(key)!) paths[route.path] = renderPathItem(route);
    const used = reachable(collectRefs(paths, 'v3', new Set()), rendered);
    const componentSchemas: Json = {};
    for (const name of [...used.keys()].sort()) componentSchemas[name] = used.get(name);
    docs.set(key, {
      openapi: '3.0.0',
      info: { title: info.title, version: info.version },
      paths,
      components: { schemas: componentSchemas, securitySchemes: { BearerToken: bearerTokenScheme } },
      security: securityRequirement,
    });
  }
  return docs;
}
