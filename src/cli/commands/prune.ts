import { Option, type Command } from 'commander';
import { DEFAULT_DB_PATH } from '../../record/recorder-options.js';
import { pruneOlderThan } from '../../store/prune.js';
import { checkedVersion, openForWriting } from '../../store/schema.js';
import { printable } from '../../text.js';
import { formatCount, formatTime } from '../../units.js';
import { dbOption, expandDbPaths, parseTime } from '../args.js';
import type { Io } from '../io.js';

/** `ttl-advisor prune`: removes old data from samples databases. */
export function registerPrune(program: Command, io: Io): void {
  program
    .command('prune')
    .description('Remove data older than a time from samples databases: raw rows and whole hours of rollups. A recorder can do the same with `retainMs`.')
    .addOption(new Option('--older-than <when>', 'remove data from before this: a duration ago (14d, 48h) or an ISO date').makeOptionMandatory())
    .addOption(dbOption())
    .option('--vacuum', 'rewrite each file to its new size (needs as much free disk as the file; recorders wait meanwhile)')
    .action((options: { olderThan: string; db?: string[]; vacuum?: boolean }) => {
      const before = parseTime(options.olderThan, '--older-than');
      const paths = expandDbPaths(options.db ?? [DEFAULT_DB_PATH]);
      // Refuses a missing, foreign, newer or damaged file before changing any (opening to write switches to WAL).
      for (const path of paths) checkedVersion(path, 'nothing was pruned');
      for (const path of paths) {
        const db = openForWriting(path, 5000);
        try {
          const r = pruneOlderThan(db, path, before, { vacuum: options.vacuum === true });
          io.stdout(
            `${printable(path)}: removed data before ${formatTime(r.cutoffMs)} — ${formatCount(r.rawRows)} raw rows, ` +
              `${formatCount(r.rollupRows)} rollup rows, ${formatCount(r.fleetRollupRows)} fleet rollup rows; ` +
              `${r.freedBytes > 0 ? `the file shrank by ${formatCount(Math.round(r.freedBytes / 1024))} KiB` : 'freed pages are reused by later writes (--vacuum shrinks the file)'}\n`,
          );
        } finally {
          db.close();
        }
      }
    });
}
