// Pruning of fields a structural schema does not name, compiled once as
// upstream prunes custom resources: unknown fields are dropped unless their
// node has x-plat-preserve-unknown-fields (whose named properties are still
// pruned inside), apiVersion, kind and metadata stay at the root and in
// embedded resources. The dropped paths come back, so the caller can warn
// or refuse per fieldValidation (`unknown field "spec.foo"`). A null where
// the schema is not nullable and has no default goes too, silently, as
// upstream drops it before defaulting (a default fills it instead).

import { hasOwn } from '../../machinery/ownkeys.js';
import { JSONSchemaProps, markersOf, propertiesOf } from './structural.js';
import { isObject } from './path.js';

/** Drops unknown fields of `value` in place, adding their paths to `dropped`. */
type Prune = (value: unknown, path: string, dropped: string[]) => void;

const childPath = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);
const resourceFields = new Set(['apiVersion', 'kind', 'metadata']);

/** Compiles the pruner of a resource's root schema (or, `resourceRoot` false, of any other node). */
export function compilePruner(schema: JSONSchemaProps, resourceRoot = true): (obj: unknown) => string[] {
  const prune = compileNode(schema, resourceRoot);
  return (obj) => {
    const dropped: string[] = [];
    prune(obj, '', dropped);
    return dropped;
  };
}

function compileNode(s: JSONSchemaProps, resourceRoot: boolean): Prune {
  const m = markersOf(s);
  const keepsResourceFields = resourceRoot || m.embeddedResource;
  const props = new Map<string, Prune>();
  const dropsNull = (p: JSONSchemaProps) => p.nullable !== true && p.default === undefined;
  const nullDropped = new Set<string>();
  for (const [name, p] of propertiesOf(s)) {
    props.set(name, compileNode(p, false));
    if (dropsNull(p)) nullDropped.add(name);
  }
  const valueSchema = typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined;
  const values = valueSchema ? compileNode(valueSchema, false) : undefined;
  const valueNullDropped = valueSchema !== undefined && dropsNull(valueSchema);
  const items = s.items ? compileNode(s.items, false) : undefined;
  const preserve = m.preserveUnknownFields || s.additionalProperties === true;
  return (v, path, dropped) => {
    if (Array.isArray(v)) {
      if (items) for (let i = 0; i < v.length; i++) items(v[i], `${path}[${i}]`, dropped);
      return;
    }
    if (!isObject(v)) return;
    for (const key of Object.keys(v)) {
      const at = childPath(path, key);
      const known = props.get(key);
      if (v[key] === null && (known ? nullDropped.has(key) : valueNullDropped)) delete v[key];
      else if (known) known(v[key], at, dropped);
      else if (values) values(v[key], at, dropped);
      else if (!preserve && !(keepsResourceFields && resourceFields.has(key))) {
        if (hasOwn(v, key)) delete v[key];
        dropped.push(at);
      }
    }
  };
}
