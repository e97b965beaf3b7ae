// The resource handler: turns a resource request into a call on the kind's
// store and the result into a response. Knows nothing of authentication.

import { errors, fieldErrors } from '../../machinery/errors.js';
import { vocabulary } from '../../machinery/vocabulary.js';
import type { KubeObject, Verb } from '../../api/kind.js';
import type { Registry } from '../../registry/registry.js';
import type { DeleteOptions, FieldValidation, ListOptions, ResourceStore, WriteOptions } from '../../registry/store.js';
import { builtinKinds } from '../../api/catalog.js';
import { builtinSchemaLookup } from '../protobuf/index.js';
import { bodyFormat, decodeBody, parseBody, readBody, readJson, readYaml } from '../negotiation.js';
import { managerFromUserAgent, validateFieldManager } from '../../machinery/managedfields/index.js';
import type { PatchType } from '../../registry/patch.js';
import { negotiate, parseIncludeObject, respond, respondStored } from '../representation.js';
import type { RequestContext } from '../filters.js';
import { serveWatch } from './watch.js';

/** Verbs this handler serves; discovery offers the intersection with each kind's verbs. */
export const servedVerbs: ReadonlySet<Verb> = new Set<Verb>(['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch']);


function isTrue(v: string | null): boolean {
  return v === 'true' || v === '1';
}

function writeOptions(scope: RequestContext, optionsKind: string): WriteOptions {
  const query = scope.query;
  const dryRun = query.getAll('dryRun');
  for (const v of dryRun) {
    if (v !== 'All') throw errors.invalidOptions(optionsKind, [fieldErrors.notSupported('dryRun', v, ['All'])]);
  }
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
  return { dryRun: dryRun.length > 0, fieldValidation: fv as FieldValidation, warnings: [], user: scope.user, manager };
}

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
  // Repeated keys of an apply (YAML) or merge patch matter unless fieldValidation=Ignore.
  const findDuplicates = type !== 'json' && opts.fieldValidation !== 'Ignore';
  const body = type === 'apply' ? readYaml(text, findDuplicates) : readJson(text, findDuplicates);
  opts.duplicates = body.duplicates;
  const result = await store.patch(namespace, info.name!, type, body.value, opts, { force: isTrue(force) }, info.subresource);
  return { ...result, warnings: opts.warnings };
}

function integerParam(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  if (!/^-?\d+$/.test(v)) throw errors.badRequest(`invalid value for ${name}: ${JSON.stringify(v)}: must be an integer`);
  return Number(v);
}

function listOptions(query: URLSearchParams): ListOptions {
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

async function deleteOptions(scope: RequestContext): Promise<DeleteOptions & { dryRunBody?: string[] }> {
  const raw = await readBody(scope.req);
  let body: Record<string, any> = {};
  if (raw.length > 0) {
    const decoded = decodeBody(raw, bodyFormat(scope.req.headers['content-type']), builtinProtobufSchemas);
    if (decoded !== null && (typeof decoded !== 'object' || Array.isArray(decoded))) throw errors.badRequest('the body of a delete request must be a DeleteOptions object');
    body = (decoded as Record<string, any>) ?? {};
  }
  const grace = integerParam(scope.query, 'gracePeriodSeconds') ?? body.gracePeriodSeconds;
  const policy = scope.query.get('propagationPolicy') ?? body.propagationPolicy;
  if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy)) {
    throw errors.invalidOptions('DeleteOptions', [fieldErrors.notSupported('propagationPolicy', policy, ['Foreground', 'Background', 'Orphan'])]);
  }
  const orphan = scope.query.get('orphanDependents');
  return {
    gracePeriodSeconds: grace,
    preconditions: body.preconditions,
    propagationPolicy: policy,
    orphanDependents: orphan !== null ? isTrue(orphan) : body.orphanDependents,
    dryRunBody: body.dryRun,
  };
}

/** Protobuf bodies decode against the built-in kinds (and DeleteOptions); custom kinds get 415, as upstream. */
const builtinProtobufSchemas = builtinSchemaLookup(builtinKinds);

async function readObjectBody(scope: RequestContext, store: ResourceStore, opts: WriteOptions): Promise<unknown> {
  const raw = await readBody(scope.req);
  const schemas = builtinKinds.includes(store.kind) ? builtinProtobufSchemas : undefined;
  const format = bodyFormat(scope.req.headers['content-type']);
  // Repeated keys matter unless fieldValidation=Ignore: looked for only then.
  const body = parseBody(raw, format, schemas, opts.fieldValidation !== 'Ignore');
  opts.duplicates = body.duplicates;
  opts.numberText = body.numberText;
  return body.value;
}

function servesSubresource(store: ResourceStore, subresource: string): boolean {
  return (subresource === 'status' && !!store.kind.subresources.status) || (subresource === 'finalize' && !!store.kind.subresources.finalize);
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
  const pretty = isTrue(query.get('pretty'));
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
        allowBookmarks: isTrue(query.get('allowWatchBookmarks')),
        timeoutSeconds: integerParam(query, 'timeoutSeconds'),
        include,
        log: scope.log,
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
      const options = await deleteOptions(scope);
      const opts = writeOptions(scope, 'DeleteOptions');
      if (options.dryRunBody?.length) opts.dryRun = true;
      const { object, removed } = await store.delete(pathNamespace, info.name!, options, opts);
      // 202 when the object stays for its dependents and the client asked for them to go (as upstream).
      if (!removed) return reply(options.orphanDependents === false ? 202 : 200, object, opts.warnings);
      if (store.kind.deleteReturnsObject) return reply(200, object, opts.warnings);
      return reply(200, successStatus(store, object.metadata?.name, object.metadata?.uid), opts.warnings);
    }
    case 'deletecollection': {
      const options = await deleteOptions(scope);
      const opts = writeOptions(scope, 'DeleteOptions');
      if (options.dryRunBody?.length) opts.dryRun = true;
      await store.deleteCollection(pathNamespace, listOptions(query), options, opts);
      return reply(200, successStatus(store), opts.warnings);
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

