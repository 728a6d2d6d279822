import type { Command } from 'commander';
import { mergeDatabases } from '../../store/merge.js';
import { expandDbPaths } from '../args.js';
import type { Io } from '../io.js';

/** `ttl-advisor merge`: per-instance databases into one. */
export function registerMerge(program: Command, io: Io): void {
  program
    .command('merge')
    .description('Merge per-instance samples databases into one; merging the same input again changes nothing.')
    .argument('<out>', 'the output database (created if absent)')
    .argument('<inputs...>', 'databases to merge in')
    .action((out: string, inputs: string[]) => {
      const result = mergeDatabases(out, expandDbPaths(inputs));
      io.stdout(`merged ${result.inputs} database(s), ${result.instances} instance(s): ${result.rollupRows} rollup rows, ${result.rawRows} raw rows into ${out}\n`);
    });
}
