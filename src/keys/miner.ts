import { OVERFLOW_PATTERN } from './pattern.js';
import { cutKey, renderSegments, segmentsOfName, type Segments } from './segments.js';
import { MINER_DEFAULTS, type MinerOptions, type Node, type PatternAlias } from './miner-node.js';
import { PatternTree } from './pattern-tree.js';
export { MINER_DEFAULTS, type MinerOptions, type PatternAlias } from './miner-node.js';
import { ownCopy as own } from '../text.js';

/**
 * Key patterns learned from the keys seen: a position whose values are many
 * and varied becomes a placeholder, whatever their shape (names, e-mail
 * addresses, slugs, SKUs); a position with a few values stays literal (each is
 * a critical section of its own: `cron:lock:daily-digest`, `cron:lock:weekly-report`).
 *
 * Learned as Drain learns log templates: a prefix tree of positions (see
 * `segments.ts`), each node with at most {@link MinerOptions.literalValues}
 * literal children; one more, and the node's children merge into one `{id}`
 * child (their subtrees merged too), which from then on takes every value
 * there. An id-shaped value (digits, UUID, hex, e-mail, random token) is a
 * placeholder at once: its shape is a hint, the count is the rule.
 *
 * A pattern handed out before its position was learned is provisional: each
 * generalization names what it renamed ({@link takeAliases}: provisional →
 * learned), so that what was recorded under the old name is merged into the new
 * one, never lost or counted twice. Memory is bounded by `maxNodes` tree nodes
 * and `maxIssued` patterns remembered for renaming.
 */
export class KeyPatternMiner extends PatternTree {
  private readonly issued = new Map<string, Segments>();
  private aliases: PatternAlias[] = [];
  private readonly maxIssued: number;

  constructor(options: MinerOptions = {}) {
    super(options);
    this.maxIssued = options.maxIssued ?? MINER_DEFAULTS.maxIssued;
  }

  /** The pattern of `key` as learned so far; learns from it. */
  patternOf(key: string): string {
    return this.learn(cutKey(key));
  }

  /**
   * Learns from a pattern name as recorded elsewhere (another file, a Prometheus label): its
   * placeholders are placeholders, its literals literal values; returns its name as learned here.
   */
  learnName(pattern: string): string {
    return this.learn(segmentsOfName(pattern));
  }

  /** Marks `pattern`'s position `position` (1-based) as learned, as another learner found it from `distinct` values. */
  markLearned(pattern: string, position: number, distinct: number): void {
    const segments = segmentsOfName(pattern);
    if (position < 1 || position > segments.values.length) return;
    const prefix: Segments = { seps: segments.seps.slice(0, position - 1), values: segments.values.slice(0, position - 1) };
    const node = this.walk(prefix, true);
    if (node === undefined) return;
    if (node.wild === undefined) {
      this.generalize(node);
      this.renameIssued();
    }
    node.learnedFrom = Math.max(node.learnedFrom, distinct);
  }

  /** The renames since the last call, oldest first. */
  takeAliases(): PatternAlias[] {
    const taken = this.aliases;
    this.aliases = [];
    return taken;
  }

  /** The positions of `pattern` that were learned, with the distinct values seen there when they were (for reports). */
  learnedPositions(pattern: string): { position: number; distinct: number }[] {
    const { seps, values } = segmentsOfName(pattern);
    const out: { position: number; distinct: number }[] = [];
    let node: Node | undefined = this.root;
    for (let i = 0; i < values.length && node; i++) {
      if (node.learnedFrom > 0) out.push({ position: i + 1, distinct: node.learnedFrom });
      node = node.wild?.get(seps[i]!) ?? node.children?.get(seps[i]! + values[i]!);
    }
    return out;
  }

  private learn(segments: Segments): string {
    const leaf = this.walk(segments, true);
    if (leaf === undefined) return OVERFLOW_PATTERN;
    leaf.ends = true;
    const pattern = renderSegments(segments);
    if (!this.issued.has(pattern)) {
      if (this.issued.size >= this.maxIssued) this.issued.delete(this.issued.keys().next().value!);
      this.issued.set(pattern, { seps: segments.seps, values: segments.values.map(own) });
    }
    return pattern;
  }

  /** After a generalization: every pattern handed out is walked again, and those whose name changed are renamed. */
  protected override renameIssued(): void {
    const renamed: [string, Segments][] = [];
    for (const [pattern, segments] of this.issued) {
      const copy: Segments = { seps: segments.seps, values: [...segments.values] };
      if (this.walk(copy, false) === undefined) continue;
      const now = renderSegments(copy);
      if (now !== pattern) {
        this.aliases.push({ from: pattern, to: now, distinct: this.learnedFrom });
        renamed.push([pattern, copy]);
      }
    }
    for (const [pattern, segments] of renamed) {
      this.issued.delete(pattern);
      this.issued.set(renderSegments(segments), segments);
    }
  }

}

