// Query and path parameters of the REST operations, described once and
// rendered for v2 (flat `type`) or v3 (nested `schema`).

import type { Dialect, Json } from './translate.js';

export type QueryParam =
  | 'pretty' | 'dryRun' | 'fieldManager' | 'fieldValidation' | 'force'
  | 'gracePeriodSeconds' | 'orphanDependents' | 'propagationPolicy'
  | 'ignoreStoreReadErrorWithClusterBreakingPotential'
  | 'labelSelector' | 'fieldSelector' | 'limit' | 'continue'
  | 'resourceVersion' | 'resourceVersionMatch' | 'timeoutSeconds'
  | 'watch' | 'allowWatchBookmarks' | 'sendInitialEvents';

interface ParamInfo {
  type: 'string' | 'integer' | 'boolean';
  description: string;
}

const info: Record<QueryParam, ParamInfo> = {
  pretty: { type: 'string', description: "If 'true', the output is indented for reading." },
  dryRun: { type: 'string', description: 'When present, the request runs every stage but does not persist the result. The only valid value is All.' },
  fieldManager: { type: 'string', description: 'Name of the actor making the change, recorded in managedFields. Required for apply; at most 128 printable characters.' },
  fieldValidation: { type: 'string', description: 'What to do with unknown or duplicate fields in the body: Ignore (drop them silently), Warn (drop them and send a Warning header per field, the default) or Strict (fail the request).' },
  force: { type: 'boolean', description: 'For apply requests: take ownership of fields owned by other managers instead of failing with a conflict. Must be unset for other patch types.' },
  gracePeriodSeconds: { type: 'integer', description: 'Seconds before the object is removed; must be non-negative, 0 removes it at once. Unset uses the per-kind default.' },
  orphanDependents: { type: 'boolean', description: 'Deprecated, use propagationPolicy. Whether dependents are orphaned rather than collected.' },
  propagationPolicy: { type: 'string', description: 'What happens to dependents: Orphan, Background or Foreground.' },
  ignoreStoreReadErrorWithClusterBreakingPotential: { type: 'boolean', description: 'Deletes an object whose stored form cannot be read or decoded. Skips finalizers and admission; use only to recover from corrupt data.' },
  labelSelector: { type: 'string', description: 'Restricts the result to objects whose labels match this selector. Matches everything when empty.' },
  fieldSelector: { type: 'string', description: 'Restricts the result to objects whose fields match this selector. Matches everything when empty.' },
  limit: { type: 'integer', description: 'Largest number of items to return in one page. When more items exist, metadata.continue carries a token for the next page; pass it back with the same query.' },
  continue: { type: 'string', description: 'Token from the metadata.continue of a previous page, asking for the next page of the same list. Expires with the history it points at (410 Gone).' },
  resourceVersion: { type: 'string', description: 'Constrains which version of the data the request may be served from; see the resource version rules. Unset means the most recent.' },
  resourceVersionMatch: { type: 'string', description: 'How resourceVersion is applied to a list: Exact or NotOlderThan. Requires resourceVersion.' },
  timeoutSeconds: { type: 'integer', description: 'Time limit for the list or watch call, whatever the activity.' },
  watch: { type: 'boolean', description: 'Watch for changes and return them as a stream of add, update and remove notifications. Takes resourceVersion.' },
  allowWatchBookmarks: { type: 'boolean', description: 'Asks for BOOKMARK watch events, which only carry a resourceVersion. The server may ignore the request.' },
  sendInitialEvents: { type: 'boolean', description: 'With watch=true, starts the stream with synthetic events for the current state, followed by a bookmark marking the end. Requires resourceVersionMatch=NotOlderThan.' },
};

export function queryParameter(name: QueryParam, dialect: Dialect): Json {
  const p = info[name];
  if (dialect === 'v2') return { uniqueItems: true, type: p.type, description: p.description, name, in: 'query' };
  return { name, in: 'query', description: p.description, schema: { type: p.type, uniqueItems: true } };
}

export type PathParam = 'name' | 'namespace';

export function pathParameter(name: PathParam, kind: string, dialect: Dialect): Json {
  const description = name === 'name' ? `Name of the ${kind}.` : 'Namespace the objects live in; it also scopes authorization.';
  if (dialect === 'v2') return { uniqueItems: true, type: 'string', description, name, in: 'path', required: true };
  return { name, in: 'path', description, required: true, schema: { type: 'string', uniqueItems: true } };
}

/** Parameters each action takes, beyond the path ones and `pretty`. */
export const actionParams: Record<string, QueryParam[]> = {
  get: ['resourceVersion'],
  list: ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion',
    'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch'],
  post: ['dryRun', 'fieldManager', 'fieldValidation'],
  put: ['dryRun', 'fieldManager', 'fieldValidation'],
  patch: ['dryRun', 'fieldManager', 'fieldValidation', 'force'],
  delete: ['dryRun', 'gracePeriodSeconds', 'ignoreStoreReadErrorWithClusterBreakingPotential', 'orphanDependents', 'propagationPolicy'],
  deletecollection: ['continue', 'dryRun', 'fieldSelector', 'gracePeriodSeconds',
    'ignoreStoreReadErrorWithClusterBreakingPotential', 'labelSelector', 'limit', 'orphanDependents',
    'propagationPolicy', 'resourceVersion', 'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds'],
  watch: ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion',
    'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch'],
  watchlist: ['allowWatchBookmarks', 'continue', 'fieldSelector', 'labelSelector', 'limit', 'resourceVersion',
    'resourceVersionMatch', 'sendInitialEvents', 'timeoutSeconds', 'watch'],
};
