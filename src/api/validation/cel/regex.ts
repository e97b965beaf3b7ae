// Every CEL function that takes a pattern (`matches` in both forms, `find`,
// `findAll`) runs on re2js, the JavaScript port of RE2/J: RE2's syntax, Go's
// wording for a pattern it refuses, and time linear in the input whatever the
// pattern, so no rule nor match condition can hold the event loop with a
// backtracking pattern. `matches` is its partial match; `find` and `findAll`
// are Go's FindString and FindAllString, which upstream's library calls, read
// off re2js's Matcher (leftmost-first matches, on code points). That matcher
// walks the matches as Java's does, which reports an empty match right after
// a match; Go's does not, so findAll drops those. No user pattern ever
// reaches `new RegExp`.

import { RE2JS } from 're2js';

// find and findAll ask `test` first: it answers whether there is any match on
// re2js's DFA, several times faster than the search for where it is (an NFA,
// or a bit-state backtracker on short inputs), so an input with no match
// costs that one pass; one with a match, a pass that stops at its end.

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

// A pattern's recent answers: the values a rule tests repeat across objects
// and across the items of one (header names, path prefixes), and a map
// lookup costs far less than a run of the engine. Bounded in entries and in
// the length of the values kept, so memory stays small whatever is sent.
const remembered = new WeakMap<RE2JS, Map<string, boolean>>();
const rememberedAnswers = 256;
const rememberedLength = 256;

/** Whether `re` matches somewhere in `s` (CEL's `matches`, a partial match). */
export function test(re: RE2JS, s: string): boolean {
  if (s.length > rememberedLength) return re.test(s);
  let answers = remembered.get(re);
  if (!answers) remembered.set(re, (answers = new Map()));
  let answer = answers.get(s);
  if (answer === undefined) {
    if (answers.size >= rememberedAnswers) answers.clear();
    answers.set(s, (answer = re.test(s)));
  }
  return answer;
}

/** Go's FindAllString: successive non-overlapping matches, at most `limit` (all when negative); an empty match right after a match is skipped. */
export function findAll(re: RE2JS, s: string, limit: number): string[] {
  const out: string[] = [];
  if (limit === 0 || !re.test(s)) return out;
  const m = re.matcher(s);
  // The matcher resumes where Go's does: at the end of a match, one code point on after an empty one.
  for (let previousEnd = -1; (limit < 0 || out.length < limit) && m.find();) {
    const start = m.start(), end = m.end();
    // Java's matcher reports an empty match that begins where the last match ended ('X*' on 'aX': 'X', then '' at 2); Go's skips it.
    if (start !== end || start !== previousEnd) out.push(s.slice(start, end));
    previousEnd = end;
  }
  return out;
}

/** Go's FindString: the first match, or '' when there is none. */
export function find(re: RE2JS, s: string): string {
  if (!re.test(s)) return '';
  const m = re.matcher(s);
  return m.find() ? s.slice(m.start(), m.end()) : '';
}
