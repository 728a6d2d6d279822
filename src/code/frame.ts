import type * as TS from 'typescript';
import type { TypeScript } from './load.js';

/** How an expression is read where its names are bound (see `evaluate.ts`). */

/** Arguments bound to a function's parameters: a wrapper's lock call read for one caller (and that caller's caller…). */
export interface Frame {
  fn: TS.SignatureDeclaration;
  args: readonly TS.Expression[];
  parent: Frame | undefined;
  /** The class `this` is an instance of in `fn` (a subclass, when a subclass calls an inherited method). */
  thisClass?: TS.ClassLikeDeclaration | undefined;
}

/** An expression, read where its names are bound. */
export interface Ref {
  expr: TS.Expression;
  frame: Frame | undefined;
}

/** One step of reading: the expression a name or property stands for, or why it cannot be read statically. */
export type Step =
  | { kind: 'ref'; ref: Ref }
  /** A parameter of `fn` that no frame binds: its callers give the value. */
  | { kind: 'open'; fn: TS.SignatureDeclaration }
  /** An environment variable, `X` of `process.env.X` or of a schema parsed from `process.env`, and its default when one is written. */
  | { kind: 'env'; name: string; fallback: Ref | undefined }
  | { kind: 'unknown' };

/** How many steps a reading takes at most: a cycle (`a = b`, `b = a`) or a very long chain ends as unknown. */
export const MAX_STEPS = 40;

/** The class `this` is an instance of, as the nearest frame that knows says. */
export function thisOf(frame: Frame | undefined): TS.ClassLikeDeclaration | undefined {
  for (let f = frame; f; f = f.parent) if (f.thisClass) return f.thisClass;
  return undefined;
}

export function frameOf(frame: Frame, fn: TS.SignatureDeclaration): Frame | undefined {
  for (let f: Frame | undefined = frame; f; f = f.parent) if (f.fn === fn) return f;
  return undefined;
}

/** Whether `node` lies inside `container`'s text. */
export function isInside(node: TS.Node, container: TS.Node): boolean {
  return node.getSourceFile() === container.getSourceFile() && node.pos >= container.pos && node.end <= container.end;
}

/** What a reading takes one step at a time with (the evaluator, as the readers beside it see it). */
export interface Stepper {
  readonly ts: TypeScript;
  unwrap(e: TS.Expression): TS.Expression;
  step(ref: Ref): Step;
  propertyOf(ref: Ref, name: string): Step | undefined;
}
