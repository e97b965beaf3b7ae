// Defaulting from the schema's `default`, compiled once: a missing field (or
// a null one where the schema is not nullable) gets a copy of its default,
// then the walk goes on inside it, so defaults nest (an object defaulted to
// `{}` picks up its own fields' defaults) and reach every list item and map
// value. Upstream applies these on decode and again when reading a stored
// object, so a default added later shows on objects stored before it.

import { setOwn } from '../../machinery/ownkeys.js';
import { JSONSchemaProps, propertiesOf } from './structural.js';
import { isObject } from './validator.js';

/** Fills defaults into `value` in place. */
export type Defaulter = (value: unknown) => void;

const nothing: Defaulter = () => {};

/** Compiles `schema` into a defaulter; a schema without any `default` compiles to a no-op. */
export function compileDefaulter(schema: JSONSchemaProps): Defaulter {
  return compileNode(schema) ?? nothing;
}

/** A default's value for one object: a scalar as it is, an object or list copied (structuredClone costs a microsecond even for a string). */
function freshCopy(value: unknown): () => unknown {
  return typeof value === 'object' && value !== null ? () => structuredClone(value) : () => value;
}

function compileNode(s: JSONSchemaProps): Defaulter | undefined {
  const steps: Defaulter[] = [];
  const props: [string, JSONSchemaProps, Defaulter | undefined, () => unknown][] = [];
  for (const [name, p] of propertiesOf(s)) {
    const inner = compileNode(p);
    if (p.default !== undefined || inner) props.push([name, p, inner, freshCopy(p.default)]);
  }
  if (props.length) {
    steps.push((v) => {
      if (!isObject(v)) return;
      for (const [name, p, inner, fresh] of props) {
        const has = Object.prototype.hasOwnProperty.call(v, name);
        if (p.default !== undefined && (!has || (v[name] === null && p.nullable !== true))) setOwn(v, name, fresh());
        if (inner && Object.prototype.hasOwnProperty.call(v, name)) inner(v[name]);
      }
    });
  }
  const values = typeof s.additionalProperties === 'object' ? compileValueDefaults(s.additionalProperties) : undefined;
  if (values) steps.push((v) => { if (isObject(v)) for (const key of Object.keys(v)) v[key] = values(v[key]); });
  const items = s.items ? compileValueDefaults(s.items) : undefined;
  if (items) steps.push((v) => { if (Array.isArray(v)) for (let i = 0; i < v.length; i++) v[i] = items(v[i]); });
  if (!steps.length) return undefined;
  return steps.length === 1 ? steps[0] : (v) => { for (const step of steps) step(v); };
}

/** For list items and map values: a null item takes the item schema's default, then defaults inside it. */
function compileValueDefaults(s: JSONSchemaProps): ((v: unknown) => unknown) | undefined {
  const inner = compileNode(s);
  if (s.default === undefined && !inner) return undefined;
  const fresh = freshCopy(s.default);
  return (v) => {
    const out = v === null && s.default !== undefined && s.nullable !== true ? fresh() : v;
    inner?.(out);
    return out;
  };
}
