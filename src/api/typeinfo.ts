// The catalog's schemas seen through machinery's TypeInfo: what patch and
// server-side apply need to know about fields, maps, lists and their markers.

import { untyped, type TypeInfo } from '../machinery/patch/index.js';
import { resolve, type Schema } from './schema.js';

const adapted = new WeakMap<Schema, TypeInfo>();

/**
 * `outer` carries the markers that sit on a property (merge key, list type),
 * `inner` the resolved shape of its value.
 */
function adapt(outer: Schema): TypeInfo {
  const cached = adapted.get(outer);
  if (cached) return cached;
  const inner = resolve(outer);
  let info: TypeInfo;
  const markers = {
    listType: outer.listType ?? inner.listType,
    listMapKeys: outer.listMapKeys ?? inner.listMapKeys,
    mapType: outer.mapType ?? inner.mapType,
    patchMergeKey: outer.patchMergeKey ?? inner.patchMergeKey,
    patchStrategy: outer.patchStrategy ?? inner.patchStrategy,
    default: outer.default ?? inner.default,
  };
  if (inner.intOrString) {
    info = { kind: 'scalar', field: () => undefined, elements: () => undefined, ...markers };
  } else if (inner.type === 'array') {
    const items = inner.items;
    info = { kind: 'list', field: () => undefined, elements: () => (items ? adapt(items) : untyped), ...markers };
  } else if (inner.type === 'object' && inner.properties && Object.keys(inner.properties).length > 0) {
    const props = inner.properties;
    const extra = inner.additionalProperties;
    // The fields asked for, adapted once (only the schema's own names: bounded whatever objects hold).
    const fields = new Map<string, TypeInfo>();
    info = {
      kind: 'struct',
      field: (name) => {
        let f = fields.get(name);
        if (f === undefined && Object.prototype.hasOwnProperty.call(props, name)) fields.set(name, (f = adapt(props[name])));
        return f;
      },
      elements: () => (extra ? adapt(extra) : undefined),
      ...markers,
    };
  } else if (inner.type === 'object' && inner.additionalProperties) {
    const values = inner.additionalProperties;
    info = { kind: 'map', field: () => undefined, elements: () => adapt(values), ...markers };
  } else if (inner.type === 'object' || inner.preserveUnknownFields) {
    info = inner.mapType === 'atomic' ? { ...untyped, mapType: 'atomic' } : untyped;
  } else {
    info = { kind: 'scalar', field: () => undefined, elements: () => undefined, ...markers };
  }
  adapted.set(outer, info);
  return info;
}

export function typeInfoOf(schema: Schema): TypeInfo {
  return adapt(schema);
}
