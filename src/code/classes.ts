import type * as TS from 'typescript';
import type { Frame } from './frame.js';
import type { TypeScript } from './load.js';

/**
 * How an instance of a class of the repository is made, for reading what its
 * constructor's parameters (and the fields it sets from them) hold: the one
 * `new C(…)` in the program, or — for an instance of a subclass (`this` in a
 * method a subclass calls) — the `super(…)` calls up the chain of `extends`.
 */
export class Classes {
  private readonly constructions = new Map<TS.ClassLikeDeclaration, (TS.NewExpression | TS.CallExpression)[]>();

  constructor(
    private readonly ts: TypeScript,
    private readonly checker: TS.TypeChecker,
    /** Every `new`/`super` call in the program. */
    private readonly calls: () => readonly (TS.CallExpression | TS.NewExpression)[],
  ) {}

  /** The one `new C(…)` (or subclass `super(…)`) of a class in the program; `undefined` when there are none or several. */
  constructionOf(cls: TS.ClassLikeDeclaration): TS.NewExpression | TS.CallExpression | undefined {
    let found = this.constructions.get(cls);
    if (!found) {
      // Only `new <its name>` and `super(…)` can make it (a class is rarely renamed on import).
      const candidates = [...(this.byName().get(cls.name?.text ?? '') ?? []), ...(this.byName().get('super') ?? [])];
      found = candidates.filter((c) => {
        const target = this.checker.getResolvedSignature(c)?.declaration;
        return target !== undefined && ((this.ts.isConstructorDeclaration(target) && target.parent === cls) || (target as TS.Node) === cls);
      });
      this.constructions.set(cls, found);
    }
    return found.length === 1 ? found[0] : undefined;
  }

  private index: Map<string, (TS.CallExpression | TS.NewExpression)[]> | undefined;

  /** `new X(…)` by `X`'s name, and `super(…)` calls under `super`. */
  private byName(): Map<string, (TS.CallExpression | TS.NewExpression)[]> {
    if (this.index) return this.index;
    const ts = this.ts;
    this.index = new Map();
    for (const c of this.calls()) {
      const e = c.expression;
      const name = ts.isNewExpression(c) ? (ts.isIdentifier(e) ? e.text : ts.isPropertyAccessExpression(e) ? e.name.text : undefined) : e.kind === ts.SyntaxKind.SuperKeyword ? 'super' : undefined;
      if (name === undefined) continue;
      const list = this.index.get(name);
      if (list) list.push(c);
      else this.index.set(name, [c]);
    }
    return this.index;
  }

  /**
   * The frame that binds `ctor`'s parameters for an instance of `of` (a subclass of its class, or the class
   * itself): the `super(…)` of the subclass just below it, read in that subclass's constructor; else the
   * class's one construction.
   */
  constructorFrame(ctor: TS.ConstructorDeclaration, of: TS.ClassLikeDeclaration | undefined): Frame | undefined {
    const target = ctor.parent;
    for (let cls = of, i = 0; cls && cls !== target && i < 10; i++) {
      const base = this.baseOf(cls);
      if (base === target) {
        const own = cls.members.find((m): m is TS.ConstructorDeclaration => this.ts.isConstructorDeclaration(m) && m.body !== undefined);
        const call = own && superCallIn(this.ts, own);
        if (!call) return undefined;
        const parent: Frame = this.constructorFrame(own!, of) ?? { fn: own!, args: [], parent: undefined, thisClass: of };
        return { fn: ctor, args: call.arguments, parent, thisClass: of };
      }
      cls = base;
    }
    const made = this.constructionOf(target);
    return made ? { fn: ctor, args: made.arguments ?? [], parent: undefined, thisClass: of ?? target } : undefined;
  }

  /** The class a class `extends`, where it is one of the repository's. */
  baseOf(cls: TS.ClassLikeDeclaration): TS.ClassLikeDeclaration | undefined {
    const ts = this.ts;
    const clause = cls.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword);
    const expr = clause?.types[0]?.expression;
    if (!expr) return undefined;
    let symbol = this.checker.getSymbolAtLocation(expr);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = this.checker.getAliasedSymbol(symbol);
    const decl = symbol?.valueDeclaration ?? symbol?.declarations?.[0];
    return decl && ts.isClassLike(decl) ? decl : undefined;
  }
}

/** A constructor's `super(…)` call. */
function superCallIn(ts: TypeScript, ctor: TS.ConstructorDeclaration): TS.CallExpression | undefined {
  for (const statement of ctor.body?.statements ?? []) {
    if (ts.isExpressionStatement(statement) && ts.isCallExpression(statement.expression) && statement.expression.expression.kind === ts.SyntaxKind.SuperKeyword) return statement.expression;
  }
  return undefined;
}
