// Decoding an object against its kind's schema: wrong JSON types are refused
// (as a typed decoder would), fields the schema does not name are dropped and
// reported, so the caller can warn or refuse per fieldValidation.

import { errors } from '../machinery/errors.js';
import { Schema, resolve } from './schema.js';

export interface PruneReport {
  /** Paths of dropped fields, e.g. `spec.foo`, `items[0].bar`. */
  unknownFields: string[];
}

const base64Re = /^[A-Za-z0-9+/]*={0,2}$/;

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'object' : typeof v === 'number' ? 'number' : typeof v;
}

function expectedType(s: Schema): string {
  if (s.intOrString) return 'IntOrString';
  switch (s.type) {
    case 'object': return s.additionalProperties ? 'map' : 'struct';
    case 'array': return 'slice';
    case 'integer': return s.format === 'int32' ? 'int32' : 'int64';
    case 'number': return 'float64';
    case 'boolean': return 'bool';
    default: return 'string';
  }
}

class Pruner {
  readonly unknownFields: string[] = [];
  constructor(private readonly kind: string, private readonly version: string) {}

  private typeError(value: unknown, path: string, s: Schema): never {
    const field = path ? `${this.kind}.${path}` : this.kind;
    throw errors.badRequest(`${this.kind} in version "${this.version}" cannot be handled as a ${this.kind}: json: cannot unmarshal ${jsonType(value)} into Go struct field ${field} of type ${expectedType(s)}`);
  }

  /** Returns the pruned value; `undefined` removes the field (JSON null on a typed field). */
  walk(value: unknown, schema: Schema, path: string): unknown {
    const s = resolve(schema);
    if (value === undefined) return undefined;
    if (value === null) return s.nullable ? null : undefined;
    if (s.intOrString) {
      if (typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value))) return value;
      this.typeError(value, path, s);
    }
    if (s.preserveUnknownFields && !s.properties) return value;
    switch (s.type) {
      case 'object': return this.walkObject(value, s, path);
      case 'array': {
        if (!Array.isArray(value)) this.typeError(value, path, s);
        const items = s.items;
        return items ? value.map((v, i) => this.walk(v, items, `${path}[${i}]`) ?? null) : value;
      }
      case 'string':
        if (typeof value !== 'string') this.typeError(value, path, s);
        if (s.format === 'byte' && (!base64Re.test(value) || value.length % 4 !== 0)) {
          const at = [...value].findIndex((c) => !/[A-Za-z0-9+/=]/.test(c));
          throw errors.badRequest(`${this.kind} in version "${this.version}" cannot be handled as a ${this.kind}: illegal base64 data at input byte ${at < 0 ? Math.max(0, value.length - (value.length % 4)) : at}`);
        }
        return value;
      case 'integer':
        if (typeof value !== 'number' || !Number.isInteger(value)) this.typeError(value, path, s);
        return value;
      case 'number':
        if (typeof value !== 'number') this.typeError(value, path, s);
        return value;
      case 'boolean':
        if (typeof value !== 'boolean') this.typeError(value, path, s);
        return value;
      default:
        return value;
    }
  }

  private walkObject(value: unknown, s: Schema, path: string): unknown {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) this.typeError(value, path, s);
    const obj = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) {
      const childPath = path ? `${path}.${k}` : k;
      const prop = s.properties?.[k] ?? s.additionalProperties;
      if (!prop) {
        if (s.preserveUnknownFields) out[k] = v;
        else this.unknownFields.push(childPath);
        continue;
      }
      const pruned = this.walk(v, prop, s.additionalProperties && !s.properties?.[k] ? `${path}[${k}]` : childPath);
      if (pruned !== undefined) out[k] = pruned;
    }
    return out;
  }
}

/**
 * Decodes `obj` against the kind's schema. Throws 400 BadRequest for values of
 * the wrong JSON type or bad base64; returns the pruned object and the dropped paths.
 */
export function pruneObject(obj: Record<string, unknown>, schema: Schema, kind: string, version: string): { object: Record<string, any>; report: PruneReport } {
  const pruner = new Pruner(kind, version);
  const object = pruner.walk(obj, schema, '') as Record<string, any>;
  return { object, report: { unknownFields: pruner.unknownFields } };
}
