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
      return o && o.made === 'import' ? { ...o, made: 'call' } : undefined;
    }
    if (ts.isPropertyAccessExpression(e)) {
      // `ns.Mutex` on a namespace import or a whole `require('m')`; `require('m').X`.
      const o = this.originOf(e.expression, depth + 1);
      if (!o || o.made !== 'import' || (o.name !== '*' && o.name !== 'default')) return undefined;
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
    if (ts.isVariableDeclaration(decl) && decl.initializer && ts.isIdentifier(decl.name)) return this.originOf(decl.initializer, depth + 1);
    if (ts.isParameter(decl) || ts.isPropertyDeclaration(decl)) {
      // A typed parameter or field: `redis: Redis` names the class it holds an instance of.
      if (decl.initializer) return this.originOf(decl.initializer, depth + 1);
      const type = decl.type;
      if (type && ts.isTypeReferenceNode(type)) {
        const name = type.typeName;
        const o = ts.isIdentifier(name) ? this.originOfTypeName(name, depth) : undefined;
        return o && o.made === 'import' ? { ...o, made: 'new' } : undefined;
      }
    }
    return undefined;
  }

  private originOfTypeName(name: TS.Identifier, depth: number): Origin | undefined {
    const decl = this.declarationOf(name);
    return decl ? this.originOfDeclaration(decl, depth + 1) : undefined;
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

function isRelative(module: string): boolean {
  return module.startsWith('./') || module.startsWith('../') || module === '.' || module === '..';
}

function moduleText(specifier: TS.Expression): string {
  return (specifier as TS.StringLiteral).text;
}
