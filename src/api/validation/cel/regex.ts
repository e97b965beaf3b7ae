// Every CEL function that takes a pattern (`matches` in both forms, `find`,
// `findAll`) runs on RE2, as upstream's do: time linear in the input, whatever
// the pattern, so no rule nor match condition can hold the event loop with a
// backtracking pattern. The package's engine answers only "is there a match"
// (a DFA with an NFA fallback); `find` and `findAll` need where the match is,
// so they run the same compiled program (its instructions, its empty-width
// context) on a Pike VM here: one pass over the input with at most one thread
// per instruction, threads kept in priority order, so the match is RE2's
// leftmost-first one. No user pattern ever reaches `new RegExp`.

import { RE2JS } from '@bufbuild/re2';

interface Instruction { op: number; out: number; arg: number; matchRune(r: number): boolean }
interface Program { start: number; numInst(): number; getInst(pc: number): Instruction }
interface Engine { prog: Program; prefix: string; executeEngine(input: unknown, pos: number, anchor: number, ncap: number): number[] | null }

// The engine's instruction set and input reader are not among the package's
// exports; they are loaded by their files next to its entry point.
const packageEntry = import.meta.resolve('@bufbuild/re2');
const load = async <T>(file: string): Promise<T> => await import(new URL(file, packageEntry).href) as T;
const { Inst } = await load<{ Inst: Record<'ALT' | 'ALT_MATCH' | 'CAPTURE' | 'EMPTY_WIDTH' | 'FAIL' | 'MATCH' | 'NOP', number> & { isRuneOp(op: number): boolean } }>('./Inst.js');
const { emptyOpContext } = await load<{ emptyOpContext(before: number, after: number): number }>('./Utils.js');
const { fromUTF16 } = await load<{ fromUTF16(s: string): unknown }>('./MachineInput.js');
const { UNANCHORED } = await load<{ UNANCHORED: number }>('./RE2Flags.js');

const cache = new Map<string, RE2JS>();
const cacheSize = 1000;

/** The compiled pattern (RE2 syntax); throws the engine's syntax error, Go's wording (`error parsing regexp: ...`). */
export function compileRegex(pattern: string): RE2JS {
  let re = cache.get(pattern);
  if (!re) {
    re = RE2JS.compile(pattern);
    if (cache.size >= cacheSize) cache.clear();
    cache.set(pattern, re);
  }
  return re;
}

/** The code point starting at `i` (-1 at the end) and how many UTF-16 units it takes. */
function runeAt(s: string, i: number): number {
  return i < s.length ? s.codePointAt(i)! : -1;
}
const widthOf = (r: number): number => (r > 0xffff ? 2 : 1);

function runeBefore(s: string, i: number): number {
  if (i <= 0) return -1;
  const low = s.charCodeAt(i - 1);
  if (low >= 0xdc00 && low <= 0xdfff && i >= 2) {
    const high = s.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return s.codePointAt(i - 2)!;
  }
  return low;
}

/** The threads of one step: instructions in priority order, each with where its match began; a pc at most once. */
class Threads {
  readonly pcs: Int32Array;
  readonly starts: Int32Array;
  size = 0;
  private readonly seen: Uint32Array;
  private stamp = 1;
  constructor(n: number) {
    this.pcs = new Int32Array(n);
    this.starts = new Int32Array(n);
    this.seen = new Uint32Array(n);
  }
  clear(): void { this.size = 0; this.stamp++; }
  /** Marks `pc` visited this step; false when it already was. */
  visit(pc: number): boolean {
    if (this.seen[pc] === this.stamp) return false;
    this.seen[pc] = this.stamp;
    return true;
  }
  push(pc: number, start: number): void { this.pcs[this.size] = pc; this.starts[this.size] = start; this.size++; }
}

/**
 * Adds the thread at `pc` and every thread it reaches without reading (in
 * the order RE2 prefers them: an alternation's first branch first), under
 * the empty-width conditions `context` holds.
 */
function follow(prog: Program, list: Threads, pc: number, start: number, context: number, stack: number[]): void {
  stack.push(pc);
  while (stack.length) {
    const p = stack.pop()!;
    if (!list.visit(p)) continue;
    const inst = prog.getInst(p);
    switch (inst.op) {
      case Inst.ALT: case Inst.ALT_MATCH:
        stack.push(inst.arg, inst.out);
        break;
      case Inst.NOP: case Inst.CAPTURE:
        stack.push(inst.out);
        break;
      case Inst.EMPTY_WIDTH:
        if ((inst.arg & ~context) === 0) stack.push(inst.out);
        break;
      case Inst.FAIL:
        break;
      default:
        list.push(p, start);
    }
  }
}

/** Runs one compiled pattern over one string, match after match, with its thread lists made once. */
class Matcher {
  private readonly prog: Program;
  /** The literal text every match begins with (case-sensitive; '' when there is none). */
  private readonly prefix: string;
  private current: Threads;
  private next: Threads;
  private readonly stack: number[] = [];
  /** Whether the package's own engine found any match at all (it answers that quickly). */
  readonly any: boolean;
  constructor(re: RE2JS, private readonly s: string) {
    const engine = re.re2() as unknown as Engine;
    this.prog = engine.prog;
    this.prefix = engine.prefix;
    this.any = engine.executeEngine(fromUTF16(s), 0, UNANCHORED, 0) !== null;
    const n = this.prog.numInst();
    this.current = new Threads(n);
    this.next = new Threads(n);
  }

  /** RE2's leftmost-first match starting at or after `from` (UTF-16 offsets), or undefined. */
  matchFrom(from: number): [number, number] | undefined {
    if (!this.any) return undefined;
    const { prog, s, stack } = this;
    let current = this.current, next = this.next;
    current.clear();
    let match: [number, number] | undefined;
    let before = runeBefore(s, from);
    for (let i = from; ;) {
      // No thread alive and none found: the next match begins where the prefix next occurs.
      if (current.size === 0 && match === undefined && this.prefix !== '' && !s.startsWith(this.prefix, i)) {
        const at = s.indexOf(this.prefix, i);
        if (at < 0) break;
        i = at;
        before = runeBefore(s, i);
      }
      const r = runeAt(s, i);
      const width = r < 0 ? 0 : widthOf(r);
      // A thread begun here comes after every thread begun earlier: leftmost wins.
      if (match === undefined) follow(prog, current, prog.start, i, emptyOpContext(before, r), stack);
      if (current.size === 0 && (match !== undefined || r < 0)) break;
      next.clear();
      const after = r < 0 ? 0 : emptyOpContext(r, runeAt(s, i + width));
      for (let t = 0; t < current.size; t++) {
        const pc = current.pcs[t]!;
        const inst = prog.getInst(pc);
        if (inst.op === Inst.MATCH) {
          // Threads after this one have lower priority: they are dropped.
          match = [current.starts[t]!, i];
          break;
        }
        if (r >= 0 && Inst.isRuneOp(inst.op) && inst.matchRune(r)) follow(prog, next, inst.out, current.starts[t]!, after, stack);
      }
      if (r < 0) break;
      [current, next] = [next, current];
      before = r;
      i += width;
    }
    this.current = current;
    this.next = next;
    return match;
  }
}

/** Go's FindAllString: successive non-overlapping matches, at most `limit` (all when negative); an empty match right after a match is skipped. */
export function findAll(re: RE2JS, s: string, limit: number): string[] {
  const out: string[] = [];
  const max = limit < 0 ? s.length + 1 : limit;
  let previousEnd = -1;
  const matcher = new Matcher(re, s);
  for (let pos = 0; out.length < max && pos <= s.length;) {
    const m = matcher.matchFrom(pos);
    if (!m) break;
    let accept = true;
    if (m[1] === pos) {
      if (m[0] === previousEnd) accept = false;
      pos += pos < s.length ? widthOf(runeAt(s, pos)) : 1;
    } else {
      pos = m[1];
    }
    previousEnd = m[1];
    if (accept) out.push(s.slice(m[0], m[1]));
  }
  return out;
}

/** Go's FindString: the first match, or '' when there is none. */
export function find(re: RE2JS, s: string): string {
  const m = new Matcher(re, s).matchFrom(0);
  return m ? s.slice(m[0], m[1]) : '';
}
