// Decoding an object against its kind's schema, as upstream's typed decoder
// reads JSON: values of the wrong JSON type, integers outside their type, bad
// base64 and times that do not parse are refused with its messages; times
// come out in their canonical UTC form; fields the schema does not name are
// dropped and reported, so the caller can warn or refuse per fieldValidation.
//
// Like upstream's decoder, a wrong type or bad base64 is remembered and the
// walk goes on (the first one is reported), while a time that does not parse
// stops it at once.

import { ApiError, errors } from '../machinery/errors.js';
import { ownValue, setOwn } from '../machinery/ownkeys.js';
import { jsonPointer, type NumberText, type Segment } from '../machinery/duplicates.js';
import { formatInstant, parseGoTime, zeroTimeSeconds, type Instant } from '../machinery/time.js';
import { canonicalQuantity, quantityMessages } from '../machinery/quantity.js';
import { Schema, resolve } from './schema.js';

export interface PruneReport {
  /** Paths of dropped fields, e.g. `spec.foo`, `items[0].bar`. */
  unknownFields: string[];
}

export interface PruneOptions {
  /** The literal text of numbers by JSON pointer, when the body was JSON text. */
  numberText?: NumberText;
}

const base64Re = /^[A-Za-z0-9+/]*={0,2}$/;

const intRange = {
  32: [-(2n ** 31n), 2n ** 31n - 1n],
  64: [-(2n ** 63n), 2n ** 63n - 1n],
} as const;

/** Whether a number literal reads as an integer of `bits`, as Go's strconv.ParseInt reads it. */
function literalFits(text: string, bits: 32 | 64): boolean {
  if (!/^-?\d+$/.test(text)) return false;
  const n = BigInt(text);
  return n >= intRange[bits][0] && n <= intRange[bits][1];
}

/**
 * Whether a number without its literal (YAML, protobuf, a patched object)
 * is an integer of `bits`. A double cannot tell 2^63 - 1 from 2^63, so the
 * int64 bounds are taken as the doubles they round to.
 */
function valueFits(value: number, bits: 32 | 64): boolean {
  return Number.isInteger(value) && value >= Number(intRange[bits][0]) && value <= Number(intRange[bits][1]);
}

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  // Go names the JSON types so: number, string, bool, object, array.
  return typeof v === 'object' ? 'object' : typeof v === 'boolean' ? 'bool' : typeof v;
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
  /** The first remembered error, thrown when the walk ends. */
  saved?: ApiError;
  /** Where the walk is: keys and indexes, and whether each key is a map's (printed `[k]`) or a field's. */
  private readonly segments: Segment[] = [];
  private readonly mapKeys: boolean[] = [];

  constructor(private readonly kind: string, private readonly version: string, private readonly opts: PruneOptions) {}

  /** The current location as messages print it: `metadata.labels[a]`, `items[0].name`. */
  private path(): string {
    let out = '';
    this.segments.forEach((s, i) => {
      out += typeof s === 'number' || this.mapKeys[i] ? `[${s}]` : out ? `.${s}` : s;
    });
    return out;
  }

  private decodeError(message: string): ApiError {
    return errors.badRequest(`${this.kind} in version "${this.version}" cannot be handled as a ${this.kind}: ${message}`);
  }

  private save(err: ApiError): undefined {
    this.saved ??= err;
    return undefined;
  }

  private goField(): string {
    const path = this.path();
    return path ? `${this.kind}.${path}` : this.kind;
  }

  private typeError(value: unknown, s: Schema): undefined {
    return this.save(this.decodeError(`json: cannot unmarshal ${jsonType(value)} into Go struct field ${this.goField()} of type ${expectedType(s)}`));
  }

  /** The JSON literal of the number here, when the body was JSON text and a double does not hold it as written. */
  private literal(): string | undefined {
    const numberText = this.opts.numberText;
    return numberText && numberText(jsonPointer(this.segments));
  }

  /**
   * Whether a number is an integer of `bits`, and how to quote it: as the
   * client wrote it when known, else as Go prints a float64 (as upstream's
   * YAML-to-JSON step would have).
   */
  private integer(value: number, bits: 32 | 64): { fits: boolean; text: string } {
    const literal = this.literal();
    if (literal !== undefined) return { fits: literalFits(literal, bits), text: literal };
    return { fits: valueFits(value, bits), text: String(value) };
  }

  private child(key: Segment, inMap: boolean, value: unknown, schema: Schema): unknown {
    this.segments.push(key);
    this.mapKeys.push(inMap);
    const out = this.walk(value, schema);
    this.segments.pop();
    this.mapKeys.pop();
    return out;
  }

  /** Returns the pruned value; `undefined` removes the field (JSON null on a typed field). */
  walk(value: unknown, schema: Schema): unknown {
    const s = resolve(schema);
    if (value === undefined) return undefined;
    if (value === null) return s.nullable ? null : undefined;
    if (s.keepsWrongTypes) return this.untyped(value, s);
    if (s.intOrString) return this.intOrString(value);
    if (s.protoMessage === 'quantity') return this.quantity(value);
    if (s.preserveUnknownFields && !s.properties) return value;
    switch (s.type) {
      case 'object': return this.walkObject(value, s);
      case 'array': {
        if (!Array.isArray(value)) return this.typeError(value, s);
        const items = s.items;
        return items ? value.map((v, i) => this.child(i, false, v, items) ?? null) : value;
      }
      case 'string':
        if (s.format === 'date-time') return this.time(value, s.protoMessage === 'microTime');
        if (typeof value !== 'string') return this.typeError(value, s);
        if (s.format === 'byte' && (!base64Re.test(value) || value.length % 4 !== 0)) {
          const at = [...value].findIndex((c) => !/[A-Za-z0-9+/=]/.test(c));
          return this.save(this.decodeError(`illegal base64 data at input byte ${at < 0 ? Math.max(0, value.length - (value.length % 4)) : at}`));
        }
        return value;
      case 'integer': {
        if (typeof value !== 'number') return this.typeError(value, s);
        const bits = s.format === 'int32' ? 32 : 64;
        const { fits, text } = this.integer(value, bits);
        if (!fits) return this.save(this.decodeError(`json: cannot unmarshal number ${text} into Go struct field ${this.goField()} of type int${bits}`));
        return value;
      }
      case 'number':
        if (typeof value !== 'number') return this.typeError(value, s);
        if (!Number.isFinite(value)) return this.save(this.decodeError(`json: cannot unmarshal number ${this.literal() ?? String(value)} into Go struct field ${this.goField()} of type float64`));
        return value;
      case 'boolean':
        if (typeof value !== 'boolean') return this.typeError(value, s);
        return value;
      default:
        return value;
    }
  }

  /** A custom resource's value: objects and lists are walked for their fields; anything else is kept as sent. */
  private untyped(value: unknown, s: Schema): unknown {
    if (s.preserveUnknownFields && !s.properties) return value;
    if (Array.isArray(value)) {
      const items = s.items;
      return s.type === 'array' && items ? value.map((v, i) => this.child(i, false, v, items) ?? null) : value;
    }
    if (typeof value === 'object' && value !== null && (s.type === 'object' || s.properties)) return this.walkObject(value, s);
    return value;
  }

  /**
   * A meta Time (RFC 3339, fraction dropped) or MicroTime (exactly six
   * digits of fraction), read as upstream reads it and written back in UTC.
   * Go's zero time is no time, as upstream writes it (null).
   */
  private time(value: unknown, micro: boolean): string | undefined {
    if (typeof value !== 'string') throw this.decodeError(`json: cannot unmarshal ${jsonType(value)} into Go value of type string`);
    let t: Instant;
    try {
      t = parseGoTime(value, micro);
    } catch (e) {
      throw this.decodeError((e as Error).message);
    }
    if (t.seconds === zeroTimeSeconds && t.nanos === 0) return undefined;
    try {
      return formatInstant(t, micro ? 6 : 0);
    } catch {
      // A year past 9999 (or before 0) once in UTC: upstream could not write it back either.
      throw this.decodeError('Time.MarshalJSON: year outside of range [0,9999]');
    }
  }

  /** A resource Quantity reads a string or a number, kept in its canonical text as upstream writes it back. */
  private quantity(value: unknown): unknown {
    if (typeof value !== 'string' && typeof value !== 'number') return this.save(this.decodeError(quantityMessages.format));
    try {
      return canonicalQuantity(typeof value === 'number' ? this.literal() ?? value : value);
    } catch (e) {
      return this.save(this.decodeError((e as Error).message));
    }
  }

  /** IntOrString reads a string, or else an int32, with its own decoder (no field context in messages). */
  private intOrString(value: unknown): unknown {
    if (typeof value === 'string') return value;
    if (typeof value !== 'number') throw this.decodeError(`json: cannot unmarshal ${jsonType(value)} into Go value of type int32`);
    const { fits, text } = this.integer(value, 32);
    if (!fits) throw this.decodeError(`json: cannot unmarshal number ${text} into Go value of type int32`);
    return value;
  }

  private walkObject(value: unknown, s: Schema): unknown {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.typeError(value, s);
    const out: Record<string, unknown> = {};
    // Keys are the client's: a property is only one the schema names itself, never Object.prototype's.
    // Object.keys and a read each: Object.entries makes a pair per field, the walk's largest cost.
    const obj = value as Record<string, unknown>;
    for (const k of Object.keys(obj)) {
      const v = obj[k];
      const prop = s.properties ? ownValue(s.properties, k) : undefined;
      const child = prop ?? s.additionalProperties;
      if (!child) {
        if (s.preserveUnknownFields) setOwn(out, k, v);
        else {
          const at = this.path();
          this.unknownFields.push(at ? `${at}.${k}` : k);
        }
        continue;
      }
      const pruned = this.child(k, prop === undefined, v, child);
      if (pruned !== undefined) setOwn(out, k, pruned);
    }
    return out;
  }
}

/**
 * Decodes `obj` against the kind's schema. Throws 400 BadRequest for values
 * upstream's decoder refuses; returns the pruned object and the dropped paths.
 */
export function pruneObject(obj: Record<string, unknown>, schema: Schema, kind: string, version: string, opts: PruneOptions = {}): { object: Record<string, any>; report: PruneReport } {
  const pruner = new Pruner(kind, version, opts);
  const object = pruner.walk(obj, schema) as Record<string, any>;
  if (pruner.saved) throw pruner.saved;
  return { object, report: { unknownFields: pruner.unknownFields } };
}
