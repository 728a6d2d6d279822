import { Option, type Command } from 'commander';
import { DEFAULT_DB_PATH } from '../../record/recorder-options.js';
import { databaseStats } from '../../store/stats.js';
import { dbOption, expandDbPaths } from '../args.js';
import type { Io } from '../io.js';
import { renderStatsJson, renderStatsText } from '../output/stats.js';

/** `ttl-advisor stats`: what a samples database holds, to confirm sampling works. */
export function registerStats(program: Command, io: Io): void {
  program
    .command('stats')
    .description('What a samples database holds: rows, rollups, patterns, instances, time range, recent samples per hour, dropped samples.')
    .addOption(dbOption())
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action((options: { db?: string[]; format: 'text' | 'json' }) => {
      const all = expandDbPaths(options.db ?? [DEFAULT_DB_PATH]).map((path) => databaseStats(path));
      io.stdout(options.format === 'json' ? renderStatsJson(all) : renderStatsText(all));
    });
}
