import { ID, TAGGED_ID, isPlaceholder, maskValue, type Segments } from './segments.js';
import { MINER_DEFAULTS, Node, SHAPE_EVIDENCE, fitsShape, hashOf, shapeOf, type MinerOptions } from './miner-node.js';
import { ownCopy as own } from '../text.js';

/**
 * The miner's prefix tree of positions (see `miner.ts`): walking a key down it, learning a position
 * (its children merged into one `{id}`, subtrees and all), the shapes of ids, and the bound on nodes.
 * What was handed out and how it is renamed is the miner's: {@link renameIssued} is its hook.
 */
export class PatternTree {
  /** Grows by one at each generalization: a cache of patterns is stale when it changed. */
  generation = 0;
  protected readonly root = new Node('', '');
  /** The distinct values of the position learned last, for the renames it makes. */
  protected learnedFrom = 0;
  private readonly listeners: (() => void)[] = [];
  private nodes = 1;
  private readonly literalValues: number;
  private readonly maxNodes: number;

  constructor(options: MinerOptions) {
    this.literalValues = options.literalValues ?? MINER_DEFAULTS.literalValues;
    this.maxNodes = options.maxNodes ?? MINER_DEFAULTS.maxNodes;
  }

  /** Calls `listener` whenever a position is learned (the caches of patterns it gave are stale then). */
  onLearn(listener: () => void): void {
    this.listeners.push(listener);
  }

  private learned(): void {
    this.generation++;
    for (const listener of this.listeners) listener();
  }

  /** Tree nodes in use (for tests and the memory figure). */
  get size(): number {
    return this.nodes;
  }

  /** After a position was learned: what was handed out is renamed (the miner's). */
  protected renameIssued(): void {}

  /** Follows a key's values down the tree (adding what is new when `grow`); returns the last node, or undefined when full. */
  protected walk(segments: Segments, grow: boolean): Node | undefined {
    const { seps, values, raw } = segments;
    let node = this.root;
    for (let i = 0; i < values.length; i++) {
      const sep = seps[i]!;
      const wild = node.wild?.get(sep);
      if (wild) {
        values[i] = wild.value;
        node = wild;
        continue;
      }
      // A key's value is masked here, and only here: under a learned position, or as a literal seen before, it need not be.
      let value = values[i]!;
      let child: Node | undefined;
      if (raw !== undefined) {
        child = node.byRaw?.get(sep + value);
        if (child !== undefined) {
          node = child;
          continue;
        }
        value = values[i] = maskValue(value);
      }
      child = node.children?.get(sep + value);
      if (child === undefined && !isPlaceholder(value) && (fitsShape(node, raw === undefined ? value : raw[i]!) || node.movedIds?.has(sep + value) === true)) {
        // Shaped like the ids at this position: one of them.
        value = values[i] = ID;
        child = node.children?.get(sep + ID);
      } else if (grow && raw !== undefined && value === ID && this.noteShape(node, raw[i]!)) {
        this.renameIssued();
        child = node.children?.get(sep + ID);
      }
      if (grow && raw !== undefined && raw[i] !== value && !isPlaceholder(value) && this.countRaw(node, raw[i]!)) {
        // Many values behind a few masked ones: the position is learned.
        this.generalize(node);
        child = this.wildOf(node, sep, value);
        this.renameIssued();
        values[i] = child.value;
      }
      if (child === undefined) {
        if (!grow) return undefined;
        const literal = !isPlaceholder(value);
        if (node.wild !== undefined) {
          // Learned already, but never after this separator: nothing handed out to rename (none past the bound).
          if (this.nodes >= this.maxNodes) return undefined;
          child = this.wildOf(node, sep, value);
          values[i] = child.value;
        } else if ((literal && node.literals >= this.limitAt(node)) || (this.nodes >= this.maxNodes && node.literals > 0)) {
          this.generalize(node);
          child = this.wildOf(node, sep, value);
          this.renameIssued();
          values[i] = child.value;
        } else if (this.nodes >= this.maxNodes) {
          return undefined;
        } else {
          child = new Node(sep, own(value));
          (node.children ??= new Map()).set(sep + value, child);
          if (literal) node.literals++;
          if (literal && raw !== undefined && raw[i] !== value) {
            child.partial = true;
            child.rawShape = shapeOf(raw[i]!);
            node.partials++;
          }
          this.nodes++;
        }
      }
      // A literal as it stands in keys (`lock`, `user`, a job's name): found again without masking.
      if (raw !== undefined && raw[i] === value && child.value === value && node.wild === undefined) (node.byRaw ??= new Map()).set(sep + value, child);
      node = child;
    }
    return node;
  }

  /**
   * Notes the shape of a value that took `{id}` by its look; true when that shape is established now,
   * and the literal children of that shape were moved into `{id}` (renames to make).
   */
  private noteShape(node: Node, raw: string): boolean {
    if (node.idShape < 0) return false;
    const shape = shapeOf(raw);
    const established = node.idShapeCount >= SHAPE_EVIDENCE;
    if (shape < 0 || (node.idShapeCount > 0 && shape >> 6 !== node.idShape >> 6)) {
      // Ids of another shape: no shape, until one is established; after that, it stays (what it made an id stays one).
      if (!established) node.idShape = -1;
      return false;
    }
    if (established) {
      // A character the shape had not seen (a `-` in a base64url token): the shape widens, never narrows.
      if ((shape & 63 & ~(node.idShape & 63)) === 0) return false;
      node.idShape |= shape;
      return this.moveShaped(node);
    }
    // Distinct values: one value seen again (after a cache was emptied) is no more evidence.
    const seen = (node.shapeSeen ??= new Set());
    const hash = hashOf(raw);
    if (seen.has(hash)) return false;
    seen.add(hash);
    node.idShape |= shape;
    if (++node.idShapeCount !== SHAPE_EVIDENCE) return false;
    node.shapeSeen = undefined;
    return this.moveShaped(node);
  }

  /** Moves `node`'s literal children of its ids' shape into its `{id}` child; true when some moved (renames to make). */
  private moveShaped(node: Node): boolean {
    if (node.children === undefined) return false;
    let moved = false;
    for (const [name, child] of [...node.children]) {
      if (isPlaceholder(child.value) || !fitsShape(node, child.value, child.rawShape)) continue;
      node.children.delete(name);
      node.byRaw?.delete(name);
      node.literals--;
      if (child.partial) node.partials--;
      // Named by its masked value, it is found by that name again (a rename's walk, a name read from a file).
      if (child.partial) (node.movedIds ??= new Set()).add(name);
      let id = node.children.get(child.sep + ID);
      if (id === undefined) {
        node.children.set(child.sep + ID, (id = new Node(child.sep, ID)));
        this.nodes++;
      }
      this.absorb(id, child);
      moved = true;
    }
    if (moved) this.learned();
    return moved;
  }

  /**
   * Literal values a position keeps apart: `literalValues`, and eight times as many at the first position,
   * where namespaces stand (services sharing a Redis, apps) and ids rarely do without an id's shape.
   */
  private limitAt(node: Node): number {
    return node === this.root ? this.literalValues * 8 : this.literalValues;
  }

  /**
   * Counts a value seen in a key behind a value masked in part; true when the position should be learned:
   * more than its limit of such values (see {@link limitAt}), behind two masked values or more.
   */
  private countRaw(node: Node, raw: string): boolean {
    const limit = this.limitAt(node);
    const seen = (node.rawValues ??= new Set());
    // Many values seen (before or after the second masked shape came): learned now.
    if (seen.size > limit) return node.partials >= 2;
    seen.add(hashOf(raw));
    return seen.size > limit && node.partials >= 2;
  }

  /** Merges every child of `node` into one placeholder child per separator: its position is learned. */
  protected generalize(node: Node): void {
    if (node.wild === undefined) node.wild = new Map();
    node.learnedFrom = Math.max(node.learnedFrom, node.literals + 1, node.rawValues?.size ?? 0);
    this.learnedFrom = node.learnedFrom;
    const children = node.children;
    node.children = undefined;
    node.literals = 0;
    node.partials = 0;
    node.rawValues = undefined;
    node.byRaw = undefined;
    this.learned();
    if (children === undefined) return;
    for (const child of children.values()) {
      const wild = this.wildOf(node, child.sep, child.value);
      this.absorb(wild, child);
    }
  }

  /** The placeholder child of a learned node after `sep` (a hash tag's braces kept when the value had them). */
  private wildOf(node: Node, sep: string, value: string): Node {
    let wild = node.wild!.get(sep);
    if (wild === undefined) {
      wild = new Node(sep, value.startsWith('{{') && value.endsWith('}}') ? TAGGED_ID : ID);
      node.wild!.set(sep, wild);
      this.nodes++;
    }
    return wild;
  }

  /** Moves `source`'s subtree into `target` (which takes its place), learning where the union has too many values. */
  private absorb(target: Node, source: Node): void {
    this.nodes--;
    if (source.ends) target.ends = true;
    if (source.learnedFrom > target.learnedFrom) target.learnedFrom = source.learnedFrom;
    const sources = [...(source.children?.values() ?? []), ...(source.wild?.values() ?? [])];
    if (source.wild !== undefined && target.wild === undefined) this.generalize(target);
    for (const child of sources) {
      if (target.wild !== undefined) {
        this.absorb(this.wildOf(target, child.sep, child.value), child);
        continue;
      }
      const same = target.children?.get(child.sep + child.value);
      if (same) {
        this.absorb(same, child);
        continue;
      }
      const literal = !isPlaceholder(child.value);
      if (literal && target.literals >= this.limitAt(target)) {
        this.generalize(target);
        this.absorb(this.wildOf(target, child.sep, child.value), child);
        continue;
      }
      (target.children ??= new Map()).set(child.sep + child.value, child);
      if (literal) target.literals++;
      if (child.partial) target.partials++;
    }
  }
}
