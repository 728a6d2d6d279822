// The benchmarks measure the built package (dist/, which `npm run bench` builds first),
// as services run it, not the TypeScript sources through tsx's loader.
import type * as Lib from '../../src/index.js';

const url = new URL('../../dist/index.js', import.meta.url).href;
export const lib = (await import(url)) as typeof Lib;
