import type * as TS from 'typescript';
import { patternOf } from '../keys/pattern.js';
import type { Bindings } from './bindings.js';
import type { TypeScript } from './load.js';

/**
 * Reading values statically: a TTL (a number, and the literal it is declared
 * by) and a key (its pattern), following `const` bindings through imports
 * within the repository. What cannot be read is said so, never guessed.
 */

/** A number read from source: its value, and the literal that declares it when one does. */
export interface NumberRead {
  valueMs: number | undefined;
  /** The literal (a number, `5_000`, `5 * 1000`, `5e3`) to edit; `undefined` when the value is computed. */
  literal: TS.Expression | undefined;
  /** Where the value comes from, for a computed one: the expression that computes it. */
  computed: TS.Node | undefined;
}

/** Stands in for each `${…}` of a key: several digits, so `patternOf` reads it as an id (`user${id}` → `user{id}`). */
export const REPRESENTATIVE_ID = '12345';

export class Values {
  constructor(
    private readonly ts: TypeScript,
    private readonly bindings: Bindings,
  ) {}

  /** A TTL: the literal at the call, or the `const` it comes from (followed through imports). */
  readNumber(expr: TS.Expression, depth = 0): NumberRead {
    const ts = this.ts;
    const e = this.bindings.unwrap(expr);
    if (depth > 8) return { valueMs: undefined, literal: undefined, computed: e };
    if (isLiteralArithmetic(ts, e)) return { valueMs: evaluate(ts, e), literal: e, computed: undefined };
    if (ts.isIdentifier(e) || ts.isPropertyAccessExpression(e)) {
      const init = this.constInitializer(e);
      if (init) return this.readNumber(init, depth + 1);
    }
    // Computed: from constants (its value known, but no one literal to edit), or at run time.
    return { valueMs: this.evaluateWithConstants(e, depth), literal: undefined, computed: e };
  }

  /** The value of arithmetic over literals and constants; `undefined` at run time. */
  private evaluateWithConstants(e: TS.Expression, depth: number): number | undefined {
    const ts = this.ts;
    if (ts.isBinaryExpression(e) && ARITHMETIC.has(e.operatorToken.kind)) {
      const a = this.readNumber(e.left, depth + 1).valueMs;
      const b = this.readNumber(e.right, depth + 1).valueMs;
      return a === undefined || b === undefined ? undefined : clean(operate(ts, e.operatorToken.kind, a, b));
    }
    return undefined;
  }

  /** The initializer of the `const` (or exported constant, or `module.exports` property) a name is bound to. */
  constInitializer(e: TS.Expression): TS.Expression | undefined {
    const ts = this.ts;
    const decl = this.bindings.targetOf(ts.isPropertyAccessExpression(e) ? e.name : e);
    if (!decl) return undefined;
    if (ts.isVariableDeclaration(decl)) {
      const list = decl.parent;
      const isConst = ts.isVariableDeclarationList(list) && (list.flags & ts.NodeFlags.Const) !== 0;
      return isConst && decl.initializer && ts.isIdentifier(decl.name) ? decl.initializer : undefined;
    }
    if (ts.isPropertyAssignment(decl)) return decl.initializer; // module.exports = { X: 5000 } or a const object
    if (ts.isShorthandPropertyAssignment(decl)) return decl.name;
    if (ts.isBinaryExpression(decl)) return decl.right; // exports.X = 5000
    if ((ts.isPropertyAccessExpression(decl) || ts.isElementAccessExpression(decl)) && ts.isBinaryExpression(decl.parent)) return decl.parent.right;
    return undefined;
  }

  /** An object literal an options argument is (inline, or a `const` holding one). */
  objectOf(expr: TS.Expression | undefined): TS.ObjectLiteralExpression | undefined {
    if (!expr) return undefined;
    const ts = this.ts;
    let e = this.bindings.unwrap(expr);
    for (let i = 0; i < 5 && (ts.isIdentifier(e) || ts.isPropertyAccessExpression(e)); i++) {
      const init = this.constInitializer(e);
      if (!init) return undefined;
      e = this.bindings.unwrap(init);
    }
    return ts.isObjectLiteralExpression(e) ? e : undefined;
  }

  /** The value expression of a property of an object literal (`ttlMs: 5000`, or `{ ttlMs }`). */
  property(object: TS.ObjectLiteralExpression | undefined, name: string): TS.Expression | undefined {
    const ts = this.ts;
    for (const p of object?.properties ?? []) {
      const key = p.name && (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name)) ? p.name.text : undefined;
      if (key !== name) continue;
      if (ts.isPropertyAssignment(p)) return p.initializer;
      if (ts.isShorthandPropertyAssignment(p)) return p.name;
    }
    return undefined;
  }

  /**
   * A key's pattern: string and template literals, concatenations and `const`s
   * holding them; each `${…}` (or non-constant operand) stands for an id.
   * `undefined` for a key with no literal text to read (computed entirely at run time).
   */
  keyPattern(expr: TS.Expression, prefix = '', suffix = ''): string | undefined {
    const pieces = this.keyPieces(expr, 0);
    if (!pieces) return undefined;
    if (!pieces.some((p) => p !== null && /[\p{L}]/u.test(p))) return undefined;
    return patternOf(prefix + pieces.map((p) => p ?? REPRESENTATIVE_ID).join('') + suffix);
  }

  /** Static text, or `null` for a dynamic part; `undefined` when the expression is not a key shape at all. */
  private keyPieces(expr: TS.Expression, depth: number): (string | null)[] | undefined {
    const ts = this.ts;
    const e = this.bindings.unwrap(expr);
    if (depth > 8) return undefined;
    if (ts.isStringLiteralLike(e)) return [e.text];
    if (ts.isNumericLiteral(e)) return [null];
    if (ts.isTemplateExpression(e)) {
      const out: (string | null)[] = [e.head.text];
      for (const span of e.templateSpans) out.push(...(this.keyPieces(span.expression, depth + 1)?.map((p) => p ?? null) ?? [null]), span.literal.text);
      return out;
    }
    if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const left = this.keyPieces(e.left, depth + 1) ?? [null];
      const right = this.keyPieces(e.right, depth + 1) ?? [null];
      return [...left, ...right];
    }
    if (ts.isArrayLiteralExpression(e) && e.elements.length >= 1) return this.keyPieces(e.elements[0] as TS.Expression, depth + 1);
    if (ts.isIdentifier(e) || ts.isPropertyAccessExpression(e)) {
      const init = this.constInitializer(e);
      if (init) return this.keyPieces(init, depth + 1);
    }
    return undefined;
  }
}

const ARITHMETIC = new Set<number>();

/** A number written with literals only: `5000`, `5_000`, `5e3`, `5 * 1000`, `(5 * 60) * 1000`. */
export function isLiteralArithmetic(ts: TypeScript, e: TS.Expression): boolean {
  if (ARITHMETIC.size === 0) for (const k of [ts.SyntaxKind.AsteriskToken, ts.SyntaxKind.PlusToken, ts.SyntaxKind.MinusToken, ts.SyntaxKind.SlashToken]) ARITHMETIC.add(k);
  if (ts.isNumericLiteral(e)) return true;
  if (ts.isParenthesizedExpression(e)) return isLiteralArithmetic(ts, e.expression);
  if (ts.isBinaryExpression(e)) return ARITHMETIC.has(e.operatorToken.kind) && isLiteralArithmetic(ts, e.left) && isLiteralArithmetic(ts, e.right);
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
