// The OpenAPI v2 document in protocol buffers, as client-go asks for it: the
// message layout of gnostic's openapi_v2 package (Document, PathItem,
// Operation, Schema, …), encoded from the JSON form of the document. Values of
// vendor extensions, defaults and enums travel as `Any.yaml` text; JSON text
// is valid YAML, so JSON.stringify is used.

import { ProtoWriter } from './proto-writer.js';
import type { Json } from './translate.js';

type W = ProtoWriter;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
const bool = (v: unknown) => v === true;
const strs = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined);
const entries = (v: unknown) => (isObject(v) ? Object.entries(v) : []);

/** `Any { string yaml = 2; }` */
function any(w: W, field: number, value: unknown): void {
  w.message(field, (a) => a.string(2, JSON.stringify(value) + '\n'));
}

/** Repeated `NamedAny` of the `x-` keys of an object. */
function vendorExtensions(w: W, field: number, o: Json): void {
  for (const [name, value] of Object.entries(o)) {
    if (name.startsWith('x-')) w.message(field, (n) => { n.string(1, name); any(n, 2, value); });
  }
}

export function encodeDocument(doc: Json): Buffer {
  const w = new ProtoWriter();
  w.string(1, str(doc.swagger));
  if (isObject(doc.info)) w.message(2, (i) => info(i, doc.info as Json));
  w.string(3, str(doc.host));
  w.string(4, str(doc.basePath));
  w.strings(5, strs(doc.schemes));
  w.strings(6, strs(doc.consumes));
  w.strings(7, strs(doc.produces));
  if (isObject(doc.paths)) w.message(8, (p) => paths(p, doc.paths as Json));
  if (isObject(doc.definitions)) {
    w.message(9, (d) => { for (const [name, s] of entries(doc.definitions)) d.message(1, (n) => namedSchema(n, name, s)); });
  }
  for (const req of Array.isArray(doc.security) ? doc.security : []) w.message(12, (r) => securityRequirement(r, req));
  if (isObject(doc.securityDefinitions)) w.message(13, (s) => securityDefinitions(s, doc.securityDefinitions as Json));
  vendorExtensions(w, 16, doc);
  return w.finish();
}

function info(w: W, o: Json): void {
  w.string(1, str(o.title)).string(2, str(o.version)).string(3, str(o.description));
  vendorExtensions(w, 7, o);
}

function paths(w: W, o: Json): void {
  vendorExtensions(w, 1, o);
  for (const [name, item] of entries(o)) {
    if (name.startsWith('x-') || !isObject(item)) continue;
    w.message(2, (n) => { n.string(1, name); n.message(2, (p) => pathItem(p, item)); });
  }
}

const methodFields: [string, number][] = [['get', 2], ['put', 3], ['post', 4], ['delete', 5], ['options', 6], ['head', 7], ['patch', 8]];

function pathItem(w: W, o: Json): void {
  w.string(1, str(o.$ref));
  for (const [method, field] of methodFields) {
    const op = o[method];
    if (isObject(op)) w.message(field, (m) => operation(m, op));
  }
  for (const p of Array.isArray(o.parameters) ? o.parameters : []) w.message(9, (m) => parametersItem(m, p));
  vendorExtensions(w, 10, o);
}

function operation(w: W, o: Json): void {
  w.strings(1, strs(o.tags)).string(2, str(o.summary)).string(3, str(o.description)).string(5, str(o.operationId));
  w.strings(6, strs(o.produces)).strings(7, strs(o.consumes));
  for (const p of Array.isArray(o.parameters) ? o.parameters : []) w.message(8, (m) => parametersItem(m, p));
  if (isObject(o.responses)) w.message(9, (r) => responses(r, o.responses as Json));
  w.strings(10, strs(o.schemes)).bool(11, bool(o.deprecated));
  for (const req of Array.isArray(o.security) ? o.security : []) w.message(12, (r) => securityRequirement(r, req));
  vendorExtensions(w, 13, o);
}

/** `ParametersItem { oneof { Parameter parameter = 1; JsonReference json_reference = 2; } }` */
function parametersItem(w: W, p: unknown): void {
  if (!isObject(p)) return;
  if (typeof p.$ref === 'string') {
    w.message(2, (r) => r.string(1, str(p.$ref)).string(2, str(p.description)));
    return;
  }
  w.message(1, (param) => {
    if (p.in === 'body') {
      param.message(1, (b) => {
        b.string(1, str(p.description)).string(2, str(p.name)).string(3, 'body').bool(4, bool(p.required));
        if (isObject(p.schema)) b.message(5, (s) => schema(s, p.schema as Json));
        vendorExtensions(b, 6, p);
      });
      return;
    }
    // NonBodyParameter: header = 1, formData = 2, query = 3, path = 4.
    const which = { header: 1, formData: 2, query: 3, path: 4 }[String(p.in)] ?? 3;
    param.message(2, (nb) => nb.message(which, (s) => nonBodyParameter(s, p, which === 1 || which === 4)));
  });
}

/** Query and form parameters have `allow_empty_value` at 5, which shifts every later field by one. */
function nonBodyParameter(w: W, p: Json, noAllowEmpty: boolean): void {
  const shift = noAllowEmpty ? 0 : 1;
  w.bool(1, bool(p.required)).string(2, str(p.in)).string(3, str(p.description)).string(4, str(p.name));
  if (!noAllowEmpty) w.bool(5, bool(p.allowEmptyValue));
  w.string(5 + shift, str(p.type)).string(6 + shift, str(p.format));
  w.string(8 + shift, str(p.collectionFormat));
  if (p.default !== undefined) any(w, 9 + shift, p.default);
  w.bool(19 + shift, bool(p.uniqueItems));
  for (const e of Array.isArray(p.enum) ? p.enum : []) any(w, 20 + shift, e);
  vendorExtensions(w, 22 + shift, p);
}

function responses(w: W, o: Json): void {
  for (const [code, value] of entries(o)) {
    if (code.startsWith('x-') || !isObject(value)) continue;
    w.message(1, (n) => {
      n.string(1, code);
      n.message(2, (rv) => {
        if (typeof value.$ref === 'string') rv.message(2, (r) => r.string(1, str(value.$ref)));
        else rv.message(1, (r) => response(r, value));
      });
    });
  }
  vendorExtensions(w, 2, o);
}

function response(w: W, o: Json): void {
  w.string(1, str(o.description));
  if (isObject(o.schema)) w.message(2, (si) => si.message(1, (s) => schema(s, o.schema as Json)));
  vendorExtensions(w, 5, o);
}

function namedSchema(w: W, name: string, s: unknown): void {
  w.string(1, name);
  if (isObject(s)) w.message(2, (m) => schema(m, s));
}

function schema(w: W, s: Json): void {
  w.string(1, str(s.$ref)).string(2, str(s.format)).string(3, str(s.title)).string(4, str(s.description));
  if (s.default !== undefined) any(w, 5, s.default);
  w.double(6, num(s.multipleOf)).double(7, num(s.maximum)).bool(8, bool(s.exclusiveMaximum));
  w.double(9, num(s.minimum)).bool(10, bool(s.exclusiveMinimum));
  w.int64(11, num(s.maxLength)).int64(12, num(s.minLength)).string(13, str(s.pattern));
  w.int64(14, num(s.maxItems)).int64(15, num(s.minItems)).bool(16, bool(s.uniqueItems));
  w.int64(17, num(s.maxProperties)).int64(18, num(s.minProperties));
  w.strings(19, strs(s.required));
  for (const e of Array.isArray(s.enum) ? s.enum : []) any(w, 20, e);
  const ap = s.additionalProperties;
  if (isObject(ap)) w.message(21, (a) => a.message(1, (m) => schema(m, ap)));
  else if (typeof ap === 'boolean') w.message(21, (a) => a.bool(2, ap, true));
  if (typeof s.type === 'string') w.message(22, (t) => t.strings(1, [s.type as string]));
  else if (Array.isArray(s.type)) w.message(22, (t) => t.strings(1, strs(s.type)));
  if (isObject(s.items)) w.message(23, (i) => i.message(1, (m) => schema(m, s.items as Json)));
  for (const sub of Array.isArray(s.allOf) ? s.allOf : []) if (isObject(sub)) w.message(24, (m) => schema(m, sub));
  if (isObject(s.properties)) {
    w.message(25, (p) => { for (const [name, sub] of entries(s.properties)) p.message(1, (n) => namedSchema(n, name, sub)); });
  }
  w.string(26, str(s.discriminator)).bool(27, bool(s.readOnly));
  if (s.example !== undefined) any(w, 30, s.example);
  vendorExtensions(w, 31, s);
}

function securityDefinitions(w: W, o: Json): void {
  for (const [name, def] of entries(o)) {
    if (!isObject(def) || def.type !== 'apiKey') continue; // the only scheme we publish
    w.message(1, (n) => {
      n.string(1, name);
      n.message(2, (item) => item.message(2, (k) => {
        k.string(1, 'apiKey').string(2, str(def.name)).string(3, str(def.in)).string(4, str(def.description));
        vendorExtensions(k, 5, def);
      }));
    });
  }
}

function securityRequirement(w: W, req: unknown): void {
  for (const [name, scopes] of entries(req)) {
    w.message(1, (n) => { n.string(1, name); n.message(2, (a) => a.strings(1, strs(scopes))); });
  }
}
