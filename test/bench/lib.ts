// The benchmarks measure the built package (dist/, which `npm run bench` builds first), as
// services run it: `npm run bench` bundles the benchmark code itself with esbuild and runs it
// with plain node, because a TypeScript loader hooked into the process (tsx) transforms every
// module it loads, dist/ too, and its module-binding getters cost more than the code measured.
import type * as Lib from '../../src/index.js';

const url = new URL('../../dist/index.js', import.meta.url).href;
export const lib = (await import(url)) as typeof Lib;
/** The built command reader `instrument` uses, for the benchmarks that time it alone (machine.ts, the floor in instrument.ts). */
export const commands = (await import(new URL('../../dist/instrument/commands.js', import.meta.url).href)) as typeof import('../../src/instrument/commands.js');
