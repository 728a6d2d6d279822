import { TtlAdvisorError } from '../errors.js';

/** The TypeScript compiler API, as `check --code` and `apply --code` use it. */
export type TypeScript = typeof import('typescript');

/**
 * Loads the `typescript` package on demand: only `--code` needs it, so no
 * other command (and no recording service) ever loads it. A missing package is
 * one clear line naming the command.
 */
export async function loadTypeScript(command: 'check' | 'apply', load: () => Promise<unknown> = () => import('typescript')): Promise<TypeScript> {
  let loaded: unknown;
  try {
    loaded = await load();
  } catch (error) {
    throw new TtlAdvisorError(`${command} --code needs the typescript package: npm install --save-dev typescript`, { cause: error });
  }
  const m = loaded as TypeScript & { default?: TypeScript };
  return typeof m.createProgram === 'function' ? m : m.default!;
}
