import type * as TS from 'typescript';
import type { TypeScript } from './load.js';

/**
 * Where a name comes from, by following its binding to its declaration (the
 * type checker's symbol resolution): an import (ESM `import`, `import x =
 * require()`, CommonJS `require` and its destructuring), or a value made from
 * one (`new Redlock(…)`, `createClient(…)`, `await createClient().connect()`).
 * Nothing is guessed from names alone.
 */

/** A value's origin: the module and the export it was imported as, and how the value was made from it. */
export interface Origin {
  module: string;
  /** The export: a name, `default`, or `*` (the whole module: a namespace, or CommonJS `module.exports`). */
  name: string;
  /** `import`: the imported binding itself; `new`: an instance (`new X()`); `call`: what calling it returned. */
  made: 'import' | 'new' | 'call';
}

export class Bindings {
  constructor(
    private readonly ts: TypeScript,
    private readonly checker: TS.TypeChecker,
  ) {}

  /** The declaration a name is bound to (through local aliases only: imports stay imports). */
  declarationOf(node: TS.Node): TS.Declaration | undefined {
    const symbol = this.checker.getSymbolAtLocation(node);
    return symbol?.valueDeclaration ?? symbol?.declarations?.[0];
  }

  /** The declaration behind a name, following imports within the repository to the exporting module. */
  targetOf(node: TS.Node): TS.Declaration | undefined {
    const ts = this.ts;
    let symbol = this.checker.getSymbolAtLocation(node);
    if (symbol && ts.isShorthandPropertyAssignment(node.parent) && node.parent.name === node) {
      symbol = this.checker.getShorthandAssignmentValueSymbol(node.parent) ?? symbol;
    }
    for (let i = 0; symbol && symbol.flags & ts.SymbolFlags.Alias && i < 10; i++) {
      const next = this.checker.getAliasedSymbol(symbol);
      if (!next || next === symbol || (next.flags & ts.SymbolFlags.Alias && next.declarations === undefined)) break;
      symbol = next;
    }
    return symbol?.valueDeclaration ?? symbol?.declarations?.[0];
  }

  /** Where an expression's value comes from, as far as its bindings tell. */
  originOf(expr: TS.Expression, depth = 0): Origin | undefined {
    const ts = this.ts;
    if (depth > 8) return undefined;
    const e = this.unwrap(expr);
    if (ts.isAwaitExpression(e)) return this.originOf(e.expression, depth + 1);
    // `m.default?.default ?? m.default ?? m`: interop probing leads to the module whichever way it goes.
    if (ts.isBinaryExpression(e) && (e.operatorToken.kind === ts.SyntaxKind.QuestionQuestionToken || e.operatorToken.kind === ts.SyntaxKind.BarBarToken)) {
      return this.originOf(e.left, depth + 1) ?? this.originOf(e.right, depth + 1);
    }
    if (ts.isConditionalExpression(e)) return this.originOf(e.whenTrue, depth + 1) ?? this.originOf(e.whenFalse, depth + 1);
    if (ts.isNewExpression(e)) {
      const o = this.originOf(e.expression, depth + 1);
      return o && o.made === 'import' ? { ...o, made: 'new' } : undefined;
    }
    if (ts.isCallExpression(e)) {
      if (this.isRequire(e)) return { module: (e.arguments[0] as TS.StringLiteral).text, name: '*', made: 'import' };
      const callee = this.unwrap(e.expression);
      // `createClient().connect()`, `.duplicate()`: the same kind of client.
      if (ts.isPropertyAccessExpression(callee) && ['connect', 'duplicate'].includes(callee.name.text)) {
        const o = this.originOf(callee.expression, depth + 1);
        if (o && o.made !== 'import') return o;
      }
      const o = this.originOf(callee, depth + 1);
      if (o && o.made === 'import') return { ...o, made: 'call' };
      // A factory of the repository (`getRedisConnection()`, `db.getRedisClient()`): what it returns.
      const returned = this.returnedBy(e);
      return returned ? this.originOf(returned, depth + 1) : undefined;
    }
    if (ts.isPropertyAccessExpression(e) && e.expression.kind === ts.SyntaxKind.ThisKeyword) return this.originOfField(e.name, depth);
    if (ts.isPropertyAccessExpression(e)) {
      // `ns.Mutex` on a namespace import or a whole `require('m')`; `require('m').X`.
      const o = this.originOf(e.expression, depth + 1);
      if (o && o.made === 'import' && o.name === '*' && e.name.text === 'default') return { ...o, name: 'default' };
      if (!o || o.made !== 'import' || (o.name !== '*' && o.name !== 'default')) return this.originOfMember(e.name, depth);
      // A module of the repository: follow the export to what it holds (`clients.redis` → `new Redis()`).
      if (isRelative(o.module)) return this.followExport(e.name, depth);
      return { module: o.module, name: e.name.text, made: 'import' };
    }
    if (ts.isIdentifier(e)) {
      const decl = this.declarationOf(e);
      const o = decl ? this.originOfDeclaration(decl, depth) : undefined;
      return o && o.made === 'import' && isRelative(o.module) ? this.followExport(e, depth) : o;
    }
    return undefined;
  }

  /** A class field (or getter): its declared type, its initializer, or what the class assigns it (`this.redlock = new Redlock(…)`). */
  private originOfField(name: TS.Node, depth: number): Origin | undefined {
    const ts = this.ts;
    const decl = this.checker.getSymbolAtLocation(name)?.valueDeclaration;
    if (!decl) return undefined;
    if (ts.isGetAccessorDeclaration(decl) && decl.body) {
      const returned = singleReturnOf(ts, decl.body);
      return returned ? this.originOf(returned, depth + 1) : undefined;
    }
    const direct = this.originOfDeclaration(decl, depth + 1);
    if (direct || !ts.isPropertyDeclaration(decl) || !ts.isIdentifier(decl.name)) return direct;
    const field = decl.name.text;
    let found: Origin | undefined;
    const visit = (node: TS.Node): void => {
      if (found) return;
      if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
        const left = node.left;
        if (ts.isPropertyAccessExpression(left) && left.expression.kind === ts.SyntaxKind.ThisKeyword && left.name.text === field) found = this.originOf(node.right, depth + 1);
      }
      if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.QuestionQuestionEqualsToken) {
        const left = node.left;
        if (ts.isPropertyAccessExpression(left) && left.expression.kind === ts.SyntaxKind.ThisKeyword && left.name.text === field) found = this.originOf(node.right, depth + 1);
      }
      ts.forEachChild(node, visit);
    };
    visit(decl.parent);
    return found;
  }

  /** A property of another object (`db.client`, `MutexLock.redlock`): its declaration's type or initializer. */
  private originOfMember(name: TS.Node, depth: number): Origin | undefined {
    const decl = this.checker.getSymbolAtLocation(name)?.valueDeclaration;
    if (!decl) return undefined;
    if (this.ts.isPropertyDeclaration(decl)) return this.originOfField(name, depth);
    if (this.ts.isGetAccessorDeclaration(decl) && decl.body) {
      const returned = singleReturnOf(this.ts, decl.body);
      return returned ? this.originOf(returned, depth + 1) : undefined;
    }
    return this.originOfDeclaration(decl, depth + 1);
  }

  /** What a call of a function of the repository returns, when it returns in one place (a factory, a getter-like method). */
  returnedBy(call: TS.CallExpression): TS.Expression | undefined {
    const target = this.checker.getResolvedSignature(call)?.declaration;
    if (!target || !('body' in target) || !target.body) return undefined;
    const body = target.body as TS.Node;
    return this.ts.isBlock(body) ? singleReturnOf(this.ts, body) : (body as TS.Expression);
  }

  /** What a name imported from a module of the repository holds, at its declaration there. */
  private followExport(name: TS.Node, depth: number): Origin | undefined {
    const target = this.targetOf(name);
    if (!target || target === this.declarationOf(name)) return undefined;
    const o = this.originOfDeclaration(target, depth + 1);
    return o && o.made === 'import' && isRelative(o.module) ? undefined : o;
  }

  private originOfDeclaration(decl: TS.Declaration, depth: number): Origin | undefined {
    const ts = this.ts;
    if (ts.isImportSpecifier(decl)) {
      return { module: moduleText(decl.parent.parent.parent.moduleSpecifier), name: (decl.propertyName ?? decl.name).text, made: 'import' };
    }
    if (ts.isImportClause(decl)) return { module: moduleText(decl.parent.moduleSpecifier), name: 'default', made: 'import' };
    if (ts.isNamespaceImport(decl)) return { module: moduleText(decl.parent.parent.moduleSpecifier), name: '*', made: 'import' };
    if (ts.isImportEqualsDeclaration(decl) && ts.isExternalModuleReference(decl.moduleReference)) {
      return { module: moduleText(decl.moduleReference.expression), name: '*', made: 'import' };
    }
    if (ts.isBindingElement(decl) && ts.isObjectBindingPattern(decl.parent)) {
      const holder = decl.parent.parent;
      if (!ts.isVariableDeclaration(holder) || !holder.initializer) return undefined;
      const o = this.originOf(holder.initializer, depth + 1);
      const key = decl.propertyName ?? decl.name;
      if (!o || o.made !== 'import' || o.name !== '*' || !ts.isIdentifier(key)) return undefined;
      return { module: o.module, name: key.text, made: 'import' };
    }
    if (ts.isVariableDeclaration(decl) && ts.isIdentifier(decl.name)) {
      // A declared type says what it holds (`const redis: RedisClientType = new Proxy(…)`, `let client: Redis`).
      const type = decl.type && ts.isUnionTypeNode(decl.type) ? decl.type.types.find((t) => ts.isTypeReferenceNode(t)) : decl.type;
      const typed = type && ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName) ? this.originOfTypeName(type.typeName, depth) : undefined;
      if (typed && typed.made === 'import') return { ...typed, made: 'new' };
      return decl.initializer ? this.originOf(decl.initializer, depth + 1) : undefined;
    }
    if (ts.isParameter(decl) || ts.isPropertyDeclaration(decl)) {
      // A typed parameter or field: `redis: Redis` names the class it holds an instance of.
      if (decl.initializer) return this.originOf(decl.initializer, depth + 1);
      const type = decl.type && ts.isUnionTypeNode(decl.type) ? decl.type.types.find((t) => ts.isTypeReferenceNode(t)) : decl.type;
      if (type && ts.isTypeReferenceNode(type)) {
        const name = type.typeName;
        const o = ts.isIdentifier(name) ? this.originOfTypeName(name, depth) : undefined;
        return o && o.made === 'import' ? { ...o, made: 'new' } : undefined;
      }
    }
    return undefined;
  }

  /** What a type name stands for: an import, or a type alias of the repository for one (`type RedisClient = Redis`, `ReturnType<typeof createClient>`). */
  private originOfTypeName(name: TS.Identifier, depth: number): Origin | undefined {
    const ts = this.ts;
    const local = this.declarationOf(name);
    const origin = local ? this.originOfDeclaration(local, depth + 1) : undefined;
    if (origin && !isRelative(origin.module)) return origin;
    const decl = this.targetOf(name);
    if (!decl || !ts.isTypeAliasDeclaration(decl) || depth > 8) return origin;
    const type = decl.type;
    if (ts.isTypeReferenceNode(type) && ts.isIdentifier(type.typeName)) {
      if (type.typeName.text === 'ReturnType' && type.typeArguments?.[0] && ts.isTypeQueryNode(type.typeArguments[0]) && ts.isIdentifier(type.typeArguments[0].exprName)) {
        const fn = this.originOf(type.typeArguments[0].exprName, depth + 1);
        return fn && fn.made === 'import' ? { ...fn, made: 'call' } : origin;
      }
      return this.originOfTypeName(type.typeName, depth + 1) ?? origin;
    }
    return origin;
  }

  /** `require('m')` with a string literal. */
  isRequire(e: TS.CallExpression): boolean {
    const ts = this.ts;
    return ts.isIdentifier(e.expression) && e.expression.text === 'require' && e.arguments.length === 1 && ts.isStringLiteralLike(e.arguments[0]!);
  }

  /** The expression without parentheses, `as`, `satisfies` and `!`. */
  unwrap(expr: TS.Expression): TS.Expression {
    const ts = this.ts;
    let e = expr;
    while (ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isNonNullExpression(e) || ts.isTypeAssertionExpression(e)) e = e.expression;
    return e;
  }
}

/** The expression of a block's one `return`, where a block returns in one place only (nested functions apart). */
export function singleReturnOf(ts: TypeScript, block: TS.Node): TS.Expression | undefined {
  const returns: TS.ReturnStatement[] = [];
  const visit = (node: TS.Node): void => {
    if (ts.isReturnStatement(node)) returns.push(node);
    else if (!ts.isFunctionLike(node)) ts.forEachChild(node, visit);
  };
  ts.forEachChild(block, visit);
  const values = returns.filter((r) => r.expression !== undefined);
  return values.length >= 1 && values.every((r) => r.expression!.getText() === values[0]!.expression!.getText()) ? values[0]!.expression : values.length === 1 ? values[0]!.expression : undefined;
}

function isRelative(module: string): boolean {
  return module.startsWith('./') || module.startsWith('../') || module === '.' || module === '..';
}

function moduleText(specifier: TS.Expression): string {
  return (specifier as TS.StringLiteral).text;
}
