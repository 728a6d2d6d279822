import { Option, type Command } from 'commander';
import { TtlAdvisorError } from '../../errors.js';
import { listLocks } from '../../inspect/locks.js';
import { positiveNumber } from '../args.js';
import type { Io } from '../io.js';
import { renderLocksJson, renderLocksText } from '../output/locks.js';
import { redactUrl } from '../../redact-url.js';
import { connectRedis, requireRedisUrl } from '../redis.js';

interface LocksCommandOptions {
  redis?: string;
  match: string;
  format: 'text' | 'json';
  watch?: boolean;
  interval: number;
  iterations?: number;
}

/** `ttl-advisor locks`: the locks held right now. */
export function registerLocks(program: Command, io: Io): void {
  program
    .command('locks')
    .description('List the live locks in Redis (key, pattern, holder, time left), soonest to expire first. Uses SCAN, never KEYS.')
    .addOption(new Option('--redis <url>', 'Redis URL; every master is scanned on a Cluster').env('REDIS_URL'))
    .option('--match <glob>', 'SCAN MATCH pattern for lock keys', '*lock*')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--watch', 'refresh until interrupted')
    .option('--interval <ms>', 'refresh interval for --watch', positiveNumber('--interval'), 1000)
    .addOption(new Option('--iterations <n>', 'stop --watch after n refreshes').argParser(positiveNumber('--iterations')).hideHelp())
    .action(async (options: LocksCommandOptions) => {
      const url = requireRedisUrl(options.redis);
      const { client: redis, close } = await connectRedis(url);
      let interrupted = false;
      const onInterrupt = () => {
        interrupted = true;
      };
      process.once('SIGINT', onInterrupt);
      try {
        for (let i = 1; ; i++) {
          const result = await listLocks(redis, { match: options.match });
          const text = options.format === 'json' ? renderLocksJson(result) : renderLocksText(result);
          io.stdout(options.watch && io.isTty ? `\u001b[2J\u001b[H${new Date(io.now()).toISOString()}\n${text}` : text);
          if (!options.watch || interrupted || (options.iterations !== undefined && i >= options.iterations)) break;
          await new Promise((resolve) => setTimeout(resolve, options.interval));
          if (interrupted) break;
        }
      } catch (error) {
        throw new TtlAdvisorError(`Redis at ${redactUrl(url)} failed: ${(error as Error).message}`);
      } finally {
        process.off('SIGINT', onInterrupt);
        close();
      }
    });
}
