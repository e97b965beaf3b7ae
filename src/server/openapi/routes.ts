// The REST routes of every declared kind, as a neutral model that the v2 and
// v3 document builders both render. Paths, operation ids and actions follow
// the upstream shapes so that clients find what they expect.

import type { KindDefinition, Verb } from '../../api/kind.js';
import { verbsOf, type RestObject } from '../../registry/rest.js';
import * as meta from '../../api/meta/v1.js';
import { discoveredUpstreamGroup } from '../../machinery/vocabulary.js';
import { groupVersionPath, mediaTypes, operationGroupVersion, operationTag } from './names.js';
import type { PathParam, QueryParam } from './parameters.js';
import { actionParams } from './parameters.js';

export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';
export type Action = 'get' | 'list' | 'post' | 'put' | 'patch' | 'delete' | 'deletecollection' | 'watch' | 'watchlist';

export interface GroupVersionKind { group: string; version: string; kind: string }

export interface Response { code: '200' | '201' | '202' | '401'; definition?: string }

export interface Operation {
  method: Method;
  /** Upstream action name (x-kubernetes-action); absent on discovery routes. */
  action?: Action;
  operationId: string;
  description: string;
  tag: string;
  gvk?: GroupVersionKind;
  query: QueryParam[];
  body?: { definition: string; required: boolean };
  /** Media types of the request body (v2 `consumes`, v3 requestBody content). */
  consumes: string[];
  produces: string[];
  responses: Response[];
  deprecated?: boolean;
}

export interface Route {
  path: string;
  /** Key of the v3 document holding the route: `api/v1`, `apis/<group>/<version>`, `api`, `apis`, `apis/<group>`. */
  doc: string;
  /** Kind whose name the `{name}` parameter describes. */
  kind?: string;
  pathParams: PathParam[];
  operations: Operation[];
}

export interface MediaTypes {
  produces: string[];
  watchProduces: string[];
  patch: string[];
}

/**
 * The media types a kind's operations really take and give: protobuf only
 * where its objects have a protobuf form, strategic merge only where it
 * applies (elsewhere the handlers answer 406 or 415, as upstream).
 */
export function mediaTypesOf(kind: Pick<KindDefinition, 'protobuf' | 'strategicMerge'>): MediaTypes {
  return {
    produces: kind.protobuf ? [mediaTypes.json, mediaTypes.yaml, mediaTypes.protobuf] : [mediaTypes.json, mediaTypes.yaml],
    watchProduces: kind.protobuf ? [mediaTypes.jsonWatch, mediaTypes.protobufWatch] : [mediaTypes.jsonWatch],
    patch: kind.strategicMerge
      ? [mediaTypes.jsonPatch, mediaTypes.mergePatch, mediaTypes.strategicMergePatch, mediaTypes.applyPatch]
      : [mediaTypes.jsonPatch, mediaTypes.mergePatch, mediaTypes.applyPatch],
  };
}

/** The discovery documents are JSON (or YAML) only. */
const discoveryMedia = [mediaTypes.json, mediaTypes.yaml];

/** Base path of a group version: `/api/v1` or `/apis/<group>/<version>`. */
export function basePath(group: string, version: string): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

/** The routes of one REST object: which operations follow from its capabilities. */
export function restRoutes(rest: RestObject): Route[] {
  const d = rest.describe;
  const parent = d.parentKind;
  const k = d.kind;
  const media = mediaTypesOf(k);
  const base = basePath(d.group, d.version);
  const doc = groupVersionPath(d.group, d.version);
  const gvk: GroupVersionKind = { group: k.group, version: k.version, kind: k.kind };
  const gv = operationGroupVersion(d.group, d.version);
  const tag = operationTag(d.group, d.version);
  const scoped = d.namespaced ? 'Namespaced' : '';
  const verbs = new Set(verbsOf(rest));
  const has = (v: Verb) => verbs.has(v);
  // Operation ids name the parent kind, then the sub-resource: readCoreV1NamespaceStatus.
  const subject = `${parent.kind}${d.subresource === undefined ? '' : capitalize(d.subresource)}`;
  const of = d.subresource === undefined ? '' : ` ${d.subresource} of the`;
  const objectResponse = (codes: Response['code'][]): Response[] =>
    [...codes.map((code) => ({ code, definition: k.definitionName })), { code: '401' as const }];

  const op = (method: Method, action: Action, operationId: string, description: string, extra: Partial<Operation> = {}): Operation => ({
    method, action, operationId, description, tag, gvk,
    query: actionParams[action],
    consumes: ['*/*'],
    produces: media.produces,
    responses: objectResponse(['200']),
    ...extra,
  });

  const collectionPath = d.namespaced ? `${base}/namespaces/{namespace}/${d.resource}` : `${base}/${d.resource}`;
  const objectPath = `${collectionPath}/{name}`;
  const nsParams: PathParam[] = d.namespaced ? ['namespace'] : [];
  const routes: Route[] = [];
  const route = (path: string, pathParams: PathParam[], operations: Operation[]) => {
    if (operations.length > 0) routes.push({ path, doc, kind: parent.kind, pathParams, operations });
  };
  const createOp = (operationId: string, description: string) => op('post', 'post', operationId, description, {
    body: { definition: k.definitionName, required: true }, responses: objectResponse(['200', '201', '202']),
  });

  if (d.subresource !== undefined) {
    const operations: Operation[] = [];
    if (has('get')) operations.push(op('get', 'get', `read${gv}${scoped}${subject}`, `read the${of} named ${parent.kind}`));
    if (has('create')) operations.push(createOp(`create${gv}${scoped}${subject}`, `create the${of} named ${parent.kind}`));
    if (has('update')) operations.push(op('put', 'put', `replace${gv}${scoped}${subject}`, `replace the${of} named ${parent.kind}`, {
      body: { definition: k.definitionName, required: true }, responses: objectResponse(['200', '201']),
    }));
    if (has('patch')) operations.push(patchOp(op, `patch${gv}${scoped}${subject}`, `partially update the${of} named ${parent.kind}`, objectResponse(['200', '201']), media));
    route(`${objectPath}/${d.subresource}`, [...nsParams, 'name'], operations);
    return routes;
  }

  const deleteResponse = d.deleteAnswersObject ? k.definitionName : meta.Status.name!;
  const deleteOptions = { definition: meta.DeleteOptions.name!, required: false };
  const collection: Operation[] = [];
  if (has('list')) collection.push(op('get', 'list', `list${gv}${scoped}${k.kind}`, `list or watch objects of kind ${k.kind}`, {
    produces: [...media.produces, ...media.watchProduces],
    responses: [{ code: '200', definition: k.listDefinitionName }, { code: '401' }],
  }));
  if (has('create')) collection.push(createOp(`create${gv}${scoped}${k.kind}`, `create a ${k.kind}`));
  if (has('deletecollection')) collection.push(op('delete', 'deletecollection', `delete${gv}Collection${scoped}${k.kind}`, `delete a collection of ${k.kind} objects`, {
    body: deleteOptions, responses: [{ code: '200', definition: meta.Status.name! }, { code: '401' }],
  }));
  route(collectionPath, nsParams, collection);

  const object: Operation[] = [];
  if (has('get')) object.push(op('get', 'get', `read${gv}${scoped}${k.kind}`, `read the named ${k.kind}`));
  if (has('update')) object.push(op('put', 'put', `replace${gv}${scoped}${k.kind}`, `replace the named ${k.kind}`, {
    body: { definition: k.definitionName, required: true }, responses: objectResponse(['200', '201']),
  }));
  if (has('patch')) object.push(patchOp(op, `patch${gv}${scoped}${k.kind}`, `partially update the named ${k.kind}`, objectResponse(['200', '201']), media));
  if (has('delete')) object.push(op('delete', 'delete', `delete${gv}${scoped}${k.kind}`, `delete the named ${k.kind}`, {
    body: deleteOptions,
    responses: [{ code: '200', definition: deleteResponse }, { code: '202', definition: deleteResponse }, { code: '401' }],
  }));
  route(objectPath, [...nsParams, 'name'], object);

  if (d.namespaced && has('list')) {
    route(`${base}/${d.resource}`, [], [op('get', 'list', `list${gv}${k.kind}ForAllNamespaces`, `list or watch objects of kind ${k.kind} in every namespace`, {
      produces: [...media.produces, ...media.watchProduces],
      responses: [{ code: '200', definition: k.listDefinitionName }, { code: '401' }],
    })]);
  }

  if (has('watch')) routes.push(...watchRoutes(k, op, media));
  return routes;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

type OpFactory = (method: Method, action: Action, operationId: string, description: string, extra?: Partial<Operation>) => Operation;

function patchOp(op: OpFactory, id: string, description: string, responses: Response[], media: MediaTypes): Operation {
  return op('patch', 'patch', id, description, { body: { definition: meta.Patch.name!, required: true }, consumes: media.patch, responses });
}

/** The deprecated `/watch/` prefix routes; they stream WatchEvents. */
function watchRoutes(k: KindDefinition, op: OpFactory, media: MediaTypes): Route[] {
  const base = `${basePath(k.group, k.version)}/watch`;
  const gv = operationGroupVersion(k.group, k.version);
  const namespaced = k.scope === 'Namespaced';
  const scoped = namespaced ? 'Namespaced' : '';
  const extra: Partial<Operation> = {
    produces: [...media.produces, ...media.watchProduces],
    responses: [{ code: '200', definition: meta.WatchEvent.name! }, { code: '401' }],
    deprecated: true,
  };
  const hint = 'deprecated: use the watch parameter of a list request, narrowed to one object with a fieldSelector on metadata.name.';
  const listHint = 'deprecated: use the watch parameter of a list request.';
  const make = (path: string, pathParams: PathParam[], action: Action, id: string, description: string): Route =>
    ({ path, doc: groupVersionPath(k.group, k.version), kind: k.kind, pathParams, operations: [op('get', action, id, description, extra)] });
  const collection = namespaced ? `${base}/namespaces/{namespace}/${k.plural}` : `${base}/${k.plural}`;
  const nsParams: PathParam[] = namespaced ? ['namespace'] : [];
  const routes = [
    make(collection, nsParams, 'watchlist', `watch${gv}${scoped}${k.kind}List`, `watch changes to a list of ${k.kind}. ${listHint}`),
    make(`${collection}/{name}`, [...nsParams, 'name'], 'watch', `watch${gv}${scoped}${k.kind}`, `watch changes to one ${k.kind}. ${hint}`),
  ];
  if (namespaced) {
    routes.push(make(`${base}/${k.plural}`, [], 'watchlist', `watch${gv}${k.kind}ListForAllNamespaces`, `watch changes to a list of ${k.kind} in every namespace. ${listHint}`));
  }
  return routes;
}

/** The discovery documents of a group version (`/api/v1/`), a group (`/apis/<g>/`) and the roots. */
export function discoveryRoutes(rests: RestObject[]): Route[] {
  const routes: Route[] = [];
  const plain = (path: string, doc: string, id: string, description: string, tag: string, definition: string): Route => ({
    path, doc, pathParams: [],
    operations: [{
      method: 'get', operationId: id, description, tag, query: [], consumes: discoveryMedia, produces: discoveryMedia,
      responses: [{ code: '200', definition }, { code: '401' }],
    }],
  });
  const groupVersions = new Map<string, { group: string; version: string }>();
  for (const { describe: d } of rests) groupVersions.set(`${d.group}/${d.version}`, { group: d.group, version: d.version });
  const groups = new Set<string>();
  for (const { group, version } of groupVersions.values()) {
    const gv = operationGroupVersion(group, version);
    routes.push(plain(`${basePath(group, version)}/`, groupVersionPath(group, version), `get${gv}APIResources`, 'get available resources',
      operationTag(group, version), meta.APIResourceList.name!));
    if (group !== '') groups.add(group);
  }
  routes.push(plain('/api/', 'api', 'getCoreAPIVersions', 'get available API versions', 'core', meta.APIVersions.name!));
  routes.push(plain('/apis/', 'apis', 'getAPIVersions', 'get available API versions', 'apis', meta.APIGroupList.name!));
  for (const group of groups) {
    const stem = operationGroupVersion(group, '');
    routes.push(plain(`/apis/${group}/`, `apis/${group}`, `get${stem}APIGroup`, 'get information of a group',
      operationTag(group, '').replace(/_$/, ''), meta.APIGroup.name!));
  }
  return routes;
}

/**
 * The routes of a group that discovery also lists by its upstream name, under
 * that name (kubectl explain finds a resource's schema by its path there).
 * Their operation ids and tags name the upstream group in full, so that they
 * stay unique beside ours.
 */
function upstreamNamedRoutes(routes: Route[]): Route[] {
  const out: Route[] = [];
  for (const route of routes) {
    const [prefix, group, version] = route.doc.split('/');
    const upstream = prefix === 'apis' && group !== undefined && version !== undefined ? discoveredUpstreamGroup(group) : undefined;
    if (upstream === undefined) continue;
    const [ours, theirs] = [operationGroupVersion(group, version), operationGroupVersion(upstream, version)];
    out.push({
      ...route,
      doc: route.doc.replace(`apis/${group}`, `apis/${upstream}`),
      path: route.path.replace(`/apis/${group}/`, `/apis/${upstream}/`),
      operations: route.operations.map((op) => ({
        ...op,
        operationId: op.operationId.replace(ours, theirs),
        tag: operationTag(upstream, version),
        ...(op.gvk?.group === group ? { gvk: { ...op.gvk, group: upstream } } : {}),
      })),
    });
  }
  return out;
}

/** Every route of every REST object plus discovery, under our group names and the upstream ones discovery lists, sorted by path. */
export function allRoutes(rests: RestObject[]): Route[] {
  const own = [...discoveryRoutes(rests), ...rests.flatMap((r) => restRoutes(r))];
  const routes = [...own, ...upstreamNamedRoutes(own)];
  return routes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
