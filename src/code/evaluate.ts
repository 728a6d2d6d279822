import type * as TS from 'typescript';
import { singleReturnOf, type Bindings } from './bindings.js';
import { Classes } from './classes.js';
import { frameOf, isInside, MAX_STEPS, thisOf, type Frame, type Ref, type Step } from './frame.js';
import { schemaDefault } from './schema-default.js';
import type { TypeScript } from './load.js';

export type { Frame, Ref, Step } from './frame.js';
export { isInside, MAX_STEPS } from './frame.js';

/**
 * Reading an expression's value statically, the way a reader of the code
 * would: through `const`s and imports, object literals and their properties,
 * enum members, a function's single return, a class's fields as its
 * constructor set them (for its one construction), `??`/`||` defaults, an
 * environment variable's default (`Number(process.env.X) || 60000`, a zod
 * schema's `.default(5000)`), and — reading a wrapper's lock call for one of
 * its callers — the caller's arguments bound to the wrapper's parameters
 * (`Frame`). What cannot be read is said so, never guessed.
 */

export class Evaluator {
  private readonly classes: Classes;

  constructor(
    readonly ts: TypeScript,
    private readonly checker: TS.TypeChecker,
    readonly bindings: Bindings,
    /** Every `new`/`super` call in the program: a class's field is read for its construction. */
    calls: () => readonly (TS.CallExpression | TS.NewExpression)[],
  ) {
    this.classes = new Classes(ts, checker, calls);
  }

  /** The expression without parentheses, casts and `!`. */
  unwrap(e: TS.Expression): TS.Expression {
    return this.bindings.unwrap(e);
  }

  /** One step from a name, a property, `this.field`, a call of a function with one return, or a cast. */
  step(ref: Ref): Step {
    const ts = this.ts;
    const e = this.unwrap(ref.expr);
    if (ts.isIdentifier(e)) return this.stepName(e, ref.frame);
    if (ts.isPropertyAccessExpression(e) || (ts.isElementAccessExpression(e) && ts.isStringLiteralLike(e.argumentExpression))) {
      const name = ts.isPropertyAccessExpression(e) ? e.name.text : (e.argumentExpression as TS.StringLiteral).text;
      return this.stepProperty(e.expression, name, ts.isPropertyAccessExpression(e) ? e.name : e.argumentExpression, ref.frame);
    }
    // `config[worker]`: a computed name that reads as a constant string.
    if (ts.isElementAccessExpression(e)) {
      const name = this.constantString({ expr: e.argumentExpression, frame: ref.frame });
      return name === undefined ? { kind: 'unknown' } : this.stepProperty(e.expression, name, e.argumentExpression, ref.frame);
    }
    if (ts.isCallExpression(e)) return this.stepCall(e, ref.frame);
    if (ts.isAwaitExpression(e)) return { kind: 'ref', ref: { expr: e.expression, frame: ref.frame } };
    return { kind: 'unknown' };
  }

  private stepName(e: TS.Identifier, frame: Frame | undefined): Step {
    const ts = this.ts;
    if (e.text === 'undefined') return { kind: 'unknown' };
    const decl = this.bindings.targetOf(e) ?? this.bindings.declarationOf(e);
    if (!decl) return { kind: 'unknown' };
    if (ts.isParameter(decl)) return this.stepParameter(decl, [], frame);
    if (ts.isBindingElement(decl)) return this.stepBinding(decl, frame);
    if (ts.isVariableDeclaration(decl)) {
      if (!ts.isIdentifier(decl.name)) return { kind: 'unknown' };
      // A `let` set once (`queue ??= new Queue(…)` in a getter) holds what that assignment gives it.
      const assigned = this.assignments(decl);
      const only = assigned.length === 0 ? decl.initializer : assigned.length === 1 && (!decl.initializer || this.isUndefined(decl.initializer)) ? assigned[0] : undefined;
      if (!only) return { kind: 'unknown' };
      // A local of a function whose parameters the frame binds is read in that frame; a module's, in none.
      return { kind: 'ref', ref: { expr: only, frame: this.frameFor(decl, frame) } };
    }
    if (ts.isEnumMember(decl)) return decl.initializer ? { kind: 'ref', ref: { expr: decl.initializer, frame: undefined } } : { kind: 'unknown' };
    if (ts.isPropertyAssignment(decl)) return { kind: 'ref', ref: { expr: decl.initializer, frame: undefined } };
    if (ts.isShorthandPropertyAssignment(decl)) return { kind: 'ref', ref: { expr: decl.name, frame: undefined } };
    if (ts.isBinaryExpression(decl)) return { kind: 'ref', ref: { expr: decl.right, frame: undefined } }; // exports.X = 5000
    if ((ts.isPropertyAccessExpression(decl) || ts.isElementAccessExpression(decl)) && ts.isBinaryExpression(decl.parent)) {
      return { kind: 'ref', ref: { expr: decl.parent.right, frame: undefined } };
    }
    if (ts.isPropertyDeclaration(decl) && decl.initializer) return { kind: 'ref', ref: { expr: decl.initializer, frame: undefined } };
    return { kind: 'unknown' };
  }

  /** What a `let` or `var` is assigned after its declaration (`x = …`, `x ??= …`); none for a `const`. */
  assignments(decl: TS.VariableDeclaration): TS.Expression[] {
    const cached = this.assigned.get(decl);
    if (cached) return cached;
    const found = this.findAssignments(decl);
    this.assigned.set(decl, found);
    return found;
  }

  private readonly assigned = new Map<TS.VariableDeclaration, TS.Expression[]>();

  private findAssignments(decl: TS.VariableDeclaration): TS.Expression[] {
    const ts = this.ts;
    const list = decl.parent;
    if (ts.isVariableDeclarationList(list) && (list.flags & ts.NodeFlags.Const) !== 0) return [];
    const symbol = this.checker.getSymbolAtLocation(decl.name);
    const found: TS.Expression[] = [];
    const assigning = new Set([ts.SyntaxKind.EqualsToken, ts.SyntaxKind.QuestionQuestionEqualsToken, ts.SyntaxKind.BarBarEqualsToken]);
    const visit = (node: TS.Node): void => {
      if (ts.isBinaryExpression(node) && assigning.has(node.operatorToken.kind) && ts.isIdentifier(node.left) && this.checker.getSymbolAtLocation(node.left) === symbol) found.push(node.right);
      ts.forEachChild(node, visit);
    };
    if (symbol) visit(decl.getSourceFile());
    return found;
  }

  /** The frame a declaration inside a function is read in: the frame that binds that function, if any. */
  frameFor(decl: TS.Node, frame: Frame | undefined): Frame | undefined {
    for (let f = frame; f; f = f.parent) if (isInside(decl, f.fn)) return f;
    return undefined;
  }

  /** A parameter (or a property `path` of it, destructured): the caller's argument, else its default; open without a frame. */
  private stepParameter(param: TS.ParameterDeclaration, path: readonly (string | TS.BindingElement)[], frame: Frame | undefined): Step {
    const fn = param.parent as TS.SignatureDeclaration;
    let f = frame;
    while (f && f.fn !== fn) f = f.parent;
    if (!f) {
      // A constructor's parameter is bound by how the instance `this` is was made: a subclass's `super(…)`, or the one `new`.
      f = this.ts.isConstructorDeclaration(fn) ? this.classes.constructorFrame(fn, thisOf(frame)) : undefined;
      if (!f) return { kind: 'open', fn };
    }
    const index = fn.parameters.indexOf(param);
    const arg = index >= 0 ? f.args[index] : undefined;
    let ref: Ref | undefined = arg && !this.isUndefined(arg) ? { expr: arg, frame: f.parent } : undefined;
    if (!ref && param.initializer) ref = { expr: param.initializer, frame: f };
    if (path.length === 0) return ref ? { kind: 'ref', ref } : { kind: 'unknown' };
    return this.stepPath(ref, path, f);
  }

  /** A destructured name: its property of what the pattern destructures, or the element's own default. */
  private stepBinding(element: TS.BindingElement, frame: Frame | undefined): Step {
    const ts = this.ts;
    const path: (string | TS.BindingElement)[] = [];
    let node: TS.Node = element;
    // `const { key, ...rest } = options`: the rest is an object of its own, not a property named `rest`.
    if (element.dotDotDotToken) return { kind: 'unknown' };
    while (ts.isBindingElement(node)) {
      const key = node.propertyName ?? node.name;
      path.unshift(node);
      if (!ts.isObjectBindingPattern(node.parent)) return { kind: 'unknown' };
      if (!ts.isIdentifier(key) && !ts.isStringLiteral(key)) return { kind: 'unknown' };
      node = node.parent.parent;
    }
    if (ts.isParameter(node)) return this.stepParameter(node, path, frame);
    if (ts.isVariableDeclaration(node) && node.initializer) return this.stepPath({ expr: node.initializer, frame: this.frameFor(node, frame) }, path, frame);
    return { kind: 'unknown' };
  }

  /** Follows destructuring: each element's property of the value, or the element's default where there is none. */
  private stepPath(ref: Ref | undefined, path: readonly (string | TS.BindingElement)[], defaultsFrame: Frame | undefined): Step {
    let current = ref;
    for (const element of path) {
      const name = typeof element === 'string' ? element : ((element.propertyName ?? element.name) as TS.Identifier).text;
      const next = current ? this.propertyOf(current, name) : undefined;
      if (next && next.kind !== 'unknown' && next.kind !== 'ref') return next;
      current = next?.kind === 'ref' ? next.ref : undefined;
      if (!current && typeof element !== 'string' && element.initializer) current = { expr: element.initializer, frame: defaultsFrame };
      if (!current) return { kind: 'unknown' };
    }
    return current ? { kind: 'ref', ref: current } : { kind: 'unknown' };
  }

  private stepProperty(object: TS.Expression, name: string, nameNode: TS.Node, frame: Frame | undefined): Step {
    const ts = this.ts;
    const o = this.unwrap(object);
    if (ts.isPropertyAccessExpression(o) && ts.isIdentifier(o.expression) && o.expression.text === 'process' && o.name.text === 'env') return { kind: 'env', name, fallback: undefined };
    if (o.kind === ts.SyntaxKind.ThisKeyword) return this.stepField(nameNode, frame);
    const viaObject = this.propertyOf({ expr: object, frame }, name);
    if (viaObject && viaObject.kind !== 'unknown') return viaObject;
    // A static field, or a property the checker knows the declaration of (a class's, an object's of another module).
    const symbol = this.checker.getSymbolAtLocation(nameNode);
    const decl = symbol?.valueDeclaration;
    if (decl && (ts.isPropertyDeclaration(decl) || ts.isPropertyAssignment(decl)) && decl.initializer) return { kind: 'ref', ref: { expr: decl.initializer, frame: undefined } };
    if (decl && ts.isEnumMember(decl) && decl.initializer) return { kind: 'ref', ref: { expr: decl.initializer, frame: undefined } };
    return { kind: 'unknown' };
  }

  /**
   * Property `name` of what `ref` holds: an object literal's, a schema's parsed from `process.env` (the
   * variable, with the schema's `.default(…)`), a BullMQ `Queue`'s `name` (its first argument).
   */
  propertyOf(ref: Ref, name: string, seen: Set<TS.Node> = new Set()): Step | undefined {
    const ts = this.ts;
    const unknown: Step = { kind: 'unknown' };
    let current: Ref = ref;
    for (let i = 0; i < MAX_STEPS; i++) {
      const e = this.unwrap(current.expr);
      // An object read once per question: `const o = { ...o }`, or spreads of spreads, end here.
      if (seen.has(e) || seen.size > MAX_STEPS * 4) return unknown;
      seen.add(e);
      // Spreading `null` or `undefined` adds nothing.
      if (e.kind === ts.SyntaxKind.NullKeyword || this.isUndefined(e)) return undefined;
      if (ts.isObjectLiteralExpression(e)) {
        // The last word wins: `{ lockDuration: 3000, ...options }` takes the spread's where it has one.
        for (const p of [...e.properties].reverse()) {
          if (ts.isSpreadAssignment(p)) {
            const inner = this.propertyOf({ expr: p.expression, frame: current.frame }, name, seen);
            if (inner) return inner; // what the spread holds, or that it cannot be read
            continue;
          }
          const key = !p.name ? undefined : ts.isIdentifier(p.name) || ts.isStringLiteral(p.name) ? p.name.text : ts.isComputedPropertyName(p.name) ? this.constantString({ expr: p.name.expression, frame: current.frame }) : undefined;
          if (key === undefined && !ts.isMethodDeclaration(p) && !ts.isShorthandPropertyAssignment(p) && !ts.isPropertyAssignment(p)) continue;
          if (key === undefined) return unknown; // a computed name that may be this one
          if (key !== name) continue;
          if (ts.isPropertyAssignment(p)) return { kind: 'ref', ref: { expr: p.initializer, frame: current.frame } };
          if (ts.isShorthandPropertyAssignment(p)) return { kind: 'ref', ref: { expr: p.name, frame: current.frame } };
          return unknown;
        }
        return undefined; // known: the object has no such property
      }
      if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression) && /^(safe)?[Pp]arse(Async)?$/.test(e.expression.name.text) && e.arguments.length === 1 && this.isProcessEnv(e.arguments[0]!)) {
        return { kind: 'env', name, fallback: schemaDefault(this, { expr: e.expression.expression, frame: current.frame }, name) };
      }
      if (ts.isNewExpression(e) && name === 'name' && e.arguments?.[0] && this.isNamed(e.expression, 'Queue')) return { kind: 'ref', ref: { expr: e.arguments[0], frame: current.frame } };
      // `options || {}`, `options ?? defaults`: the object given, else the fallback's.
      if (ts.isBinaryExpression(e) && (e.operatorToken.kind === ts.SyntaxKind.BarBarToken || e.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken)) {
        const first = this.propertyOf({ expr: e.left, frame: current.frame }, name, seen);
        if (first) return first;
        current = { expr: e.right, frame: current.frame };
        continue;
      }
      // `...(lockDuration && { lockDuration })`: the object that holds it.
      if (ts.isBinaryExpression(e) && e.operatorToken.kind === ts.SyntaxKind.AmpersandAmpersandToken) {
        current = { expr: e.right, frame: current.frame };
        continue;
      }
      // `isDev ? { ttl: 5_000 } : { ttl: 60_000 }`: one value only where both branches name the same constant
      // (two literals, even equal, are two places an edit would have to change).
      if (ts.isConditionalExpression(e)) {
        const a = this.propertyOf({ expr: e.whenTrue, frame: current.frame }, name, seen);
        const b = this.propertyOf({ expr: e.whenFalse, frame: current.frame }, name, seen);
        if (a === undefined && b === undefined) return undefined;
        const named = (s: Step | undefined) => (s?.kind === 'ref' && ts.isIdentifier(s.ref.expr) ? s.ref.expr.text : undefined);
        return named(a) !== undefined && named(a) === named(b) ? a : unknown;
      }
      const next = this.step(current);
      if (next.kind === 'open') return next;
      if (next.kind !== 'ref') return unknown;
      current = next.ref;
    }
    return unknown;
  }

  /** `this.name` in a class: its initializer, or what its constructor assigns it (a parameter property: the argument). */
  private stepField(nameNode: TS.Node, frame: Frame | undefined): Step {
    const ts = this.ts;
    const decl = this.checker.getSymbolAtLocation(nameNode)?.valueDeclaration;
    if (!decl) return { kind: 'unknown' };
    if (ts.isParameter(decl)) return this.stepParameter(decl, [], frame);
    if (!ts.isPropertyDeclaration(decl)) return { kind: 'unknown' };
    if (decl.initializer) return { kind: 'ref', ref: { expr: decl.initializer, frame: undefined } };
    const ctor = decl.parent.members.find((m): m is TS.ConstructorDeclaration => ts.isConstructorDeclaration(m) && m.body !== undefined);
    if (!ctor?.body) return { kind: 'unknown' };
    const name = (decl.name as TS.Identifier).text;
    for (const statement of ctor.body.statements) {
      if (!ts.isExpressionStatement(statement) || !ts.isBinaryExpression(statement.expression)) continue;
      const { left, operatorToken, right } = statement.expression;
      if (operatorToken.kind !== ts.SyntaxKind.EqualsToken || !ts.isPropertyAccessExpression(left) || left.expression.kind !== ts.SyntaxKind.ThisKeyword || left.name.text !== name) continue;
      const bound = (frame && frameOf(frame, ctor)) ?? this.classes.constructorFrame(ctor, thisOf(frame));
      return { kind: 'ref', ref: { expr: right, frame: bound } };
    }
    return { kind: 'unknown' };
  }

  /** A call: `Number(x)` and the like read `x`; a function of the repository with one `return` reads what it returns. */
  private stepCall(e: TS.CallExpression, frame: Frame | undefined): Step {
    const ts = this.ts;
    const callee = this.unwrap(e.expression);
    if (ts.isIdentifier(callee) && CONVERSIONS.has(callee.text) && e.arguments[0]) return { kind: 'ref', ref: { expr: e.arguments[0], frame } };
    const target = this.checker.getResolvedSignature(e)?.declaration;
    if (!target || !('body' in target) || !target.body) return { kind: 'unknown' };
    const body = target.body as TS.Node;
    const returned = ts.isBlock(body) ? singleReturnOf(ts, body) : (body as TS.Expression);
    return returned ? { kind: 'ref', ref: { expr: returned, frame: { fn: target, args: e.arguments, parent: frame } } } : { kind: 'unknown' };
  }

  /** What an expression holds when it is one string known statically (`WorkerEnum.STANDARD`, a `const`), else `undefined`. */
  constantString(ref: Ref): string | undefined {
    let current: Ref = ref;
    for (let i = 0; i < MAX_STEPS; i++) {
      const e = this.unwrap(current.expr);
      if (this.ts.isStringLiteralLike(e)) return e.text;
      const next = this.step(current);
      if (next.kind !== 'ref') return undefined;
      current = next.ref;
    }
    return undefined;
  }

  isProcessEnv(e: TS.Expression): boolean {
    const u = this.unwrap(e);
    return this.ts.isPropertyAccessExpression(u) && this.ts.isIdentifier(u.expression) && u.expression.text === 'process' && u.name.text === 'env';
  }

  isUndefined(e: TS.Expression): boolean {
    const u = this.unwrap(e);
    return (this.ts.isIdentifier(u) && u.text === 'undefined') || u.kind === this.ts.SyntaxKind.VoidExpression;
  }

  /** Whether a constructor expression names `name` (`Queue`, `bullmq.Queue`). */
  private isNamed(e: TS.Expression, name: string): boolean {
    const u = this.unwrap(e);
    return (this.ts.isIdentifier(u) && u.text === name) || (this.ts.isPropertyAccessExpression(u) && u.name.text === name);
  }
}

/** Functions that pass a number or a string through: `Number(process.env.X)` reads as `process.env.X`. */
const CONVERSIONS = new Set(['Number', 'parseInt', 'parseFloat', 'String', 'BigInt']);
