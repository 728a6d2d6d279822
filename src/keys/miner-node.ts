/** The miner's options (`miner.ts`), a node of its prefix tree, and the shapes of the values at a position. */

export interface MinerOptions {
  /** Distinct literal values a position keeps apart (eight times as many at the first); one more and it becomes `{id}`. @default 32 */
  literalValues?: number;
  /** Tree nodes at most; past it a new value's position is generalized, or the key is `{other}`. @default 20000 */
  maxNodes?: number;
  /** Patterns handed out and remembered (to rename them when their position is learned); as many as nodes, so none is forgotten. @default 20000 */
  maxIssued?: number;
}

/** A rename: what was recorded under `from` belongs to `to` (a position of `from` was learned). */
export interface PatternAlias {
  from: string;
  to: string;
  /** Distinct values the learned position had seen when it was learned. */
  distinct: number;
}

export const MINER_DEFAULTS = Object.freeze({ literalValues: 32, maxNodes: 20_000, maxIssued: 20_000 });

/** Values that took `{id}` by their look and agree on a shape, before a literal of that shape is read as an id. */
export const SHAPE_EVIDENCE = 8;

/**
 * A value's shape: its length (up to 255) and which of capitals, small letters, digits, `-` and `_`
 * it has (bits 0–4); -1 for any other character.
 */
export function shapeOf(text: string): number {
  if (text.length === 0 || text.length > 255) return -1;
  let mask = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 65 && c <= 90) mask |= 1;
    else if (c >= 97 && c <= 122) mask |= 2;
    else if (c >= 48 && c <= 57) mask |= 4;
    else if (c === 45) mask |= 8;
    else if (c === 95) mask |= 16;
    else return -1;
  }
  return (text.length << 6) | mask;
}

/** Whether `text` (or a value of shape `known`) has the shape the ids at `node` agree on: their length, and none but their characters. */
export function fitsShape(node: Node, text: string, known = -1): boolean {
  if (node.idShapeCount < SHAPE_EVIDENCE || node.idShape <= 0) return false;
  const shape = known >= 0 ? known : shapeOf(text);
  return shape > 0 && shape >> 6 === node.idShape >> 6 && (shape & 63 & ~(node.idShape & 63)) === 0;
}

export class Node {
  /** Literal and placeholder children, by separator + value. */
  children: Map<string, Node> | undefined;
  /** Once learned: the one child per separator that takes every value. */
  wild: Map<string, Node> | undefined;
  literals = 0;
  /** Children whose value is masked in part (`SKU-{id}-BLK`, `anna{id}`). */
  partials = 0;
  /**
   * The distinct values seen in the key behind those (at most `literalValues` + 1): many of them
   * behind a few masked ones (`SKU-{id}-BLK`, `SKU-{id}-RED`…) are one position's ids too.
   */
  rawValues: Set<number> | undefined;
  /** A value masked in part (`SKU-{id}-BLK`): counted in its parent's `partials` wherever it moves. */
  partial = false;
  /** Such a value's shape as it stood in the key that made it (see `shapeOf`); -1 when none. */
  rawShape = -1;
  /** Children masked in part that moved into `{id}` (by separator + value): at most `literalValues`. */
  movedIds: Set<string> | undefined;
  /** Hashes of the distinct values that took `{id}` by their look, until their shape is established. */
  shapeSeen: Set<number> | undefined;
  /** Literal children by their value as it stands in a key (the same text): no masking on the way. */
  byRaw: Map<string, Node> | undefined;
  /**
   * The shape of the values its `{id}` child took by their look (length and characters, see
   * `shapeOf`): once {@link SHAPE_EVIDENCE} agree, a literal of that shape is an id too (a random
   * token that happened to read as a word). -1: they disagree.
   */
  idShape = 0;
  idShapeCount = 0;
  ends = false;
  /** Distinct literal values seen when the position was learned (0: not learned). */
  learnedFrom = 0;
  constructor(
    readonly sep: string,
    readonly value: string,
  ) {}
}

/** A 32-bit hash of a value (FNV-1a): what the counts of distinct values keep, not the values (up to 64 KB each). */
export function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}
