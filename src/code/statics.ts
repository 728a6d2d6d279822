import type * as TS from 'typescript';
import type { Evaluator } from './evaluate.js';
import { frameOf, MAX_STEPS, thisOf, type Frame, type Ref } from './frame.js';
import type { TypeScript } from './load.js';

/**
 * What a key's reading needs beyond one step at a time: a `let` built in
 * steps, a condition that reads as true or false, an array's elements, every
 * value a function can return.
 */
export class Statics {
  constructor(
    private readonly ts: TypeScript,
    private readonly checker: TS.TypeChecker,
    private readonly ev: Evaluator,
  ) {}

  /**
   * The values a `let` can hold where it is read, when it has several (`let name = …; if (x) name = name + …`):
   * its initializer and each assignment, those under an `if` whose condition reads false left out, and
   * an assignment under one that reads true replacing what came before. `undefined` for any other name.
   */
  letValues(e: TS.Identifier, frame: Frame | undefined): Ref[] | undefined {
    const ts = this.ts;
    const decl = this.ev.bindings.declarationOf(e);
    if (!decl || !ts.isVariableDeclaration(decl) || !decl.initializer) return undefined;
    const assigned = this.ev.assignments(decl);
    if (assigned.length === 0) return undefined;
    const inner = this.ev.frameFor(decl, frame);
    let values: Ref[] = [{ expr: decl.initializer, frame: inner }];
    for (const right of assigned) {
      // Only what is assigned before the read.
      if (right.getSourceFile() !== e.getSourceFile() || right.pos > e.pos) continue;
      const branch = ts.findAncestor(right, (n) => ts.isIfStatement(n) || n === decl.parent.parent.parent);
      const holds = branch && ts.isIfStatement(branch) ? this.truthy({ expr: branch.expression, frame: inner }) : true;
      if (holds === false) continue;
      const ref = { expr: right, frame: inner };
      values = holds === true ? [ref] : [...values, ref];
    }
    return values;
  }

  /** Whether a condition reads as true or false statically (a literal, a property absent from a known object); `undefined` when it cannot tell. */
  truthy(ref: Ref, depth = 0): boolean | undefined {
    const ts = this.ts;
    const e = this.ev.unwrap(ref.expr);
    if (depth > MAX_STEPS) return undefined;
    if (e.kind === ts.SyntaxKind.TrueKeyword) return true;
    if (e.kind === ts.SyntaxKind.FalseKeyword || e.kind === ts.SyntaxKind.NullKeyword) return false;
    if (ts.isStringLiteralLike(e)) return e.text !== '';
    if (ts.isNumericLiteral(e)) return Number(e.text) !== 0;
    if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.ExclamationToken) {
      const inner = this.truthy({ expr: e.operand, frame: ref.frame }, depth + 1);
      return inner === undefined ? undefined : !inner;
    }
    if (ts.isPropertyAccessExpression(e) && e.expression.kind !== ts.SyntaxKind.ThisKeyword) {
      const holder = this.objectLiteralOf({ expr: e.expression, frame: ref.frame });
      if (holder && !holder.properties.some((p) => ts.isSpreadAssignment(p))) {
        const step = this.ev.propertyOf({ expr: holder, frame: ref.frame }, e.name.text);
        if (!step) return false;
        return step.kind === 'ref' ? this.truthy(step.ref, depth + 1) : undefined;
      }
    }
    const step = this.ev.step(ref);
    return step.kind === 'ref' ? this.truthy(step.ref, depth + 1) : undefined;
  }

  /** The elements an array holds, when it is known statically: an array literal (spreads opened), or a rest parameter's arguments. */
  elementsOf(ref: Ref, depth = 0): Ref[] | undefined {
    const ts = this.ts;
    const e = this.ev.unwrap(ref.expr);
    if (depth > MAX_STEPS) return undefined;
    if (ts.isArrayLiteralExpression(e)) {
      const out: Ref[] = [];
      for (const el of e.elements) {
        if (!ts.isSpreadElement(el)) out.push({ expr: el, frame: ref.frame });
        else {
          const inner = this.elementsOf({ expr: el.expression, frame: ref.frame }, depth + 1);
          if (!inner) return undefined;
          out.push(...inner);
        }
      }
      return out;
    }
    if (ts.isIdentifier(e)) {
      const decl = this.ev.bindings.declarationOf(e);
      if (decl && ts.isParameter(decl) && decl.dotDotDotToken) {
        const fn = decl.parent as TS.SignatureDeclaration;
        const f = ref.frame && frameOf(ref.frame, fn);
        return f ? f.args.slice(fn.parameters.indexOf(decl)).map((expr) => ({ expr, frame: f.parent })) : undefined;
      }
    }
    const next = this.ev.step(ref);
    return next.kind === 'ref' ? this.elementsOf(next.ref, depth + 1) : undefined;
  }

  /** The object literal an expression holds, if it is one (followed through names and parameters). */
  private objectLiteralOf(ref: Ref): TS.ObjectLiteralExpression | undefined {
    let current: Ref = ref;
    for (let i = 0; i < MAX_STEPS; i++) {
      const e = this.ev.unwrap(current.expr);
      if (this.ts.isObjectLiteralExpression(e)) return e;
      const next = this.ev.step(current);
      if (next.kind !== 'ref') return undefined;
      current = next.ref;
    }
    return undefined;
  }

  /** Every expression a call of a function of the repository can return, each read in the call's frame. */
  returnsOf(e: TS.CallExpression, frame: Frame | undefined): Ref[] {
    const ts = this.ts;
    const target = this.checker.getResolvedSignature(e)?.declaration;
    if (!target || !('body' in target) || !target.body) return [];
    const body = target.body as TS.Node;
    const inner: Frame = { fn: target, args: e.arguments, parent: frame, thisClass: thisOf(frame) };
    if (!ts.isBlock(body)) return [{ expr: body as TS.Expression, frame: inner }];
    const found: Ref[] = [];
    const visit = (node: TS.Node): void => {
      if (ts.isReturnStatement(node) && node.expression) found.push({ expr: node.expression, frame: inner });
      else if (!ts.isFunctionLike(node)) ts.forEachChild(node, visit);
    };
    ts.forEachChild(body, visit);
    return found;
  }
}
