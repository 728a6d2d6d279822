import { Option, type Command } from 'commander';
import { TtlAdvisorError } from '../../errors.js';
import { defaultInstanceId } from '../../token.js';
import { COLLECTOR_DEFAULTS, StreamCollector } from '../../fleet/collector.js';
import { nonEmpty, positiveNumber } from '../args.js';
import { lineWriter, type Io } from '../io.js';
import { redactUrl } from '../../redact-url.js';
import { connectRedis, requireRedisUrl } from '../redis.js';

interface CollectCommandOptions {
  redis?: string;
  db: string;
  stream: string;
  group: string;
  consumer?: string;
  claimIdleMs: number;
  progressMs: number;
}

/** `ttl-advisor collect`: the fleet's stream into one central file, until SIGTERM/SIGINT. */
export function registerCollect(program: Command, io: Io): void {
  program
    .command('collect')
    .description('Read the samples that RedisStreamSinks send to a Redis stream into one central SQLite file, until SIGTERM/SIGINT.')
    .addOption(new Option('--redis <url>', 'Redis URL').env('REDIS_URL'))
    .requiredOption('--db <file>', 'the central samples database (created if absent)')
    .option('--stream <key>', 'the stream the sinks write to', nonEmpty('--stream'), COLLECTOR_DEFAULTS.stream)
    .option('--group <name>', 'consumer group shared by all collectors', nonEmpty('--group'), COLLECTOR_DEFAULTS.group)
    .option('--consumer <name>', "this collector's name in the group (default: host:pid)", nonEmpty('--consumer'))
    .option('--claim-idle-ms <ms>', 'claim entries another collector left unacknowledged this long', positiveNumber('--claim-idle-ms'), COLLECTOR_DEFAULTS.claimIdleMs)
    .option('--progress-ms <ms>', 'how often to report progress on stderr', positiveNumber('--progress-ms'), COLLECTOR_DEFAULTS.progressIntervalMs)
    .action(async (options: CollectCommandOptions) => {
      const url = requireRedisUrl(options.redis);
      const shown = redactUrl(url);
      // Listening first: a stop while connecting to a Redis that never answers ends the command too.
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      // The collector blocks in XREADGROUP, so it gets a connection of its own; reconnects by itself if Redis restarts.
      // At once, before Redis has answered: what this collector will do, and where.
      const consumer = options.consumer ?? defaultInstanceId();
      const say = lineWriter(io);
      say.line(`collecting ${options.stream} (group ${options.group}, consumer ${consumer}) from ${shown} into ${options.db}`);
      let connection;
      try {
        connection = await connectRedis(url, 'follow', { cancel: stop.signal });
      } catch (error) {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        if (!stop.signal.aborted) throw error;
        say.line('stopped before Redis answered; nothing collected');
        return;
      }
      const { client: redis, close } = connection;
      const collector = new StreamCollector(redis, {
        db: options.db,
        stream: options.stream,
        group: options.group,
        consumer,
        claimIdleMs: Math.round(options.claimIdleMs),
        progressIntervalMs: Math.round(options.progressMs),
        onProgress: (p) =>
          say.progress(
            `collected ${p.entries} entries (${p.entriesPerSecond.toFixed(1)}/s), ${p.samples} locks; ${p.duplicates} redelivered, ${p.claimed} claimed, ${p.bad} bad; lag ${p.lag ?? '?'}, pending ${p.pending ?? '?'}`,
          ),
        onBadEntry: (id, error) => say.line(`skipped stream entry ${id}: ${error.message}`),
        onRedisError: (error) => say.line(`redis: ${error.message}; retrying`),
      });
      try {
        const totals = await collector.run(stop.signal);
        say.line(`stopped: ${totals.entries} entries, ${totals.samples} locks collected into ${options.db}`);
      } catch (error) {
        if (error instanceof TtlAdvisorError) throw error;
        throw new TtlAdvisorError(`collect from ${shown} failed: ${(error as Error).message}`);
      } finally {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        close();
      }
    });
}
