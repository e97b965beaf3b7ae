// A set of field paths, stored as a trie: at each level the elements that are
// members of the set themselves, and the children with their own sub-sets.
// Elements are identified by their FieldsV1 key. Operations return new sets.

import { comparePE, serializePE, type Path, type PathElement } from './pathelement.js';

interface Child { pe: PathElement; set: FieldSet }

export class FieldSet {
  private readonly members = new Map<string, PathElement>();
  private readonly children = new Map<string, Child>();

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (and, implicitly, the way down to it). Mutates: used while building. */
  insert(path: Path): this {
    if (path.length === 0) return this;
    const [head, ...rest] = path;
    const id = serializePE(head);
    if (rest.length === 0) {
      this.members.set(id, head);
    } else {
      let child = this.children.get(id);
      if (!child) {
        child = { pe: head, set: new FieldSet() };
        this.children.set(id, child);
      }
      child.set.insert(rest);
    }
    return this;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    const id = serializePE(path[0]);
    if (path.length === 1) return this.members.has(id);
    return this.children.get(id)?.set.has(path.slice(1)) ?? false;
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(serializePE(pe));
  }

  /** The sub-set below one element (SMD's WithPrefix), or undefined when there is none. */
  child(pe: PathElement): FieldSet | undefined {
    return this.children.get(serializePE(pe))?.set;
  }

  isEmpty(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }

  /** Member elements, sorted. */
  memberElements(): PathElement[] {
    return [...this.members.values()].sort(comparePE);
  }

  /** Children with their sub-sets, sorted. */
  childEntries(): Array<readonly [PathElement, FieldSet]> {
    return [...this.children.values()].sort((a, b) => comparePE(a.pe, b.pe)).map((c) => [c.pe, c.set] as const);
  }

  union(o: FieldSet): FieldSet {
    const out = this.copy();
    for (const [id, pe] of o.members) out.members.set(id, pe);
    for (const [id, c] of o.children) {
      const mine = out.children.get(id);
      out.children.set(id, { pe: c.pe, set: mine ? mine.set.union(c.set) : c.set });
    }
    return out;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (o.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      const other = o.children.get(id);
      if (!other) continue;
      const both = c.set.intersection(other.set);
      if (!both.isEmpty()) out.children.set(id, { pe: c.pe, set: both });
    }
    return out;
  }

  /** Paths of this set not in `o`. A member of `o` does not remove this set's paths below it. */
  difference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (!o.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      const other = o.children.get(id);
      const rest = other ? c.set.difference(other.set) : c.set;
      if (!rest.isEmpty()) out.children.set(id, { pe: c.pe, set: rest });
    }
    return out;
  }

  /** Like difference, but a member of `o` also removes everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (!o.members.has(id)) out.members.set(id, pe);
    for (const [id, c] of this.children) {
      if (o.members.has(id)) continue;
      const other = o.children.get(id);
      const rest = other ? c.set.recursiveDifference(other.set) : c.set;
      if (!rest.isEmpty()) out.children.set(id, { pe: c.pe, set: rest });
    }
    return out;
  }

  equals(o: FieldSet): boolean {
    if (this.members.size !== o.members.size || this.children.size !== o.children.size) return false;
    for (const id of this.members.keys()) if (!o.members.has(id)) return false;
    for (const [id, c] of this.children) {
      const other = o.children.get(id);
      if (!other || !c.set.equals(other.set)) return false;
    }
    return true;
  }

  /** Every path of the set: at each level the members first, then the children, each sorted. */
  paths(prefix: Path = []): PathElement[][] {
    const out: PathElement[][] = this.memberElements().map((pe) => [...prefix, pe]);
    for (const [pe, set] of this.childEntries()) out.push(...set.paths([...prefix, pe]));
    return out;
  }

  /** A copy with `pe` as a member (used by the schema walks). */
  withMember(pe: PathElement): FieldSet {
    const out = this.copy();
    out.members.set(serializePE(pe), pe);
    return out;
  }

  /** A copy without the child `pe` (its sub-set dropped). */
  withoutChild(pe: PathElement): FieldSet {
    const out = this.copy();
    out.children.delete(serializePE(pe));
    return out;
  }

  /** A copy with `set` as the sub-set below `pe` (removed when empty). */
  withChild(pe: PathElement, set: FieldSet): FieldSet {
    const out = this.copy();
    if (set.isEmpty()) out.children.delete(serializePE(pe));
    else out.children.set(serializePE(pe), { pe, set });
    return out;
  }

  private copy(): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) out.members.set(id, pe);
    for (const [id, c] of this.children) out.children.set(id, c);
    return out;
  }
}
