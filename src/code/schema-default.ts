import { MAX_STEPS, type Ref, type Stepper } from './frame.js';
import type { TypeScript } from './load.js';

/** The `.default(…)` of property `name` of a `z.object({…})` schema (through `.strict()`, `.extend(…)` and the like). */
export function schemaDefault(ev: Stepper, schema: Ref, name: string): Ref | undefined {
const ts = ev.ts;
  let current: Ref | undefined = schema;
  for (let i = 0; current && i < MAX_STEPS; i++) {
    const e = ev.unwrap(current.expr);
    if (ts.isCallExpression(e)) {
      for (const arg of e.arguments) {
        const prop = ev.propertyOf({ expr: arg, frame: current.frame }, name);
        if (prop?.kind === 'ref') return defaultInChain(ts, ev, prop.ref);
      }
      if (ts.isPropertyAccessExpression(e.expression)) {
        current = { expr: e.expression.expression, frame: current.frame };
        continue;
      }
      return undefined;
    }
    const next = ev.step(current);
    current = next.kind === 'ref' ? next.ref : undefined;
  }
  return undefined;
}

/** The argument of `.default(…)` in a chain of calls (`z.coerce.number().int().default(5000)`). */
function defaultInChain(ts: TypeScript, ev: Stepper, ref: Ref): Ref | undefined {
  let e = ev.unwrap(ref.expr);
  while (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) {
    if (e.expression.name.text === 'default' && e.arguments[0]) return { expr: e.arguments[0], frame: ref.frame };
    e = ev.unwrap(e.expression.expression);
  }
  return undefined;
}
