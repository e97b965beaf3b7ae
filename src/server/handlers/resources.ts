// The resource handler: finds the REST object a resource path names and
// calls the capability its verb needs (405 when it has none), then turns the
// result into a response. Knows nothing of authentication, nor of which
// sub-resources exist.

import { errors, fieldErrors } from '../../machinery/errors.js';
import type { KindDefinition, KubeObject, Verb } from '../../api/kind.js';
import type { Registry } from '../../registry/registry.js';
import type { ListOptions, Sent, WriteOptions } from '../../registry/store.js';
import { capabilityOf, type Capabilities, type RestDescription, type RestObject, type RestPath } from '../../registry/rest.js';
import { materializeList, StoredObject, type StoredList } from '../../registry/objects.js';
import type { WatchSink } from '../../registry/watch.js';
import { builtinSchemaLookup, type SchemaLookup } from '../../api/protobuf/index.js';
import { bodyFormat, readBody } from '../negotiation.js';
import { parseBody, readJson, readYaml } from '../../api/wire.js';
import type { PatchType } from '../../registry/patch.js';
import { productApiVersionForUpstream } from '../../machinery/vocabulary.js';
import { negotiate, parseIncludeObject, respond, respondStored } from '../representation.js';
import type { RequestContext } from '../filters.js';
import { serveWatch } from './watch.js';
import { integerParam, queryBool } from '../params.js';
import { deleteOptions, listOptions, requestScope, writeOptions } from './options.js';
import { storedAsTheirs, upstreamNameOf } from './clientversion.js';
import type { UpstreamName } from '../../api/codec.js';

const patchTypes: Record<string, PatchType> = {
  'application/json-patch+json': 'json',
  'application/merge-patch+json': 'merge',
  'application/strategic-merge-patch+json': 'strategic',
  'application/apply-patch+yaml': 'apply',
};

function patchTypeOf(contentType: string | undefined): PatchType {
  const essence = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const type = patchTypes[essence];
  if (!type) throw errors.unsupportedMediaType(contentType ?? '', Object.keys(patchTypes));
  return type;
}

async function servePatch(scope: RequestContext, rest: RestObject, path: RestPath, client?: UpstreamName): Promise<{ object: KubeObject; created: boolean; warnings: string[] }> {
  const { query } = scope;
  const type = patchTypeOf(scope.req.headers['content-type']);
  const opts = writeOptions(scope, 'PatchOptions');
  const force = query.get('force');
  if (queryBool(query, 'force')) opts.force = true;
  if (type === 'apply') {
    if (!query.get('fieldManager')) {
      throw errors.invalidOptions('PatchOptions', [fieldErrors.required('fieldManager', 'is required for apply patch')]);
    }
  } else if (force !== null) {
    throw errors.invalidOptions('PatchOptions', [fieldErrors.forbidden('force', 'may not be specified for non-apply patch')]);
  }
  const raw = await readBody(scope.req);
  const text = raw.toString('utf8');
  // Repeated keys of an apply (YAML) or merge patch matter unless fieldValidation=Ignore.
  const findDuplicates = type !== 'json' && opts.fieldValidation !== 'Ignore';
  const body = type === 'apply' ? readYaml(text, findDuplicates) : readJson(text, findDuplicates);
  scope.audit?.keepRequestObject(body.value);
  // An apply configuration (or a merge patch) that names the client's version is one in ours.
  const value = client ? client.bodyAsOurs(body.value) : body.value;
  const request = requestScope(scope);
  const result = await rest.patch!(path, { type, value, duplicates: body.duplicates }, opts, request);
  return { ...result, warnings: request.warnings };
}

/**
 * Protobuf bodies decode against the kinds that declare protobuf (and
 * DeleteOptions), stored or only answered (a token request), also when a
 * typed upstream client names the kind's group by its upstream name; custom
 * kinds get 415, as upstream. Rebuilt when the registry changes.
 */
function protobufSchemas(registry: Registry): SchemaLookup {
  let schemaCache = schemaCaches.get(registry);
  if (schemaCache?.generation !== registry.generation) {
    const kinds = new Set([...registry.kinds, ...registry.restObjects().map((r) => r.describe.kind)]);
    const lookup = builtinSchemaLookup([...kinds].filter((k) => k.protobuf));
    schemaCache = {
      generation: registry.generation,
      lookup: (apiVersion, kind) => {
        const ours = lookup(apiVersion, kind);
        if (ours) return ours;
        const aliased = productApiVersionForUpstream(apiVersion);
        return aliased === undefined ? undefined : lookup(aliased, kind);
      },
    };
    schemaCaches.set(registry, schemaCache);
  }
  return schemaCache.lookup;
}
/** Per registry (several servers may run in one process), rebuilt when its generation moves. */
const schemaCaches = new WeakMap<Registry, { generation: number; lookup: SchemaLookup }>();

async function readObjectBody(scope: RequestContext, registry: Registry, kind: KindDefinition, opts: WriteOptions, client?: UpstreamName): Promise<Sent> {
  const raw = await readBody(scope.req);
  const format = bodyFormat(scope.req.headers['content-type']);
  // Repeated keys matter unless fieldValidation=Ignore: looked for only then.
  const body = parseBody(raw, format, kind.protobuf ? protobufSchemas(registry) : undefined, opts.fieldValidation !== 'Ignore');
  scope.audit?.keepRequestObject(body.value);
  return client ? { ...body, value: client.bodyAsOurs(body.value) } : body;
}

/** Node's timers hold at most 2^31-1 ms (about 24.8 days); longer asks wait that long, never zero. */
const maxWatchTimeoutSeconds = Math.floor((2 ** 31 - 1) / 1000);

/** timeoutSeconds of a watch: unset or 0 leaves the server's spread default. */
function watchTimeoutSeconds(query: URLSearchParams): number | undefined {
  const seconds = integerParam(query, 'timeoutSeconds');
  if (seconds === undefined || seconds === 0) return undefined;
  return Math.max(0, Math.min(seconds, maxWatchTimeoutSeconds));
}

/** The REST capability serving a verb, or 405 when the object has none. */
function capability<K extends keyof Capabilities>(rest: RestObject, name: K): Capabilities[K] {
  const f = rest[name];
  if (typeof f !== 'function') throw errors.methodNotAllowed();
  return f as Capabilities[K];
}

/**
 * Serves one resource request through the REST object its path names;
 * `found` hears of that object first (the deprecation signals).
 */
export async function serveResource(registry: Registry, scope: RequestContext, found?: (rest: RestObject, scope: RequestContext) => void): Promise<void> {
  const { query, res } = scope;
  const info = scope.info!;
  const rest = registry.rest(info.apiGroup, info.apiVersion, info.resource!, info.subresource);
  if (!rest) throw errors.noSuchResource();
  found?.(rest, scope);
  const d = rest.describe;
  // A cluster-scoped resource has no namespaced paths (a namespace's own path sets namespace too, as upstream).
  const ownNamespacePath = d.parentKind.group === '' && d.resource === 'namespaces';
  if (!d.namespaced && info.namespace !== undefined && !ownNamespacePath) throw errors.noSuchResource();
  const path: RestPath = { namespace: d.namespaced ? info.namespace : undefined, name: info.name };
  if (d.namespaced && info.name !== undefined && path.namespace === undefined) throw errors.noSuchResource();
  // Sub-resources are served on a named object only.
  if (d.subresource !== undefined && info.name === undefined) throw errors.noSuchResource();
  const verb = info.verb as Verb;
  if (!(verb in capabilityOf)) throw errors.methodNotAllowed();
  const readVerb = verb === 'get' || verb === 'list' || verb === 'watch';
  // Tables and metadata views for stored kinds, and for made ones that declare columns (component statuses).
  const rep = negotiate(scope.req.headers.accept, { protobuf: d.kind.protobuf, views: readVerb && (d.stored || d.kind.printerColumns.length > 0), stream: verb === 'watch' });
  scope.representation = rep;
  const pretty = queryBool(query, 'pretty') ?? false;
  const include = parseIncludeObject(query.get('includeObject'));
  const client = upstreamNameOf(info);
  // Audit at RequestResponse logs the answer's object whatever its wire format (a Table is logged as sent).
  const audited = rep.view === 'object' ? scope.audit : undefined;
  const reply = (code: number, obj: KubeObject, warnings?: string[]) => {
    const out = client ? client.answerAsTheirs(obj) : obj;
    audited?.keepResponseObject(() => out);
    respond(res, code, out, rep, { pretty, warnings, kind: d.kind, include });
  };
  const replyStored = (value: StoredObject | StoredList) => {
    if (client) return reply(200, storedAsTheirs(value, client));
    audited?.keepResponseObject(() => (value instanceof StoredObject ? value.object : materializeList(value)));
    respondStored(res, 200, value, rep, { pretty, kind: d.kind, include });
  };

  if (rest.connector) {
    if (!rest.connector.verbs.includes(verb)) throw errors.methodNotAllowed();
    await registry.admitConnect(rest, { ...path, query }, requestScope(scope));
    // After admission and before the sub-resource does anything, as upstream's Connect.
    if (rest.connector.requiresCreate && verb !== 'create') await authorizedToCreate(scope);
    const answer = await rest.connector.connect({ ...path, query }, verb);
    if ('text' in answer && typeof answer.text === 'string' && !('kind' in answer)) {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end(answer.text);
      return;
    }
    return reply(200, answer as KubeObject);
  }

  switch (verb) {
    case 'get': {
      // Stored objects go out from their stored bytes; made ones (a view such as scale) are encoded.
      const value = await capability(rest, 'get')(path, query.get('resourceVersion'));
      return value instanceof StoredObject ? replyStored(value) : reply(200, value);
    }
    case 'list': {
      // A list at the stored version goes out from the stored bytes; one converted to another version is an object.
      const value = await capability(rest, 'list')(path, listOptions(query));
      // Lists made when asked (component statuses) are objects too.
      return d.codec || !d.stored ? reply(200, value as KubeObject) : replyStored(value as StoredList);
    }
    case 'watch': {
      const watch = capability(rest, 'watch');
      // The legacy /watch/…/{name} path watches one object: a name field selector, as upstream.
      const list = listOptions(query);
      if (info.name !== undefined) {
        const byName = `metadata.name=${info.name.replace(/[\\,=]/g, (c) => `\\${c}`)}`;
        list.fieldSelector = list.fieldSelector ? `${list.fieldSelector},${byName}` : byName;
      }
      const source = { kind: d.kind, codec: d.codec, watch: (namespace: string | undefined, opts: ListOptions, sink: WatchSink) => watch({ namespace }, opts, sink) };
      return serveWatch(source, res, rep, {
        namespace: path.namespace,
        list,
        allowBookmarks: queryBool(query, 'allowWatchBookmarks') ?? false,
        timeoutSeconds: watchTimeoutSeconds(query),
        include,
        client,
        log: scope.log,
        hooks: scope.watchHooks,
      });
    }
    case 'create': {
      const create = capability(rest, 'create');
      // A POST names an object only when it goes to a sub-resource (a token request).
      if (info.name !== undefined && d.subresource === undefined) throw errors.methodNotAllowed();
      const opts = writeOptions(scope, 'CreateOptions');
      const request = requestScope(scope);
      const obj = await create(path, await readObjectBody(scope, registry, d.kind, opts, client), opts, request);
      return reply(201, obj, request.warnings);
    }
    case 'update': {
      const update = capability(rest, 'update');
      const opts = writeOptions(scope, 'UpdateOptions');
      const request = requestScope(scope);
      const { object, created } = await update(path, await readObjectBody(scope, registry, d.kind, opts, client), opts, request);
      return reply(created ? 201 : 200, object, request.warnings);
    }
    case 'patch': {
      capability(rest, 'patch');
      if (info.name === undefined) throw errors.methodNotAllowed();
      const { object, created, warnings } = await servePatch(scope, rest, path, client);
      return reply(created ? 201 : 200, object, warnings);
    }
    case 'delete': {
      const del = capability(rest, 'delete');
      const options = await deleteOptions(scope, protobufSchemas(registry));
      writeOptions(scope, 'DeleteOptions'); // the query's options are checked as for any write
      const request = requestScope(scope);
      const { object, removed } = await del(path, options, request);
      // 202 when the object stays for its dependents and the client asked for them to go (as upstream).
      if (!removed) return reply(options.orphanDependents === false ? 202 : 200, object, request.warnings);
      if (d.deleteAnswersObject) return reply(200, object, request.warnings);
      return reply(200, successStatus(d, object.metadata?.name, object.metadata?.uid), request.warnings);
    }
    case 'deletecollection': {
      const deleteCollection = capability(rest, 'deleteCollection');
      const options = await deleteOptions(scope, protobufSchemas(registry));
      writeOptions(scope, 'DeleteOptions'); // the query's options are checked as for any write
      const request = requestScope(scope);
      // The answer is the list of what was deleted, as upstream.
      return reply(200, await deleteCollection(path, listOptions(query), options, request), request.warnings);
    }
    default:
      throw errors.methodNotAllowed();
  }
}

/** A connect sub-resource reached by another verb than create is also authorized as create; fails closed without an authorizer. */
async function authorizedToCreate(scope: RequestContext): Promise<void> {
  const info = scope.info!;
  if (!scope.authorizeVerb) throw errors.internal('no authorizer available');
  const d = await scope.authorizeVerb('create');
  if (d.decision !== 'allow') throw errors.forbidden({ group: info.apiGroup, resource: info.resource! }, info.name, d.reason ?? '');
}

function successStatus(d: RestDescription, name?: string, uid?: string): KubeObject {
  const details: Record<string, string> = {};
  if (name) details.name = name;
  if (d.group) details.group = d.group;
  details.kind = d.resource;
  if (uid) details.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}
