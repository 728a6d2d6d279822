import type * as TS from 'typescript';
import { patternOf } from '../keys/pattern.js';
import type { Frame, Ref } from './frame.js';
import type { TypeScript } from './load.js';
import { displayPath } from './program.js';
import type { KeyRead, NumberRead, Reader } from './read.js';
import { REPRESENTATIVE_ID, type Shape } from './shapes.js';
import type { CodePosition, CodeSite, TtlRole, TtlValue } from './types.js';

/** A lock call, read where it is shown: at `node`, with the wrappers' parameters between them bound by `frame`. */
export interface Found {
  node: TS.CallExpression | TS.NewExpression | TS.Decorator;
  lockCall: TS.CallExpression | TS.NewExpression;
  shape: Shape;
  frame: Frame | undefined;
  /** Wrapper names from `node`'s callee in to the lock call. */
  via: string[];
  /** Each wrapper's call on the way in, and the wrapper it is in: its conditions are read for the outer callers' arguments. */
  path?: { node: TS.Node; fn: TS.SignatureDeclaration }[];
}

/** What a lock call reads as where it is shown: its key, its TTL (and the option that carries it), its renewal options. */
export interface SiteRead {
  key: KeyRead | undefined;
  ttl: NumberRead | undefined;
  ttlOption: string;
  /** The TTL expression, when the call writes one. */
  ttlRef: Ref | undefined;
  renewals: { option: string; role: TtlRole; read: NumberRead }[];
}

/** Turns a found lock call into the site `check --code` judges. */
export class SiteBuilder {
  constructor(
    private readonly ts: TypeScript,
    private readonly reader: Reader,
    private readonly root: string,
  ) {}

  /**
   * Whether a caller's arguments can take the path to `node` inside `fn`: no condition on the way (a
   * ternary, an `if`, an `&&`) reads as false for them (`lockIf(!skipRunLock, …)` with `skipRunLock: true`).
   */
  reachable(node: TS.Node, fn: TS.SignatureDeclaration, frame: Frame): boolean {
    const ts = this.ts;
    const truthy = (expr: TS.Expression) => this.reader.statics.truthy({ expr, frame });
    for (let child = node, parent = node.parent; parent && child !== fn; child = parent, parent = parent.parent) {
      if (ts.isConditionalExpression(parent) && child !== parent.condition && truthy(parent.condition) === (child === parent.whenFalse)) return false;
      if (ts.isIfStatement(parent) && child !== parent.expression && truthy(parent.expression) === (child === parent.elseStatement)) return false;
      if (ts.isBinaryExpression(parent) && parent.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken && child === parent.right && truthy(parent.left) === false) return false;
    }
    return true;
  }

  read(found: Found): SiteRead {
    const { shape, frame } = found;
    const ev = this.reader.evaluator;
    const key = shape.key ? this.reader.readKey({ expr: shape.key, frame }) : undefined;
    // `undefined`: the call's options are known not to set it (no options, or an object without it).
    const property = (name: string): Ref | 'open' | 'unknown' | undefined => {
      if (!shape.options) return undefined;
      const step = ev.propertyOf({ expr: shape.options, frame }, name);
      return step === undefined ? undefined : step.kind === 'ref' ? step.ref : step.kind === 'open' ? 'open' : 'unknown';
    };
    let ttlRef: Ref | undefined;
    let ttl: NumberRead | undefined;
    if (shape.ttl) {
      ttlRef = shape.ttl.expr && { expr: shape.ttl.expr, frame };
    } else if (shape.ttlOption) {
      const p = property(shape.ttlOption);
      if (p === 'open') ttl = { value: undefined, literal: undefined, scale: 1, computed: shape.options, env: undefined, open: this.enclosingOpen(found) };
      // Options that cannot be read may set it: the TTL is computed, not the library's default.
      else if (p === 'unknown') ttl = { value: undefined, literal: undefined, scale: 1, computed: shape.options, env: undefined, open: undefined };
      else ttlRef = p;
    }
    if (ttlRef) {
      const read = this.reader.readNumber(ttlRef);
      ttl = { ...read, value: read.value === undefined ? undefined : read.value * (shape.ttl?.unitMs ?? 1) };
    }
    const renewals = (shape.renewOptions ?? []).flatMap(([option, role]) => {
      const p = property(option);
      if (!p || p === 'open' || p === 'unknown') return [];
      const expr = this.reader.evaluator.unwrap(p.expr);
      // `autoExtend: true` renews at a share of the TTL: it follows the TTL, with nothing to edit.
      if (expr.kind === this.ts.SyntaxKind.TrueKeyword || expr.kind === this.ts.SyntaxKind.FalseKeyword) return [];
      return [{ option, role, read: this.reader.readNumber(p) }];
    });
    return { key, ttl, ttlOption: shape.ttl?.option ?? shape.ttlOption ?? 'ttl', ttlRef, renewals };
  }

  private enclosingOpen(found: Found): TS.SignatureDeclaration | undefined {
    const ts = this.ts;
    return ts.findAncestor(found.node.parent, (n) => ts.isFunctionLike(n)) as TS.SignatureDeclaration | undefined;
  }

  /** The site; `inner`: the lock call inside a wrapper, whose callers are the sites. */
  site(found: Found, read: SiteRead, inner?: { wrapper: string; callers: number }): CodeSite {
    const { shape } = found;
    const bullmqPrefix = shape.library === 'bullmq' ? this.bullmqPrefix(found) : undefined;
    const prefix = shape.library === 'bullmq' ? (bullmqPrefix === undefined ? undefined : `${bullmqPrefix}:`) : (shape.keyPrefix ?? '');
    const patterns = prefix === undefined || !read.key ? [] : this.patterns(read.key, prefix, shape.keySuffix ?? '', found.frame !== undefined);
    const keyText = shape.key ? oneLine(shape.key.getText()) : '(no key)';
    const site: CodeSite = {
      at: this.position(found.node),
      library: shape.library,
      call: found.via.length > 0 ? found.via[0]! : shape.call,
      pattern: patterns[0],
      keyText,
      ttl: this.ttlValue(found, read),
      renewals: read.renewals.map((r) => this.value(r.read, r.option, r.role, 1)),
      patterns,
      via: found.via.length > 0 ? [...found.via, shape.call] : [],
    };
    if (inner) site.inner = inner;
    return site;
  }

  /** Each data pattern the key makes; a key of run-time parts only is an id (`{id}`) where a caller gave it, else not read. */
  private patterns(key: KeyRead, prefix: string, suffix: string, throughWrapper: boolean): string[] {
    const out = new Set<string>();
    for (const alt of key.alternatives) {
      const text = alt.map((p) => p ?? REPRESENTATIVE_ID).join('');
      const hasText = alt.some((p) => p !== null && /\p{L}/u.test(p)) || /\p{L}/u.test(prefix + suffix);
      if (!hasText && !throughWrapper) continue;
      out.add(patternOf(prefix + text + suffix));
    }
    return [...out];
  }

  /** BullMQ's prefix: the worker's `prefix` option (a literal), or its default `bull` (also for one computed at run time); `undefined` for a parameter. */
  private bullmqPrefix(found: Found): string | undefined {
    const options = found.shape.options;
    if (!options) return 'bull';
    const step = this.reader.evaluator.propertyOf({ expr: options, frame: found.frame }, 'prefix');
    if (!step || step.kind === 'unknown') return 'bull';
    // From the environment: its default where the code writes one, else BullMQ's own (the variable unset).
    const ref = step.kind === 'ref' ? step.ref : step.kind === 'env' ? step.fallback : undefined;
    if (!ref) return step.kind === 'env' ? 'bull' : undefined;
    const key = this.reader.readKey(ref);
    const only = key?.alternatives.length === 1 ? key.alternatives[0] : undefined;
    // A literal prefix is the one in use; one computed at run time (from the environment, for a cluster) is taken as unset.
    return only && only.every((p) => p !== null) ? only.join('') : 'bull';
  }

  private ttlValue(found: Found, read: SiteRead): TtlValue | undefined {
    const { shape } = found;
    if (read.ttl && (read.ttl.value !== undefined || read.ttl.literal || read.ttl.computed || read.ttl.env)) {
      return this.value(read.ttl, read.ttlOption, 'ttl', shape.ttl?.unitMs ?? 1);
    }
    if (shape.libraryDefaultMs === undefined || read.ttl?.open) return undefined;
    return this.libraryDefault(found, read.ttlOption, shape.libraryDefaultMs);
  }

  /** A value as the site shows it and `apply --code` edits it: its literal in the code's unit, or why it is not one. */
  value(read: NumberRead, option: string, role: TtlRole, unitMs: number): TtlValue {
    const msPerUnit = unitMs * read.scale;
    const env = read.env === undefined ? {} : { env: read.env };
    const valueMs = read.value;
    if (read.literal) {
      const source = read.literal.getSourceFile();
      const start = read.literal.getStart(source);
      return {
        option,
        role,
        valueMs,
        declaration: this.position(read.literal),
        literal: { path: source.fileName, start, end: read.literal.getEnd(), text: source.text.slice(start, read.literal.getEnd()) },
        why: undefined,
        msPerUnit,
        ...env,
      };
    }
    const computed = read.computed ?? read.literal;
    const text = computed ? oneLine(computed.getText()) : option;
    return { option, role, valueMs, declaration: computed ? this.position(computed) : { file: '', line: 0 }, literal: undefined, why: { kind: 'computed', text }, msPerUnit, ...env };
  }

  /**
   * The library's default TTL, where the call passes none: `apply --code` adds the option to an options
   * object written at the call, or adds the object as the call's last argument.
   */
  private libraryDefault(found: Found, option: string, ms: number): TtlValue {
    const ts = this.ts;
    const call = found.lockCall;
    const base = { option, role: 'ttl' as const, valueMs: ms, declaration: this.position(call), why: undefined, msPerUnit: 1, libraryDefault: true };
    const options = found.shape.options && this.reader.evaluator.unwrap(found.shape.options);
    const source = call.getSourceFile();
    if (options && ts.isObjectLiteralExpression(options)) {
      const at = options.getStart(source) + 1;
      const empty = options.properties.length === 0;
      return { ...base, literal: { path: source.fileName, start: at, end: at, text: '' }, insert: { before: ` ${option}: `, after: empty ? ' ' : ',' } };
    }
    const args = call.arguments ?? [];
    const last = args[args.length - 1];
    // Only where the options are the next argument: `new Worker(name)` has no processor to put them after.
    if (!options && last && args.length === found.shape.optionsIndex) {
      return { ...base, literal: { path: source.fileName, start: last.getEnd(), end: last.getEnd(), text: '' }, insert: { before: `, { ${option}: `, after: ' }' } };
    }
    return { ...base, literal: undefined, why: { kind: 'default-not-insertable', option } };
  }

  position(node: TS.Node): CodePosition {
    const source = node.getSourceFile();
    const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
    return { file: displayPath(this.root, source.fileName), line: line + 1 };
  }
}

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}
