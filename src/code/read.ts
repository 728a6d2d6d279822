import type * as TS from 'typescript';
import { MAX_STEPS, type Evaluator, type Ref } from './evaluate.js';
import type { TypeScript } from './load.js';
import { Statics } from './statics.js';

/**
 * A TTL and a key read statically (see `evaluate.ts` for how names are
 * followed): a number and the literal that declares it, with the environment
 * variable that overrides it; a key as the literal text and placeholders it is
 * made of, with every value an enum or a union of string literals allows.
 */

/** A number read from source. */
export interface NumberRead {
  /** The value, in the code's own unit; `undefined` when it cannot be read statically. */
  value: number | undefined;
  /** The literal that declares it (`5000`, `5 * 1000`, `'5000'`), to edit; `undefined` when the value is computed. */
  literal: TS.Expression | undefined;
  /** The value is the literal's times this (`ttlSeconds * 1000`: 1000). */
  scale: number;
  /** The expression that computes it, when no one literal declares it. */
  computed: TS.Node | undefined;
  /** The environment variable that overrides the value where it is set (the value is its default). */
  env: string | undefined;
  /** The value is a parameter of this function: its callers give it. */
  open: TS.SignatureDeclaration | undefined;
}

/** A piece of a key: literal text, or a value read at run time (an id, `{id}`). */
export type KeyPiece = string | null;

/** A key: each way it can be written (one for most keys; an enum's or a ternary's several), and the functions whose parameters it takes. */
export interface KeyRead {
  alternatives: KeyPiece[][];
  open: Set<TS.SignatureDeclaration>;
}

/** The most steps one reading of a key or a TTL takes, however it branches. */
const MAX_READ_STEPS = 5000;

/** The most alternatives a key is expanded into: past it, one placeholder stands for the part. */
const MAX_ALTERNATIVES = 16;

export class Reader {
  /** Steps left to the reading under way: a key built through many functions of several returns each stops here, not exponentially later. */
  private budget = 0;
  /** Names of `let`s whose values are being read: inside one of them (`name = name + …`), the name is its earlier value. */
  private readonly expanding = new Set<string>();

  readonly statics: Statics;

  constructor(
    private readonly ts: TypeScript,
    private readonly checker: TS.TypeChecker,
    readonly evaluator: Evaluator,
  ) {
    this.statics = new Statics(ts, checker, evaluator);
  }

  readNumber(ref: Ref, depth = 0): NumberRead {
    const ts = this.ts;
    const e = this.evaluator.unwrap(ref.expr);
    const none: NumberRead = { value: undefined, literal: undefined, scale: 1, computed: e, env: undefined, open: undefined };
    if (depth === 0) this.budget = MAX_READ_STEPS;
    if (depth > MAX_STEPS || --this.budget < 0) return none;
    if (isLiteralArithmetic(ts, e)) return { ...none, value: evaluate(ts, e), literal: e, computed: undefined };
    if (ts.isStringLiteralLike(e) && /^\s*\d+(\.\d+)?\s*$/.test(e.text)) return { ...none, value: Number(e.text), literal: e, computed: undefined };
    if (ts.isBinaryExpression(e)) {
      const op = e.operatorToken.kind;
      if (op === ts.SyntaxKind.QuestionQuestionToken || op === ts.SyntaxKind.BarBarToken) {
        const left = this.readNumber({ expr: e.left, frame: ref.frame }, depth + 1);
        // An environment variable with a default of its own (a schema's) is never missing: the right side is not reached.
        if (left.open || left.value !== undefined) return left;
        const right = this.readNumber({ expr: e.right, frame: ref.frame }, depth + 1);
        return { ...right, env: left.env ?? right.env };
      }
      if (ARITHMETIC_KINDS(ts).has(op)) {
        const left = this.readNumber({ expr: e.left, frame: ref.frame }, depth + 1);
        const right = this.readNumber({ expr: e.right, frame: ref.frame }, depth + 1);
        const open = left.open ?? right.open;
        const value = left.value === undefined || right.value === undefined ? undefined : clean(operate(ts, op, left.value, right.value));
        // `seconds * 1000`: a change of unit, the literal stays the one to edit, in its own unit (`base * 2` is computed).
        if (op === ts.SyntaxKind.AsteriskToken && left.literal && isLiteralArithmetic(ts, this.evaluator.unwrap(e.right)) && UNITS.has(right.value!)) return { ...left, value, scale: left.scale * right.value! };
        if (op === ts.SyntaxKind.AsteriskToken && right.literal && isLiteralArithmetic(ts, this.evaluator.unwrap(e.left)) && UNITS.has(left.value!)) return { ...right, value, scale: right.scale * left.value! };
        return { ...none, value, open, env: left.env ?? right.env };
      }
      return none;
    }
    if (ts.isConditionalExpression(e)) {
      const a = this.readNumber({ expr: e.whenTrue, frame: ref.frame }, depth + 1);
      const b = this.readNumber({ expr: e.whenFalse, frame: ref.frame }, depth + 1);
      // `process.env.X ? Number(process.env.X) : undefined`: the variable, with no default of its own.
      if (this.isUndefined(e.whenFalse)) return { ...a, value: a.env ? undefined : a.value };
      if (this.isUndefined(e.whenTrue)) return { ...b, value: b.env ? undefined : b.value };
      return a.value !== undefined && a.value === b.value ? a : { ...none, open: a.open ?? b.open, env: a.env ?? b.env };
    }
    const step = this.evaluator.step(ref);
    if (step.kind === 'ref') return this.readNumber(step.ref, depth + 1);
    if (step.kind === 'open') return { ...none, open: step.fn };
    if (step.kind === 'env') return step.fallback ? { ...this.readNumber(step.fallback, depth + 1), env: step.name } : { ...none, env: step.name };
    return none;
  }

  /** The key an expression makes: each way it can be written, literal text and run-time parts; `undefined` for no key shape at all. */
  readKey(ref: Ref, depth = 0): KeyRead | undefined {
    const ts = this.ts;
    const e = this.evaluator.unwrap(ref.expr);
    const open = new Set<TS.SignatureDeclaration>();
    const one = (pieces: KeyPiece[]): KeyRead => ({ alternatives: [pieces], open });
    if (depth === 0) this.budget = MAX_READ_STEPS;
    if (depth > MAX_STEPS || --this.budget < 0) return undefined;
    if (ts.isStringLiteralLike(e)) return one([e.text]);
    if (ts.isNumericLiteral(e)) return one([null]);
    const part = (expr: TS.Expression): KeyRead => this.readKey({ expr, frame: ref.frame }, depth + 1) ?? this.typeValues(expr) ?? one([null]);
    if (ts.isTemplateExpression(e)) {
      let acc: KeyRead = one([e.head.text]);
      for (const span of e.templateSpans) acc = concat(concat(acc, part(span.expression)), one([span.literal.text]));
      return acc;
    }
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) return concat(part(e.left), part(e.right));
    if (ts.isArrayLiteralExpression(e)) {
      const first = e.elements[0];
      if (!first) return undefined;
      return ts.isSpreadElement(first) ? this.readKey({ expr: first.expression, frame: ref.frame }, depth + 1) : this.readKey({ expr: first, frame: ref.frame }, depth + 1);
    }
    if (ts.isConditionalExpression(e)) {
      const holds = this.statics.truthy({ expr: e.condition, frame: ref.frame });
      return holds === true ? part(e.whenTrue) : holds === false ? part(e.whenFalse) : union(part(e.whenTrue), part(e.whenFalse));
    }
    // A `let` built in steps (`name = name + …` under an `if`): each value it can have where it is read.
    if (ts.isIdentifier(e)) {
      const all = this.statics.letValues(e, ref.frame);
      // Inside its own assignment (`name = name + …`), the name is its first value.
      const values = all && this.expanding.has(e.text) ? all.slice(0, 1) : all;
      if (values) {
        this.expanding.add(e.text);
        try {
          const reads = values.map((v) => this.readKey(v, depth + 1)).filter((r): r is KeyRead => r !== undefined);
          if (reads.length > 0) return reads.reduce(union);
        } finally {
          this.expanding.delete(e.text);
        }
      }
    }
    if (ts.isBinaryExpression(e) && (e.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken || e.operatorToken.kind === ts.SyntaxKind.BarBarToken)) {
      const left = this.readKey({ expr: e.left, frame: ref.frame }, depth + 1);
      // `tenantId ?? 'default'`: the value when there is one (an id), the default when not: both are ways the key is written.
      return left && left.alternatives.some((a) => a.some((p) => p !== null)) ? left : union(left ?? one([null]), part(e.right));
    }
    // `parts.join(':')` over parts known statically (a rest parameter's arguments): the parts, joined.
    if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && e.expression.name.text === 'join') {
      const elements = this.statics.elementsOf({ expr: e.expression.expression, frame: ref.frame });
      const separator = e.arguments[0] ? this.evaluator.constantString({ expr: e.arguments[0], frame: ref.frame }) : ',';
      if (elements && elements.length > 0 && separator !== undefined) {
        let acc = this.readKey(elements[0]!, depth + 1) ?? one([null]);
        for (const el of elements.slice(1)) acc = concat(concat(acc, one([separator])), this.readKey(el, depth + 1) ?? one([null]));
        return acc;
      }
    }
    // An array's own order or join does not change which resource comes first: `[...keys].sort()`, `keys.join(',')`.
    if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && ARRAY_PASS.has(e.expression.name.text)) {
      return this.readKey({ expr: e.expression.expression, frame: ref.frame }, depth + 1);
    }
    // A function that returns the key in several ways (`return resource` or `return \`{tag}${resource}\``): each is a way it is written.
    if (ts.isCallExpression(e)) {
      const returns = this.statics.returnsOf(e, ref.frame);
      if (returns.length > 1) {
        const reads = returns.map((r) => this.readKey(r, depth + 1)).filter((r): r is KeyRead => r !== undefined);
        if (reads.length > 0) return reads.reduce(union);
      }
    }
    const step = this.evaluator.step(ref);
    if (step.kind === 'ref') {
      // Where the value is lost on the way (an untyped callback's parameter), the type declared here still says what it can be.
      const read = this.readKey(step.ref, depth + 1);
      const lost = !read || read.alternatives.every((a) => a.every((p) => p === null));
      // Not where a cast said it (`shardName as QueueName`): the value is computed, and the type is the author's claim.
      const cast = ts.isAsExpression(step.ref.expr) || ts.isTypeAssertionExpression(step.ref.expr);
      return lost && !cast ? (this.typeValues(e) ?? read) : read;
    }
    const typed = this.typeValues(e);
    if (typed) return typed;
    // `appId.replace('_dev_', '_')`: a value read at run time, still the parameters' it was made of.
    if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) {
      const receiver = this.readKey({ expr: e.expression.expression, frame: ref.frame }, depth + 1);
      return { alternatives: [[null]], open: receiver?.open ?? open };
    }
    if (step.kind === 'open') {
      open.add(step.fn);
      return one([null]);
    }
    return undefined;
  }

  /** The values a string-literal union or an enum type allows (`NotificationType`), each an alternative. */
  private typeValues(e: TS.Expression): KeyRead | undefined {
    const type = this.checker.getTypeAtLocation(e);
    const members = type.isUnion() ? type.types : [type];
    const values: string[] = [];
    for (const t of members) {
      if (t.isStringLiteral()) values.push(t.value);
      else return undefined;
    }
    if (values.length === 0 || values.length > MAX_ALTERNATIVES) return undefined;
    return { alternatives: values.map((v) => [v]), open: new Set() };
  }

  private isUndefined(e: TS.Expression): boolean {
    const u = this.evaluator.unwrap(e);
    return (this.ts.isIdentifier(u) && u.text === 'undefined') || u.kind === this.ts.SyntaxKind.NullKeyword;
  }
}

/** Factors that change a unit to milliseconds (seconds, minutes, hours). */
const UNITS = new Set([1000, 60_000, 3_600_000]);

const ARRAY_PASS = new Set(['sort', 'slice', 'concat', 'filter', 'join', 'toString', 'map']);

function concat(a: KeyRead, b: KeyRead): KeyRead {
  const alternatives: KeyPiece[][] = [];
  for (const x of a.alternatives) for (const y of b.alternatives) if (alternatives.length < MAX_ALTERNATIVES) alternatives.push([...x, ...y]);
  return { alternatives, open: new Set([...a.open, ...b.open]) };
}

function union(a: KeyRead, b: KeyRead): KeyRead {
  return { alternatives: [...a.alternatives, ...b.alternatives].slice(0, MAX_ALTERNATIVES), open: new Set([...a.open, ...b.open]) };
}

let arithmetic: Set<number> | undefined;
function ARITHMETIC_KINDS(ts: TypeScript): Set<number> {
  return (arithmetic ??= new Set([ts.SyntaxKind.AsteriskToken, ts.SyntaxKind.PlusToken, ts.SyntaxKind.MinusToken, ts.SyntaxKind.SlashToken]));
}

/** A number written with literals only: `5000`, `5_000`, `5e3`, `5 * 1000`, `(5 * 60) * 1000`. */
export function isLiteralArithmetic(ts: TypeScript, e: TS.Expression): boolean {
  if (ts.isNumericLiteral(e)) return true;
  if (ts.isParenthesizedExpression(e)) return isLiteralArithmetic(ts, e.expression);
  if (ts.isBinaryExpression(e)) return ARITHMETIC_KINDS(ts).has(e.operatorToken.kind) && isLiteralArithmetic(ts, e.left) && isLiteralArithmetic(ts, e.right);
  return false;
}

/** The value of literal arithmetic (see {@link isLiteralArithmetic}). */
export function evaluate(ts: TypeScript, e: TS.Expression): number {
  if (ts.isNumericLiteral(e)) return Number(e.text.replace(/_/g, ''));
  if (ts.isParenthesizedExpression(e)) return evaluate(ts, e.expression);
  const b = e as TS.BinaryExpression;
  return clean(operate(ts, b.operatorToken.kind, evaluate(ts, b.left), evaluate(ts, b.right)));
}

function operate(ts: TypeScript, kind: TS.SyntaxKind, a: number, b: number): number {
  return kind === ts.SyntaxKind.AsteriskToken ? a * b : kind === ts.SyntaxKind.PlusToken ? a + b : kind === ts.SyntaxKind.MinusToken ? a - b : a / b;
}

/** `16.1 * 1000` is 16100.000000000002 in floating point: a TTL is whole milliseconds, read to a millionth. */
function clean(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}
