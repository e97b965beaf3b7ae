// The wire part of decoding, shared by the server and the TypeScript client:
// a body's bytes in JSON, YAML or protobuf to a JSON value, with what the
// text told that the value lost (repeated keys, number literals). Depth is
// refused before anything recursive runs. Judging the value as an object of
// a kind is api/decode.ts's.

import { Composer, CST, Document, isMap, isNode, isScalar, isSeq, Lexer, LineCounter, Parser } from 'yaml';
import { errors } from '../machinery/errors.js';
import { maxNestingDepth, tooDeep, valueExceedsDepth } from '../machinery/limits.js';
import { scanJsonText, type NumberText } from '../machinery/duplicates.js';
import { vocabulary } from '../machinery/vocabulary.js';
import { decodeProtobufObject, type SchemaLookup } from './protobuf/index.js';

export type BodyFormat = 'json' | 'yaml' | 'protobuf';

/** Media types of object bodies, as a 415 lists them. */
export const bodyMediaTypes = ['application/json', 'application/yaml', vocabulary.protobufMediaType];

/** A parsed body, and what its text told that the parsed value lost. */
export interface ParsedBody {
  value: unknown;
  /** Strict-decoding messages for keys the text repeated; looked for only when asked. */
  duplicates: string[];
  /** The literal text of numbers, for JSON text. */
  numberText?: NumberText;
}

/** Whether a YAML stream's syntax tree nests collections deeper than the limit; walked without recursion. */
function yamlTreeExceedsDepth(tokens: readonly CST.Token[]): boolean {
  const stack: Array<[CST.Token | null | undefined, number]> = tokens.map((t) => [t, 0]);
  while (stack.length) {
    const [token, depth] = stack.pop()!;
    if (!token) continue;
    if (token.type === 'document') stack.push([token.value, depth]);
    else if (CST.isCollection(token)) {
      if (depth + 1 > maxNestingDepth) return true;
      for (const item of token.items) stack.push([item.key, depth + 1], [item.value, depth + 1]);
    }
  }
  return false;
}

/**
 * The syntax tree of YAML text, lexed and parsed token by token so that text
 * certainly nested deeper than the limit is refused as soon as that is
 * certain, not after the whole parse: the flow collections open (`[`, `{`)
 * and the block items opened on the current line (`- - -`, `? ?`) are a
 * lower bound of the depth. The parse of 100,000 brackets (200 KB) held
 * the thread for more than a second; now the lexer stops at the limit.
 * Deeper trees that nest by indentation are caught by the tree walk after.
 */
function parseYamlTree(text: string, lines: LineCounter): CST.Token[] {
  const parser = new Parser(lines.addNewLine);
  lines.addNewLine(0); // as Parser.parse does before the first token
  const tokens: CST.Token[] = [];
  let flow = 0;
  let onLine = 0;
  let scalarSource = false;
  for (const lexeme of new Lexer().lex(text)) {
    // A scalar's source follows its marker: brackets in it are text.
    if (scalarSource) scalarSource = false;
    else if (lexeme === CST.SCALAR) scalarSource = true;
    else if (lexeme === '[' || lexeme === '{') flow++;
    else if (lexeme === ']' || lexeme === '}') flow = Math.max(0, flow - 1);
    else if (lexeme === '-' || lexeme === '?') onLine++;
    else if (lexeme === '\n' || lexeme === '\r\n' || lexeme === '') onLine = 0;
    if (flow + onLine > maxNestingDepth) throw tooDeep();
    for (const token of parser.next(lexeme)) tokens.push(token);
  }
  for (const token of parser.end()) tokens.push(token);
  return tokens;
}

/** A map key as Go's %#v prints it in upstream's duplicate-key message. */
function goKey(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  return value === null || value === undefined ? '<nil>' : String(value);
}

/**
 * Keys given twice in one mapping, in upstream's words (its strict YAML
 * reader): `yaml: unmarshal errors:` and a line per repeat, numbered by the
 * line of the repeated value. Merged (`<<`) keys are not compared.
 */
function yamlDuplicates(doc: Document, lines: LineCounter): string[] {
  const found: Array<{ at: number; key: unknown }> = [];
  const stack: unknown[] = [doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (isSeq(node)) for (const item of node.items) stack.push(item);
    if (!isMap(node)) continue;
    const seen = new Set<string>();
    for (const pair of node.items) {
      stack.push(pair.key, pair.value);
      if (!isScalar(pair.key) || pair.key.value === '<<') continue;
      const id = `${typeof pair.key.value}:${String(pair.key.value)}`;
      if (seen.has(id)) {
        const at = (isNode(pair.value) && pair.value.range ? pair.value.range[0] : pair.key.range?.[0]) ?? 0;
        found.push({ at, key: pair.key.value });
      }
      seen.add(id);
    }
  }
  if (!found.length) return [];
  // In the order the document gives them, as upstream's decoder meets them.
  const lineOf = ({ at, key }: { at: number; key: unknown }) => `line ${lines.linePos(at).line}: key ${goKey(key)} already set in map`;
  return [`yaml: unmarshal errors:\n  ${found.sort((a, b) => a.at - b.at).map(lineOf).join('\n  ')}`];
}

/**
 * Parses YAML text (one document) to JSON values; malformed input is a 400.
 * The syntax tree is checked for depth before anything recurses over it (the
 * composer does, and a stack overflow inside the yaml package can take the
 * process down), and the value again after aliases are expanded.
 */
export function readYaml(text: string, findDuplicates = false): ParsedBody {
  const asJson = jsonAsYaml(text, findDuplicates);
  if (asJson) return asJson;
  const fail = (message: string) => errors.badRequest(`the object provided is unrecognized: error converting YAML to JSON: ${message}`);
  const lines = new LineCounter();
  const tokens = parseYamlTree(text, lines);
  if (yamlTreeExceedsDepth(tokens)) throw tooDeep();
  let value: unknown;
  let duplicates: string[] = [];
  try {
    // As upstream's YAML 1.1 reader, `<<` merges a mapping into another.
    const docs = [...new Composer({ schema: 'core', uniqueKeys: false, intAsBigInt: false, merge: true }).compose(tokens)];
    if (docs.length !== 1) throw new Error(docs.length === 0 ? 'empty document' : 'expected one YAML document');
    const doc = docs[0];
    const err = doc.errors[0];
    if (err) {
      const { line, col } = lines.linePos(err.pos[0]);
      throw new Error(`${err.message.split('\n')[0]} at line ${line}, column ${col}`);
    }
    value = doc.toJS({ maxAliasCount: 100 });
    if (findDuplicates) duplicates = yamlDuplicates(doc, lines);
  } catch (e) {
    throw fail((e as Error).message.split('\n')[0]);
  }
  if (valueExceedsDepth(value)) throw tooDeep();
  return { value, duplicates };
}

/**
 * A YAML body that is JSON text (kubectl sends its apply configurations so)
 * read as JSON: the same values (JSON is YAML), at a tenth of the YAML
 * reader's cost. Only when nothing could read differently: a body that is
 * not plain JSON, repeats a key (the YAML reader's words name the lines), or
 * holds a `<<` (a YAML merge key) goes to the YAML reader. numberText is left
 * out, as the YAML reader gives none.
 */
function jsonAsYaml(text: string, findDuplicates: boolean): ParsedBody | undefined {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return undefined;
  if (text.includes('<<')) return undefined;
  let read: ParsedBody;
  try {
    read = readJson(text, findDuplicates);
  } catch {
    return undefined;
  }
  return read.duplicates.length === 0 ? { value: read.value, duplicates: [] } : undefined;
}

/** Parses JSON text; malformed or too deeply nested input is a 400 naming what was wrong. */
export function parseJson(text: string): unknown {
  return readJson(text).value;
}

/**
 * Parses JSON text: one walk for its depth, repeated keys (when asked) and
 * the literal text of its numbers, then JSON.parse for the value.
 */
export function readJson(text: string, findDuplicates = false): ParsedBody {
  if (text.trim() === '') throw errors.badRequest('the object provided is unrecognized: empty body');
  const facts = scanJsonText(text, findDuplicates);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw errors.badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
  return { value, duplicates: facts.duplicates(value).map((f) => `duplicate field "${f}"`), numberText: facts.numberText };
}

/**
 * Parses a body in its format. Protobuf needs the schemas of the kinds that
 * may arrive (built-in kinds only); without them it is a 415. Repeated keys
 * are looked for when `findDuplicates` (fieldValidation Warn or Strict).
 */
export function parseBody(body: Buffer, format: BodyFormat, protobufSchemas?: SchemaLookup, findDuplicates = false): ParsedBody {
  if (format === 'protobuf') {
    if (!protobufSchemas) throw errors.unsupportedMediaType(vocabulary.protobufMediaType, bodyMediaTypes.slice(0, 2));
    return { value: decodeProtobufObject(body, protobufSchemas), duplicates: [] };
  }
  const text = body.toString('utf8');
  return format === 'yaml' ? readYaml(text, findDuplicates) : readJson(text, findDuplicates);
}

/** The value of a body in its format (see parseBody). */
export function decodeBody(body: Buffer, format: BodyFormat, protobufSchemas?: SchemaLookup): unknown {
  return parseBody(body, format, protobufSchemas).value;
}

