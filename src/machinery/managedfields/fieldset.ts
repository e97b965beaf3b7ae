// A set of field paths, stored as a trie: at each level the elements that are
// members of the set themselves, and the children with their own sub-sets.
// Elements are identified by their FieldsV1 key. Operations return new sets.

import { compareStrings, comparePE, serializePE, type Path, type PathElement } from './pathelement.js';

interface Child { pe: PathElement; set: FieldSet }

export interface LevelElement { id: string; pe: PathElement; member: boolean; sub?: FieldSet }

/** Upstream's order of elements; two fields (the common case) compare by their keys, which share the `f:` prefix. */
function byElement(a: LevelElement, b: LevelElement): number {
  return a.id.startsWith('f:') && b.id.startsWith('f:') ? compareStrings(a.id, b.id) : comparePE(a.pe, b.pe);
}

/**
 * Most sets a write builds stay empty at some level (a comparison's added
 * and removed, a leaf's children): they share these two empty maps, and a
 * set makes maps of its own on its first insert (see ownMembers/ownChildren;
 * nothing may add to these).
 */
const noMembers: ReadonlyMap<string, PathElement> = new Map();
const noChildren: ReadonlyMap<string, Child> = new Map();

export class FieldSet {
  private members = noMembers as Map<string, PathElement>;
  private children = noChildren as Map<string, Child>;

  /** This set's members, to add to. */
  private ownMembers(): Map<string, PathElement> {
    return this.members === noMembers ? (this.members = new Map()) : this.members;
  }

  /** This set's children, to add to. */
  private ownChildren(): Map<string, Child> {
    return this.children === noChildren ? (this.children = new Map()) : this.children;
  }

  static of(...paths: Path[]): FieldSet {
    const s = new FieldSet();
    for (const p of paths) s.insert(p);
    return s;
  }

  /** Adds a path (and, implicitly, the way down to it). Mutates: used while building. */
  insert(path: Path): this {
    if (path.length === 0) return this;
    let set: FieldSet = this;
    for (let i = 0; i < path.length - 1; i++) {
      const pe = path[i];
      const id = serializePE(pe);
      let child = set.children.get(id);
      if (!child) {
        child = { pe, set: new FieldSet() };
        set.ownChildren().set(id, child);
      }
      set = child.set;
    }
    const last = path[path.length - 1];
    set.ownMembers().set(serializePE(last), last);
    return this;
  }

  /** Adds one element (`id`: its FieldsV1 key, when the caller has it) as a member of this level. Mutates: used while building. */
  addMember(pe: PathElement, id = serializePE(pe)): this {
    this.ownMembers().set(id, pe);
    return this;
  }

  /**
   * The sub-set below one element, created when missing. Mutates: used while
   * building, by callers that then insert below it (an empty child is no path).
   */
  childSet(pe: PathElement, id = serializePE(pe)): FieldSet {
    let child = this.children.get(id);
    if (!child) {
      child = { pe, set: new FieldSet() };
      this.ownChildren().set(id, child);
    }
    return child.set;
  }

  /**
   * Adds every path of `o`, copying what it takes, so that merging many sets
   * costs their sizes once (union copies this set each time). Mutates: only
   * for sets built by the caller, since other sets share their nodes.
   */
  addAll(o: FieldSet): this {
    for (const [id, pe] of o.members) this.ownMembers().set(id, pe);
    for (const c of o.children.values()) this.childSet(c.pe).addAll(c.set);
    return this;
  }

  has(path: Path): boolean {
    if (path.length === 0) return false;
    let set: FieldSet | undefined = this;
    for (let i = 0; i < path.length - 1 && set; i++) set = set.children.get(serializePE(path[i]))?.set;
    return set?.members.has(serializePE(path[path.length - 1])) ?? false;
  }

  hasMember(pe: PathElement): boolean {
    return this.members.has(serializePE(pe));
  }

  /** The sub-set below one element (SMD's WithPrefix), or undefined when there is none. */
  child(pe: PathElement): FieldSet | undefined {
    return this.children.get(serializePE(pe))?.set;
  }

  /** hasMember and child by the element's FieldsV1 key, for walks that have the key and no element. */
  hasMemberId(id: string): boolean {
    return this.members.has(id);
  }

  childById(id: string): FieldSet | undefined {
    return this.children.get(id)?.set;
  }

  isEmpty(): boolean {
    return this.members.size === 0 && this.children.size === 0;
  }

  /** A set of these members and children (empty children are dropped). */
  static from(members: Iterable<PathElement>, children: Iterable<readonly [PathElement, FieldSet]>): FieldSet {
    const out = new FieldSet();
    for (const pe of members) out.ownMembers().set(serializePE(pe), pe);
    for (const [pe, set] of children) if (!set.isEmpty()) out.ownChildren().set(serializePE(pe), { pe, set });
    return out;
  }

  /** Members in no particular order (for walks that do not care). */
  *eachMember(): IterableIterator<PathElement> {
    yield* this.members.values();
  }

  /** Children in no particular order. */
  *eachChild(): IterableIterator<readonly [PathElement, FieldSet]> {
    for (const c of this.children.values()) yield [c.pe, c.set] as const;
  }

  /** Children in no particular order, without a generator or a tuple each (walks run on every write). */
  forEachChild(visit: (pe: PathElement, set: FieldSet) => void): void {
    for (const c of this.children.values()) visit(c.pe, c.set);
  }

  /**
   * This level's elements in upstream's order, each with its FieldsV1 key,
   * whether it is a member, and the sub-set below it (FieldsV1 encoding).
   */
  levelInOrder(): LevelElement[] {
    const level: LevelElement[] = [];
    for (const [id, pe] of this.members) level.push({ id, pe, member: true, sub: this.children.get(id)?.set });
    for (const [id, c] of this.children) if (!this.members.has(id)) level.push({ id, pe: c.pe, member: false, sub: c.set });
    return level.sort(byElement);
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
    for (const [id, pe] of o.members) out.ownMembers().set(id, pe);
    for (const [id, c] of o.children) {
      const mine = out.children.get(id);
      out.ownChildren().set(id, { pe: c.pe, set: mine ? mine.set.union(c.set) : c.set });
    }
    return out;
  }

  intersection(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (o.members.has(id)) out.ownMembers().set(id, pe);
    for (const [id, c] of this.children) {
      const other = o.children.get(id);
      if (!other) continue;
      const both = c.set.intersection(other.set);
      if (!both.isEmpty()) out.ownChildren().set(id, { pe: c.pe, set: both });
    }
    return out;
  }

  /** Paths of this set not in `o`. A member of `o` does not remove this set's paths below it. */
  difference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (!o.members.has(id)) out.ownMembers().set(id, pe);
    for (const [id, c] of this.children) {
      const other = o.children.get(id);
      const rest = other ? c.set.difference(other.set) : c.set;
      if (!rest.isEmpty()) out.ownChildren().set(id, { pe: c.pe, set: rest });
    }
    return out;
  }

  /** Like difference, but a member of `o` also removes everything below it. */
  recursiveDifference(o: FieldSet): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) if (!o.members.has(id)) out.ownMembers().set(id, pe);
    for (const [id, c] of this.children) {
      if (o.members.has(id)) continue;
      const other = o.children.get(id);
      const rest = other ? c.set.recursiveDifference(other.set) : c.set;
      if (!rest.isEmpty()) out.ownChildren().set(id, { pe: c.pe, set: rest });
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

  private copy(): FieldSet {
    const out = new FieldSet();
    for (const [id, pe] of this.members) out.ownMembers().set(id, pe);
    for (const [id, c] of this.children) out.ownChildren().set(id, c);
    return out;
  }
}

/**
 * Inserts the paths a depth-first walk meets into a set. Consecutive paths
 * share their prefix, so the nodes along the last path are kept and only the
 * elements past the shared part are looked up: deep walks stay linear.
 */
export class SetWriter {
  private readonly nodes: FieldSet[];
  private readonly along: PathElement[] = [];

  constructor(readonly set = new FieldSet()) {
    this.nodes = [set];
  }

  insert(path: Path): void {
    if (path.length === 0) return;
    const last = path.length - 1;
    // Elements are compared by identity: the same object at the same place is the same path.
    let i = 0;
    while (i < this.along.length && i < last && this.along[i] === path[i]) i++;
    this.along.length = i;
    this.nodes.length = i + 1;
    for (; i < last; i++) {
      this.nodes.push(this.nodes[i].childSet(path[i]));
      this.along.push(path[i]);
    }
    this.nodes[last].addMember(path[last]);
  }
}
