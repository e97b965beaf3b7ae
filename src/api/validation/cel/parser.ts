// The CEL parser of validation rules and match conditions: the language as
// @bufbuild/cel's grammar reads it, plus the optional syntax upstream turns
// on with its optional types (`a.?f`, `a[?k]`, `[?x]`, `{?k: v}`) and the
// optional library's macros (`o.optMap(v, e)`, `o.optFlatMap(v, e)`), which
// the library's parser does not read. A recursive descent over tokens,
// building the same syntax tree (cel.expr.Expr) with the same macro
// expansions (has, all, exists, exists_one, map, filter). Literal tokens
// are handed to the library's parser, so escapes and number forms are read
// exactly as it reads them.

import { create } from '@bufbuild/protobuf';
import { parse as parseLiteral } from '@bufbuild/cel';
import { ExprSchema, type Expr, type Expr_CreateStruct_Entry } from '@bufbuild/cel-spec/cel/expr/syntax_pb.js';

/** A syntax error, with upstream's `<input>:line:column:` place. */
export class CelSyntaxError extends Error {}

type TokenKind = 'ident' | 'number' | 'string' | 'bytes' | 'punct' | 'eof';
interface Token { kind: TokenKind; text: string; at: number }

const punctuation = ['==', '!=', '<=', '>=', '&&', '||', '<', '>', '+', '-', '*', '/', '%', '!', '?', ':', '.', ',', '(', ')', '[', ']', '{', '}'];
const reserved = new Set(['as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while']);
const accumulator = '@result';
/** The function transformMap's expansion calls (libraries.ts offers it). */
export const mapInsert = 'cel.@mapInsert';

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const fail = (at: number, what: string): never => { throw syntaxError(src, at, what); };
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) { i++; continue; }
    if (src.startsWith('//', i)) { while (i < src.length && src[i] !== '\n') i++; continue; }
    const start = i;
    // String and bytes literals, with their r/b prefixes and triple quotes.
    const prefix = /^(?:[rR][bB]?|[bB][rR]?)?(?='|")/.exec(src.slice(i, i + 3));
    if (prefix) {
      const raw = /r/i.test(prefix[0]);
      i += prefix[0].length;
      const quote = src.startsWith(src[i]!.repeat(3), i) ? src[i]!.repeat(3) : src[i]!;
      i += quote.length;
      for (;;) {
        if (i >= src.length) fail(start, 'Syntax error: token recognition error at: ' + JSON.stringify(src.slice(start)));
        if (!raw && src[i] === '\\') {
          const escape = /^\\(?:[abfnrtv"'`\\?]|[xX][0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2})/.exec(src.slice(i, i + 10));
          if (!escape) fail(start, `Syntax error: token recognition error at: '${src.slice(start, i + 2)}'`);
          i += escape![0].length;
          continue;
        }
        if (src.startsWith(quote, i)) { i += quote.length; break; }
        if (quote.length === 1 && (src[i] === '\n' || src[i] === '\r')) fail(start, 'Syntax error: token recognition error at: ' + JSON.stringify(src.slice(start, i)));
        i++;
      }
      tokens.push({ kind: /b/i.test(prefix[0]) ? 'bytes' : 'string', text: src.slice(start, i), at: start });
      continue;
    }
    const number = /^(?:0[xX][0-9a-fA-F]+[uU]?|\d+\.\d+(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\d+[uU]?)/.exec(src.slice(i));
    if (number && !(c === '.' && tokens.length && isOperandEnd(tokens[tokens.length - 1]!))) {
      tokens.push({ kind: 'number', text: number[0], at: start });
      i += number[0].length;
      continue;
    }
    const ident = /^[_a-zA-Z][_a-zA-Z0-9]*/.exec(src.slice(i));
    if (ident) {
      tokens.push({ kind: 'ident', text: ident[0], at: start });
      i += ident[0].length;
      continue;
    }
    const p = punctuation.find((x) => src.startsWith(x, i));
    if (!p) fail(start, `Syntax error: token recognition error at: '${c}'`);
    tokens.push({ kind: 'punct', text: p!, at: start });
    i += p!.length;
  }
  tokens.push({ kind: 'eof', text: '<EOF>', at: src.length });
  return tokens;
}

function isOperandEnd(t: Token): boolean {
  return t.kind === 'ident' || t.kind === 'number' || t.kind === 'string' || t.kind === 'bytes' || (t.kind === 'punct' && (t.text === ')' || t.text === ']' || t.text === '}'));
}

function syntaxError(src: string, at: number, what: string): CelSyntaxError {
  const before = src.slice(0, at);
  const line = before.split('\n').length;
  const column = at - (before.lastIndexOf('\n') + 1) + 1;
  return new CelSyntaxError(`<input>:${line}:${column}: ${what}`);
}

/** Parses `src` into CEL's syntax tree; throws CelSyntaxError. */
export function parseCel(src: string): Expr {
  return new Parser(src).parseAll();
}

class Parser {
  private readonly tokens: Token[];
  private pos = 0;
  private nextId = 0;

  constructor(private readonly src: string) {
    this.tokens = tokenize(src);
  }

  parseAll(): Expr {
    const e = this.expr();
    if (this.peek().kind !== 'eof') this.fail(this.peek(), `Syntax error: extraneous input '${this.peek().text}' expecting <EOF>`);
    return e;
  }

  // --- tokens

  private peek(offset = 0): Token { return this.tokens[Math.min(this.pos + offset, this.tokens.length - 1)]!; }
  private next(): Token { return this.tokens[this.pos++]!; }
  private is(text: string, offset = 0): boolean { const t = this.peek(offset); return t.kind === 'punct' && t.text === text; }
  private accept(text: string): boolean { if (this.is(text)) { this.pos++; return true; } return false; }
  private expect(text: string): Token {
    const t = this.peek();
    if (!this.is(text)) this.fail(t, `Syntax error: mismatched input '${t.text}' expecting '${text}'`);
    return this.next();
  }
  private fail(t: Token, what: string): never { throw syntaxError(this.src, t.at, what); }

  // --- nodes

  private node(kind: Expr['exprKind']): Expr {
    return create(ExprSchema, { id: BigInt(++this.nextId), exprKind: kind });
  }
  private call(fn: string, args: Expr[], target?: Expr): Expr {
    return this.node({ case: 'callExpr', value: { function: fn, args, ...(target ? { target } : {}) } as never });
  }
  private ident(name: string): Expr { return this.node({ case: 'identExpr', value: { name } as never }); }
  private constant(kind: { case: 'boolValue'; value: boolean } | { case: 'int64Value'; value: bigint } | { case: 'stringValue'; value: string }): Expr {
    return this.node({ case: 'constExpr', value: { constantKind: kind } as never });
  }
  private list(elements: Expr[], optionalIndices: number[] = []): Expr {
    return this.node({ case: 'listExpr', value: { elements, optionalIndices } as never });
  }

  // --- grammar, loosest first

  private expr(): Expr {
    const cond = this.or();
    if (!this.accept('?')) return cond;
    const yes = this.or();
    this.expect(':');
    const no = this.expr();
    return this.call('_?_:_', [cond, yes, no]);
  }

  private or(): Expr {
    const terms = [this.and()];
    while (this.accept('||')) terms.push(this.and());
    return this.balanced('_||_', terms, 0, terms.length - 2);
  }

  private and(): Expr {
    const terms = [this.relation()];
    while (this.accept('&&')) terms.push(this.relation());
    return this.balanced('_&&_', terms, 0, terms.length - 2);
  }

  /** A chain of && or || as a balanced tree over its operators lo..hi, as upstream's parser builds it. */
  private balanced(fn: string, terms: Expr[], lo: number, hi: number): Expr {
    if (hi < lo) return terms[0]!;
    const mid = Math.floor((lo + hi + 1) / 2);
    const left = mid === lo ? terms[mid]! : this.balanced(fn, terms, lo, mid - 1);
    const right = mid === hi ? terms[mid + 1]! : this.balanced(fn, terms, mid + 1, hi);
    return this.call(fn, [left, right]);
  }

  private relation(): Expr {
    let e = this.addition();
    for (;;) {
      const t = this.peek();
      if (t.kind === 'punct' && ['<', '<=', '>', '>=', '==', '!='].includes(t.text)) { this.pos++; e = this.call(`_${t.text}_`, [e, this.addition()]); continue; }
      if (t.kind === 'ident' && t.text === 'in') { this.pos++; e = this.call('@in', [e, this.addition()]); continue; }
      return e;
    }
  }

  private addition(): Expr {
    let e = this.multiplication();
    while (this.is('+') || this.is('-')) { const op = this.next().text; e = this.call(`_${op}_`, [e, this.multiplication()]); }
    return e;
  }

  private multiplication(): Expr {
    let e = this.unary();
    while (this.is('*') || this.is('/') || this.is('%')) { const op = this.next().text; e = this.call(`_${op}_`, [e, this.unary()]); }
    return e;
  }

  private unary(): Expr {
    if (this.is('!') || this.is('-')) {
      const op = this.peek().text;
      let count = 0;
      while (this.is(op)) { this.pos++; count++; }
      // A negative number literal is one constant (so the smallest int64 is written as it is).
      if (op === '-' && this.peek().kind === 'number' && !/[uU]$/.test(this.peek().text)) {
        const t = this.next();
        const literal = this.member(this.literalFrom(`-${t.text}`, t));
        return count % 2 === 0 ? this.call('-_', [literal]) : literal;
      }
      const operand = this.member(this.primary());
      if (count % 2 === 0) return operand;
      return this.call(`${op}_`, [operand]);
    }
    return this.member(this.primary());
  }

  private member(e: Expr): Expr {
    for (;;) {
      if (this.accept('.')) {
        const optional = this.accept('?');
        const name = this.selector();
        if (!optional && this.accept('(')) {
          e = this.memberCall(e, name.text, this.exprList(')'), name);
          continue;
        }
        e = optional ? this.call('_?._', [e, this.constant({ case: 'stringValue', value: name.text })]) : this.select(e, name.text);
        continue;
      }
      if (this.accept('[')) {
        const optional = this.accept('?');
        const index = this.expr();
        this.expect(']');
        e = this.call(optional ? '_[?_]' : '_[_]', [e, index]);
        continue;
      }
      return e;
    }
  }

  private select(operand: Expr, field: string, testOnly = false): Expr {
    return this.node({ case: 'selectExpr', value: { operand, field, testOnly } as never });
  }

  private selector(): Token {
    const t = this.peek();
    if (t.kind !== 'ident') this.fail(t, `Syntax error: mismatched input '${t.text}' expecting IDENTIFIER`);
    if (t.text === 'true' || t.text === 'false' || t.text === 'null' || t.text === 'in') this.fail(t, `Syntax error: reserved keyword '${t.text}'`);
    return this.next();
  }

  private exprList(close: string): Expr[] {
    const out: Expr[] = [];
    if (this.accept(close)) return out;
    for (;;) {
      out.push(this.expr());
      if (this.accept(close)) return out;
      this.expect(',');
    }
  }

  private primary(): Expr {
    const t = this.peek();
    if (t.kind === 'number' || t.kind === 'string' || t.kind === 'bytes') { this.pos++; return this.literalFrom(t.text, t); }
    if (t.kind === 'ident') {
      if (t.text === 'true' || t.text === 'false') { this.pos++; return this.constant({ case: 'boolValue', value: t.text === 'true' }); }
      if (t.text === 'null') { this.pos++; return this.node({ case: 'constExpr', value: { constantKind: { case: 'nullValue', value: 0 } } as never }); }
      if (reserved.has(t.text) || t.text === 'in') this.fail(t, `Syntax error: reserved identifier '${t.text}'`);
      this.pos++;
      if (this.accept('(')) return this.globalCall(t.text, this.exprList(')'), t);
      const qualified = this.messageName(t.text);
      if (qualified !== undefined) return this.message(qualified);
      return this.ident(t.text);
    }
    if (this.is('.') && this.peek(1).kind === 'ident') {
      // A leading dot names the root namespace: `.name` is the same name here.
      this.pos++;
      return this.primary();
    }
    if (this.accept('(')) {
      const e = this.expr();
      this.expect(')');
      return e;
    }
    if (this.accept('[')) {
      const elements: Expr[] = [];
      const optional: number[] = [];
      while (!this.is(']')) {
        if (this.accept('?')) optional.push(elements.length);
        elements.push(this.expr());
        if (!this.accept(',')) break;
      }
      this.expect(']');
      return this.list(elements, optional);
    }
    if (this.accept('{')) {
      const entries: Expr_CreateStruct_Entry[] = [];
      while (!this.is('}')) {
        const optionalEntry = this.accept('?');
        const key = this.expr();
        this.expect(':');
        const value = this.expr();
        entries.push({ id: BigInt(++this.nextId), keyKind: { case: 'mapKey', value: key }, value, optionalEntry } as never);
        if (!this.accept(',')) break;
      }
      this.expect('}');
      return this.node({ case: 'structExpr', value: { messageName: '', entries } as never });
    }
    return this.fail(t, t.kind === 'eof' ? `Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}` : `Syntax error: extraneous input '${t.text}'`);
  }

  /** `a.b.C{`: the name of a message construction, when one follows (the tokens are consumed then). */
  private messageName(first: string): string | undefined {
    let i = 0;
    const parts = [first];
    while (this.is('.', i) && this.peek(i + 1).kind === 'ident') { parts.push(this.peek(i + 1).text); i += 2; }
    if (!this.is('{', i)) return undefined;
    this.pos += i + 1;
    return parts.join('.');
  }

  /** `Name{field: value, ...}` (no message types are declared here, so it fails when evaluated). */
  private message(messageName: string): Expr {
    const entries: Expr_CreateStruct_Entry[] = [];
    while (!this.is('}')) {
      const optionalEntry = this.accept('?');
      const field = this.selector().text;
      this.expect(':');
      entries.push({ id: BigInt(++this.nextId), keyKind: { case: 'fieldKey', value: field }, value: this.expr(), optionalEntry } as never);
      if (!this.accept(',')) break;
    }
    this.expect('}');
    return this.node({ case: 'structExpr', value: { messageName, entries } as never });
  }

  /** A literal's constant, as the library's parser reads the same text. */
  private literalFrom(text: string, t: Token): Expr {
    let parsed: Expr;
    try {
      parsed = parseLiteral(text).expr;
    } catch {
      return this.fail(t, `Syntax error: invalid literal ${text}`);
    }
    if (parsed.exprKind.case !== 'constExpr') return this.fail(t, `Syntax error: invalid literal ${text}`);
    const c = parsed.exprKind.value.constantKind;
    if (c.case === 'int64Value' && (c.value > 2n ** 63n - 1n || c.value < -(2n ** 63n))) return this.fail(t, 'invalid int literal');
    if (c.case === 'uint64Value' && c.value > 2n ** 64n - 1n) return this.fail(t, 'invalid uint literal');
    if (c.case === 'doubleValue' && !Number.isFinite(c.value)) return this.fail(t, 'invalid double literal');
    return this.node({ case: 'constExpr', value: parsed.exprKind.value });
  }

  // --- calls and macros

  private globalCall(name: string, args: Expr[], at: Token): Expr {
    if (name === 'has') {
      const arg = args[0];
      if (args.length !== 1 || arg?.exprKind.case !== 'selectExpr') this.fail(at, 'invalid argument to has() macro');
      return this.select(arg.exprKind.value.operand!, arg.exprKind.value.field, true);
    }
    return this.call(name, args);
  }

  private memberCall(target: Expr, name: string, args: Expr[], at: Token): Expr {
    const v = (i: number): string => {
      const a = args[i];
      if (a?.exprKind.case !== 'identExpr') this.fail(at, 'argument must be a simple name');
      return a.exprKind.value.name;
    };
    const acc = () => this.ident(accumulator);
    switch (`${name}/${args.length}`) {
      case 'all/2':
        return this.fold(target, v(0), this.constant({ case: 'boolValue', value: true }), this.call('@not_strictly_false', [acc()]), this.call('_&&_', [acc(), args[1]!]), acc());
      case 'exists/2':
        return this.fold(target, v(0), this.constant({ case: 'boolValue', value: false }), this.call('@not_strictly_false', [this.call('!_', [acc()])]), this.call('_||_', [acc(), args[1]!]), acc());
      case 'exists_one/2': case 'existsOne/2':
        return this.fold(target, v(0), this.constant({ case: 'int64Value', value: 0n }), this.constant({ case: 'boolValue', value: true }),
          this.call('_?_:_', [args[1]!, this.call('_+_', [acc(), this.constant({ case: 'int64Value', value: 1n })]), acc()]),
          this.call('_==_', [acc(), this.constant({ case: 'int64Value', value: 1n })]));
      case 'map/2':
        return this.listFold(target, v(0), this.call('_+_', [acc(), this.list([args[1]!])]));
      case 'map/3':
        return this.listFold(target, v(0), this.call('_?_:_', [args[1]!, this.call('_+_', [acc(), this.list([args[2]!])]), acc()]));
      case 'filter/2':
        return this.listFold(target, v(0), this.call('_?_:_', [args[1]!, this.call('_+_', [acc(), this.list([this.ident(v(0))])]), acc()]));
      // Two-variable comprehensions (upstream 1.32): index (or key) and element (or value).
      case 'all/3':
        return this.fold(target, v(0), this.constant({ case: 'boolValue', value: true }), this.call('@not_strictly_false', [acc()]), this.call('_&&_', [acc(), args[2]!]), acc(), v(1));
      case 'exists/3':
        return this.fold(target, v(0), this.constant({ case: 'boolValue', value: false }), this.call('@not_strictly_false', [this.call('!_', [acc()])]), this.call('_||_', [acc(), args[2]!]), acc(), v(1));
      case 'exists_one/3': case 'existsOne/3':
        return this.fold(target, v(0), this.constant({ case: 'int64Value', value: 0n }), this.constant({ case: 'boolValue', value: true }),
          this.call('_?_:_', [args[2]!, this.call('_+_', [acc(), this.constant({ case: 'int64Value', value: 1n })]), acc()]),
          this.call('_==_', [acc(), this.constant({ case: 'int64Value', value: 1n })]), v(1));
      case 'transformList/3':
        return this.listFold(target, v(0), this.call('_+_', [acc(), this.list([args[2]!])]), v(1));
      case 'transformList/4':
        return this.listFold(target, v(0), this.call('_?_:_', [args[2]!, this.call('_+_', [acc(), this.list([args[3]!])]), acc()]), v(1));
      case 'transformMap/3':
        return this.mapFold(target, v(0), v(1), this.call(mapInsert, [acc(), this.ident(v(0)), args[2]!]));
      case 'transformMap/4':
        return this.mapFold(target, v(0), v(1), this.call('_?_:_', [args[2]!, this.call(mapInsert, [acc(), this.ident(v(0)), args[3]!]), acc()]));
      case 'optMap/2': case 'optFlatMap/2': {
        // o.optMap(x, e): o.hasValue() ? optional.of(e with x bound to o.value()) : optional.none()
        const bound = this.bind(v(0), this.call('value', [], target), args[1]!);
        const some = name === 'optMap' ? this.call('of', [bound], this.ident('optional')) : bound;
        return this.call('_?_:_', [this.call('hasValue', [], target), some, this.call('none', [], this.ident('optional'))]);
      }
      default:
        return this.call(name, args, target);
    }
  }

  private fold(range: Expr, iterVar: string, init: Expr, condition: Expr, step: Expr, result: Expr, iterVar2 = ''): Expr {
    return this.node({
      case: 'comprehensionExpr',
      value: { iterRange: range, iterVar, iterVar2, accuVar: accumulator, accuInit: init, loopCondition: condition, loopStep: step, result } as never,
    });
  }

  private listFold(range: Expr, iterVar: string, step: Expr, iterVar2 = ''): Expr {
    return this.fold(range, iterVar, this.list([]), this.constant({ case: 'boolValue', value: true }), step, this.ident(accumulator), iterVar2);
  }

  private mapFold(range: Expr, iterVar: string, iterVar2: string, step: Expr): Expr {
    const empty = this.node({ case: 'structExpr', value: { messageName: '', entries: [] } as never });
    return this.fold(range, iterVar, empty, this.constant({ case: 'boolValue', value: true }), step, this.ident(accumulator), iterVar2);
  }

  /** `name` bound to `value` while `body` is evaluated: a comprehension over nothing, as upstream's cel.bind. */
  private bind(name: string, value: Expr, body: Expr): Expr {
    return this.node({
      case: 'comprehensionExpr',
      value: {
        iterRange: this.list([]), iterVar: '#unused', iterVar2: '', accuVar: name, accuInit: value,
        loopCondition: this.constant({ case: 'boolValue', value: false }), loopStep: this.ident(name), result: body,
      } as never,
    });
  }
}
