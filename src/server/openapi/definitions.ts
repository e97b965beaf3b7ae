// The definitions table of a document: the meta definitions, each kind and
// its List kind and every named schema they reach, with the
// group-version-kind extensions clients use to find a kind's schema.

import type { KindDefinition } from '../../api/kind.js';
import { define, namedSchemas, type Schema } from '../../api/schema.js';
import * as meta from '../../api/meta/v1.js';
import { discoveredUpstreamGroup } from '../../machinery/vocabulary.js';
import { ext, upstreamExt } from './names.js';
import type { GroupVersionKind } from './routes.js';
import { translateSchema, type Dialect, type Json } from './translate.js';

/** The List kind of a kind: standard list metadata plus the required items. */
export function listSchema(k: KindDefinition): Schema {
  return {
    type: 'object',
    description: `A list of ${k.kind} objects.`,
    required: ['items'],
    properties: {
      apiVersion: { type: 'string', description: 'Schema version of this representation; the server converts to its own.' },
      kind: { type: 'string', description: 'REST resource this object represents; CamelCase.' },
      metadata: { ref: meta.ListMeta, description: 'Standard list metadata.' },
      items: { type: 'array', items: { ref: namedKindSchema(k) }, description: `The ${k.kind} objects.` },
    },
  };
}

/** A kind's schema under its definition name (kinds made at run time may give the name apart from the schema). */
function namedKindSchema(k: KindDefinition): Schema {
  return k.schema.name === k.definitionName ? k.schema : define(k.definitionName, k.schema);
}

/** The meta definitions every document offers (Status, DeleteOptions, WatchEvent, discovery documents, ...). */
const metaSchemas = Object.values(meta).filter((v): v is Schema => typeof v === 'object' && v !== null && typeof (v as Schema).name === 'string');

/** Definition name -> schema, for every definition a document may need. */
export function definitionSchemas(kinds: KindDefinition[]): Map<string, Schema> {
  return namedSchemas([...metaSchemas, ...kinds.flatMap((k) => [namedKindSchema(k), define(k.listDefinitionName, listSchema(k))])]);
}

/** Definition name -> the kinds it is the schema of. */
export function groupVersionKinds(kinds: KindDefinition[]): Map<string, GroupVersionKind[]> {
  const out = new Map<string, GroupVersionKind[]>();
  const add = (name: string, gvk: GroupVersionKind) => {
    const list = out.get(name) ?? [];
    if (!list.some((g) => g.group === gvk.group && g.version === gvk.version && g.kind === gvk.kind)) list.push(gvk);
    out.set(name, list);
  };
  const groupVersions = new Map<string, { group: string; version: string }>();
  for (const k of kinds) {
    add(k.definitionName, { group: k.group, version: k.version, kind: k.kind });
    add(k.listDefinitionName, { group: k.group, version: k.version, kind: k.listKind });
    // Discovery lists these groups by their upstream name too: kubectl looks the schema up by that name.
    const upstream = discoveredUpstreamGroup(k.group);
    if (upstream !== undefined) {
      add(k.definitionName, { group: upstream, version: k.version, kind: k.kind });
      add(k.listDefinitionName, { group: upstream, version: k.version, kind: k.listKind });
    }
    groupVersions.set(`${k.group}/${k.version}`, { group: k.group, version: k.version });
  }
  // Status is a core kind; DeleteOptions and WatchEvent travel in every group version.
  add(meta.Status.name!, { group: '', version: 'v1', kind: 'Status' });
  const sorted = [...groupVersions.values()].sort((a, b) => `${a.group}/${a.version}`.localeCompare(`${b.group}/${b.version}`));
  for (const { group, version } of sorted) {
    add(meta.DeleteOptions.name!, { group, version, kind: 'DeleteOptions' });
    add(meta.WatchEvent.name!, { group, version, kind: 'WatchEvent' });
  }
  return out;
}

/** One translated definition, with its GVK extensions when it is a kind. */
export function renderDefinition(schema: Schema, gvks: GroupVersionKind[] | undefined, dialect: Dialect): Json {
  const out = translateSchema(schema, dialect);
  if (gvks && gvks.length > 0) {
    const value = gvks.map((g) => ({ group: g.group, kind: g.kind, version: g.version }));
    out[upstreamExt.gvk] = value;
    out[ext.gvk] = value.map((g) => ({ ...g }));
  }
  return out;
}

/** The full, name-sorted definitions object of a document. */
export function renderDefinitions(kinds: KindDefinition[], dialect: Dialect, only?: Set<string>): Record<string, Json> {
  const schemas = definitionSchemas(kinds);
  const gvks = groupVersionKinds(kinds);
  const out: Record<string, Json> = {};
  for (const name of [...schemas.keys()].sort()) {
    if (only && !only.has(name)) continue;
    out[name] = renderDefinition(schemas.get(name)!, gvks.get(name), dialect);
  }
  return out;
}
