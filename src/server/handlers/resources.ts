// The resource handler: turns a resource request into a call on the kind's
// store and the result into a response. Knows nothing of authentication.

import { errors, fieldErrors } from '../../machinery/errors.js';
import type { KubeObject, Verb } from '../../api/kind.js';
import type { Registry } from '../../registry/registry.js';
import type { ResourceStore, WriteOptions } from '../../registry/store.js';
import { builtinKinds } from '../../api/catalog.js';
import { builtinSchemaLookup } from '../protobuf/index.js';
import { bodyFormat, decodeBody, parseJson, parseYaml, readBody } from '../negotiation.js';
import type { PatchType } from '../../registry/patch.js';
import { findDuplicateFields } from '../../machinery/duplicates.js';
import { negotiate, parseIncludeObject, respond, respondStored } from '../representation.js';
import type { RequestContext } from '../filters.js';
import { serveWatch } from './watch.js';
import { integerParam, queryBool } from '../params.js';
import { deleteOptions, listOptions, writeOptions } from './options.js';

/** Verbs this handler serves; discovery offers the intersection with each kind's verbs. */
export const servedVerbs: ReadonlySet<Verb> = new Set<Verb>(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);


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

async function servePatch(scope: RequestContext, store: ResourceStore, namespace: string | undefined): Promise<{ object: KubeObject; created: boolean; warnings: string[] }> {
  const { query } = scope;
  const info = scope.info!;
  const type = patchTypeOf(scope.req.headers['content-type']);
  const opts = writeOptions(scope, 'PatchOptions');
  const force = query.get('force');
  if (type === 'apply') {
    if (!query.get('fieldManager')) {
      throw errors.invalidOptions('PatchOptions', [fieldErrors.required('fieldManager', 'is required for apply patch')]);
    }
  } else if (force !== null) {
    throw errors.invalidOptions('PatchOptions', [fieldErrors.forbidden('force', 'may not be specified for non-apply patch')]);
  }
  const text = (await readBody(scope.req)).toString('utf8');
  const body = type === 'apply' ? parseYaml(text) : parseJson(text);
  if (type !== 'json' && text.trimStart().startsWith('{')) noteDuplicates(text, opts);
  const result = await store.patch(namespace, info.name!, type, body, opts, { force: queryBool(query, 'force') ?? false }, info.subresource);
  return { ...result, warnings: opts.warnings };
}

/** Protobuf bodies decode against the built-in kinds (and DeleteOptions); custom kinds get 415, as upstream. */
const builtinProtobufSchemas = builtinSchemaLookup(builtinKinds);

async function readObjectBody(scope: RequestContext, store: ResourceStore, opts: WriteOptions): Promise<unknown> {
  const raw = await readBody(scope.req);
  const schemas = builtinKinds.includes(store.kind) ? builtinProtobufSchemas : undefined;
  const format = bodyFormat(scope.req.headers['content-type']);
  const body = decodeBody(raw, format, schemas);
  if (format === 'json') noteDuplicates(raw.toString('utf8'), opts);
  return body;
}

/** Repeated keys in a JSON body matter unless fieldValidation=Ignore; look only then. */
function noteDuplicates(text: string, opts: WriteOptions): void {
  if (opts.fieldValidation !== 'Ignore') opts.duplicateFields = findDuplicateFields(text);
}

function servesSubresource(store: ResourceStore, subresource: string): boolean {
  return (subresource === 'status' && !!store.kind.subresources.status) || (subresource === 'finalize' && !!store.kind.subresources.finalize);
}

/** Node's timers hold at most 2^31-1 ms (about 24.8 days); longer asks wait that long, never zero. */
const maxWatchTimeoutSeconds = Math.floor((2 ** 31 - 1) / 1000);

/** timeoutSeconds of a watch: unset or 0 leaves the server's spread default. */
function watchTimeoutSeconds(query: URLSearchParams): number | undefined {
  const seconds = integerParam(query, 'timeoutSeconds');
  if (seconds === undefined || seconds === 0) return undefined;
  return Math.max(0, Math.min(seconds, maxWatchTimeoutSeconds));
}

/** Serves one resource request. */
export async function serveResource(registry: Registry, scope: RequestContext): Promise<void> {
  const { query, res } = scope;
  const info = scope.info!;
  const store = registry.store(info.apiGroup, info.apiVersion, info.resource!);
  if (!store) throw errors.noSuchResource();
  // A cluster-scoped kind has no namespaced paths (the namespace object's own path sets namespace too).
  const pathNamespace = store.namespaced ? info.namespace : undefined;
  if (!store.namespaced && info.namespace !== undefined && info.resource !== 'namespaces') throw errors.noSuchResource();
  if (info.subresource !== undefined && !servesSubresource(store, info.subresource)) throw errors.noSuchResource();
  if (info.subresource === 'finalize' && info.verb !== 'update') throw errors.methodNotAllowed();
  if (info.subresource === 'status' && !['get', 'update', 'patch'].includes(info.verb)) throw errors.methodNotAllowed();
  const verb = info.verb as Verb;
  if (!servedVerbs.has(verb) || !store.kind.verbs.includes(verb)) throw errors.methodNotAllowed();
  if (store.namespaced && info.name !== undefined && pathNamespace === undefined) throw errors.noSuchResource();
  const builtin = builtinKinds.includes(store.kind);
  const readVerb = verb === 'get' || verb === 'list' || verb === 'watch';
  const rep = negotiate(scope.req.headers.accept, { protobuf: builtin, views: readVerb, stream: verb === 'watch' });
  scope.representation = rep;
  const pretty = queryBool(query, 'pretty') ?? false;
  const include = parseIncludeObject(query.get('includeObject'));
  const reply = (code: number, obj: KubeObject, warnings?: string[]) =>
    respond(res, code, obj, rep, { pretty, warnings, kind: store.kind, include });

  switch (verb) {
    case 'get':
      return respondStored(res, 200, await store.getStored(pathNamespace, info.name!, query.get('resourceVersion')), rep, { pretty, kind: store.kind, include });
    case 'watch': {
      // The legacy /watch/…/{name} path watches one object: a name field selector, as upstream.
      const list = listOptions(query);
      if (info.name !== undefined) {
        const byName = `metadata.name=${info.name.replace(/[\\,=]/g, (c) => `\\${c}`)}`;
        list.fieldSelector = list.fieldSelector ? `${list.fieldSelector},${byName}` : byName;
      }
      return serveWatch(store, res, rep, {
        namespace: pathNamespace,
        list,
        allowBookmarks: queryBool(query, 'allowWatchBookmarks') ?? false,
        timeoutSeconds: watchTimeoutSeconds(query),
        include,
      });
    }
    case 'patch': {
      if (info.name === undefined) throw errors.methodNotAllowed();
      const { object, created, warnings } = await servePatch(scope, store, pathNamespace);
      return reply(created ? 201 : 200, object, warnings);
    }
    case 'list':
      return respondStored(res, 200, await store.listStored(pathNamespace, listOptions(query)), rep, { pretty, kind: store.kind, include });
    case 'create': {
      if (info.name !== undefined) throw errors.methodNotAllowed();
      const opts = writeOptions(scope, 'CreateOptions');
      const obj = await store.create(pathNamespace, await readObjectBody(scope, store, opts), opts);
      return reply(201, obj, opts.warnings);
    }
    case 'update': {
      const opts = writeOptions(scope, 'UpdateOptions');
      const { object, created } = await store.update(pathNamespace, info.name!, await readObjectBody(scope, store, opts), opts, info.subresource);
      return reply(created ? 201 : 200, object, opts.warnings);
    }
    case 'delete': {
      const options = await deleteOptions(scope, builtinProtobufSchemas);
      const opts = writeOptions(scope, 'DeleteOptions');
      opts.dryRun = options.dryRun.length > 0;
      const { object, removed } = await store.delete(pathNamespace, info.name!, options, opts);
      // 202 when the object stays for its dependents and the client asked for them to go (as upstream).
      if (!removed) return reply(options.orphanDependents === false ? 202 : 200, object, opts.warnings);
      if (store.kind.deleteReturnsObject) return reply(200, object, opts.warnings);
      return reply(200, successStatus(store, object.metadata?.name, object.metadata?.uid), opts.warnings);
    }
    case 'deletecollection': {
      const options = await deleteOptions(scope, builtinProtobufSchemas);
      const opts = writeOptions(scope, 'DeleteOptions');
      opts.dryRun = options.dryRun.length > 0;
      // The answer is the list of what was deleted, as upstream.
      return reply(200, await store.deleteCollection(pathNamespace, listOptions(query), options, opts), opts.warnings);
    }
    default:
      throw errors.methodNotAllowed();
  }
}

function successStatus(store: ResourceStore, name?: string, uid?: string): KubeObject {
  const details: Record<string, string> = {};
  if (name) details.name = name;
  if (store.kind.group) details.group = store.kind.group;
  details.kind = store.kind.plural;
  if (uid) details.uid = uid;
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details };
}

