// Where a validation walk is, as a field path, and the one test of a JSON
// object the walks share: in a file of their own, so that the CEL rules
// (loaded lazily, through engines.ts, by the validator) import them without
// importing the validator back.

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const childPath = (path: string, name: string): string => (path === '' ? name : `${path}.${name}`);

/**
 * Where the walk is: a base path and the keys below it, made into text only
 * for an error (a path string made for every node was a quarter of a walk).
 */
export class Path {
  private readonly keys: (string | number)[] = [];

  constructor(private readonly base: string) {}

  push(key: string | number): void {
    this.keys.push(key);
  }

  pop(): void {
    this.keys.pop();
  }

  text(): string {
    let out = this.base;
    for (const k of this.keys) out = typeof k === 'number' ? `${out}[${k}]` : childPath(out, k);
    return out;
  }
}
