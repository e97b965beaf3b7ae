// Request info: from method and path to verb, group, version, resource,
// namespace, name and sub-resource, as authorization and handlers need them.

import { queryBool } from './params.js';
import { isPathSegmentName } from '../machinery/validation.js';

export interface RequestInfo {
  /** True for paths under /api/v1 and /apis/{group}/{version} that name a resource. */
  isResourceRequest: boolean;
  path: string;
  /** API verb (get, list, watch, create, update, patch, delete, deletecollection) or lowercase HTTP method. */
  verb: string;
  apiPrefix?: 'api' | 'apis';
  apiGroup: string;
  apiVersion: string;
  namespace?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  /** Path parts below the group version (for discovery of a group version: empty). */
  parts: string[];
  /** The group the path named when it is an upstream name for `apiGroup` (a typed upstream client): answers go back in it. */
  clientGroup?: string;
  /**
   * A list or watch of one object by `fieldSelector=metadata.name=<name>`:
   * authorization sees that name, as upstream's request info gives it (the
   * routes keep `name` for the path's own).
   */
  selectedName?: string;
  /** The raw selectors of a list, watch or deletecollection (not of the deprecated /watch/ paths), for authorization. */
  fieldSelector?: string;
  labelSelector?: string;
}

/** The name `metadata.name=<name>` (or `==`) requires in a field selector, if a term does; unescaped as selectors are. */
function exactNameOf(fieldSelector: string): string | undefined {
  for (const term of fieldSelector.split(/(?<!\\),/)) {
    const match = /^\s*metadata\.name\s*={1,2}(.*)$/.exec(term);
    if (match) return match[1]!.trim().replace(/\\(.)/g, '$1');
  }
  return undefined;
}

/**
 * `namespaceSubresources`: the sub-resources of a namespace object itself
 * (its status, its finalize), which `/namespaces/{name}/<x>` names instead of
 * a namespaced resource; the registry knows them.
 */
export function parseRequestInfo(method: string, path: string, query: URLSearchParams, namespaceSubresources: ReadonlySet<string>): RequestInfo {
  const info: RequestInfo = { isResourceRequest: false, path, verb: method.toLowerCase(), apiGroup: '', apiVersion: '', parts: [] };
  const segments = path.split('/').filter((s) => s !== '');
  let rest: string[];
  if (segments[0] === 'api' && segments.length >= 2) {
    info.apiPrefix = 'api';
    info.apiVersion = segments[1];
    rest = segments.slice(2);
  } else if (segments[0] === 'apis' && segments.length >= 3) {
    info.apiPrefix = 'apis';
    info.apiGroup = segments[1];
    info.apiVersion = segments[2];
    rest = segments.slice(3);
  } else {
    return info;
  }
  info.isResourceRequest = true;
  let verbFromWatchPath = false;
  if (rest[0] === 'watch') {
    verbFromWatchPath = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length > 1) {
    info.namespace = rest[1];
    if (rest.length > 2 && !namespaceSubresources.has(rest[2])) rest = rest.slice(2);
  }
  info.parts = rest;
  info.resource = rest[0];
  info.name = rest[1];
  info.subresource = rest[2];
  // As upstream, a namespace object's own path also sets `namespace` (authorization uses it).
  if (info.resource === undefined) {
    info.isResourceRequest = false; // discovery of the group version
    return info;
  }
  const hasName = info.name !== undefined;
  const watching = verbFromWatchPath || (queryBool(query, 'watch') ?? false);
  switch (method) {
    case 'GET': case 'HEAD':
      info.verb = watching ? 'watch' : hasName ? 'get' : 'list';
      break;
    case 'POST': info.verb = 'create'; break;
    case 'PUT': info.verb = 'update'; break;
    case 'PATCH': info.verb = 'patch'; break;
    case 'DELETE': info.verb = hasName ? 'delete' : 'deletecollection'; break;
    default: info.verb = method.toLowerCase();
  }
  if (!verbFromWatchPath && (info.verb === 'list' || info.verb === 'watch' || info.verb === 'deletecollection')) {
    const fieldSelector = query.get('fieldSelector');
    const labelSelector = query.get('labelSelector');
    if (fieldSelector !== null) info.fieldSelector = fieldSelector;
    if (labelSelector !== null) info.labelSelector = labelSelector;
  }
  if (info.verb === 'list' || info.verb === 'watch') {
    const selected = exactNameOf(query.get('fieldSelector') ?? '');
    if (selected !== undefined && selected !== '' && isPathSegmentName(selected).length === 0) info.selectedName = selected;
  }
  return info;
}
