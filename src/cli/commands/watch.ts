import { Option, type Command } from 'commander';
import { accessSync, constants, existsSync, rmSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { TtlAdvisorError } from '../../errors.js';
import type { StreamClient } from '../../fleet/stream-client.js';
import { STREAM_SINK_DEFAULTS, RedisStreamSink } from '../../fleet/stream-sink.js';
import { DEFAULT_DB_PATH } from '../../record/recorder-options.js';
import type { LockSample, ObservationGap } from '../../sample/sample.js';
import { SqliteRecorder } from '../../record/sqlite-recorder.js';
import { openForWriting, schemaVersionOf } from '../../store/schema.js';
import { MAX_DB_INDEX } from '../../watch/options.js';
import { KeyspaceWatcher, WATCH_DEFAULTS } from '../../watch/watcher.js';
import { collect, positiveNumber } from '../args.js';
import { lineWriter, type Io } from '../io.js';
import { redactUrl } from '../../redact-url.js';
import { parseRedisUrl } from '../../redis-url.js';
import { connectRedis, requireRedisUrl } from '../redis.js';

interface WatchCommandOptions {
  redis?: string;
  db?: string;
  stream?: string;
  match: string;
  dbIndex?: number;
  patterns?: string[];
  instance?: string;
  configure?: boolean;
  progressMs: number;
  metricsPort?: number;
  metricsHost?: string;
  maxOpen: number;
}

/** `ttl-advisor watch`: every lock in a Redis, from its keyspace notifications, until SIGTERM/SIGINT. */
export function registerWatch(program: Command, io: Io): void {
  program
    .command('watch')
    .description('Sample every lock in a Redis from its keyspace notifications (set → del | expired): services in any language, no code change. Runs until SIGTERM/SIGINT.')
    .addOption(new Option('--redis <url>', 'Redis URL (any node of a Cluster: every master is watched)').env('REDIS_URL'))
    .option('--db <file>', `the samples database (default ${DEFAULT_DB_PATH} unless --stream)`)
    .option('--stream <key>', `send the samples to a Redis stream for \`collect\` instead (e.g. ${STREAM_SINK_DEFAULTS.stream})`, nonBlank('--stream', 'a stream key'))
    .option('--match <glob>', 'the keys to watch (Redis glob)', nonBlank('--match', 'a Redis glob such as *lock*'), WATCH_DEFAULTS.match)
    .option('--db-index <n>', 'watch one database only (default: all)', databaseNumber)
    .option('--patterns <template...>', 'pattern templates such as order:lock:product:{id}, tried before the patterns learned from the keys', collect)
    .option('--instance <name>', 'name of this watcher in the data (default: host:pid)', nonBlank('--instance', 'a name'))
    .option('--configure', 'set the missing notify-keyspace-events classes, and restore the previous setting on exit')
    .option('--max-open <n>', 'locks followed at once; beyond, new locks are dropped, counted and recorded as a gap', wholeNumber('--max-open'), WATCH_DEFAULTS.maxOpen)
    .option('--progress-ms <ms>', 'how often to report progress on stderr', positiveNumber('--progress-ms'), 10_000)
    .option('--metrics-port <port>', 'serve Prometheus metrics at http://<host>:<port>/metrics (with neither --db nor --stream, no file is written)', portNumber)
    .option('--metrics-host <host>', 'the interface --metrics-port listens on (default: all)', nonBlank('--metrics-host', 'a host name or address'))
    .action(async (options: WatchCommandOptions) => {
      const url = requireRedisUrl(options.redis);
      parseRedisUrl(url);
      if (options.db !== undefined && options.stream !== undefined) throw new TtlAdvisorError('Give --db or --stream, not both');
      // Before anything is subscribed (or configured): a file the recorder cannot write would fail in its thread,
      // and the watcher would run for ever recording nothing.
      if (options.metricsHost !== undefined && options.metricsPort === undefined) throw new TtlAdvisorError('--metrics-host needs --metrics-port');
      // With --metrics-port alone, the metrics are the only output: no file.
      const dbPath = options.stream === undefined && (options.db !== undefined || options.metricsPort === undefined) ? (options.db ?? DEFAULT_DB_PATH) : undefined;
      if (dbPath !== undefined) checkWritableDb(dbPath);
      const shown = redactUrl(url);
      const say = lineWriter(io);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      const stopped = new Promise<void>((resolve) => stop.signal.addEventListener('abort', () => resolve(), { once: true }));
      // Before anything is subscribed: a port that cannot be had is one line, and nothing watched.
      const metrics = options.metricsPort === undefined ? undefined : await serveMetrics(options);
      const targets = [options.stream !== undefined ? `the stream ${options.stream}` : dbPath, metrics && `Prometheus metrics at ${metrics.url}`].filter(Boolean);
      say.line(`watching keys matching ${options.match} on ${shown} into ${targets.join(' and ')}; wait times are not visible from Redis`);

      let sinkConnection: Awaited<ReturnType<typeof connectRedis>> | undefined;
      let watcher: KeyspaceWatcher | undefined;
      let recorder: SqliteRecorder | RedisStreamSink | undefined;
      // The recorder is made once the watcher runs, so a Redis that cannot be watched leaves no file behind.
      // Samples need a `del` or `expired` after a `set`: none can arrive before it exists.
      const forward = {
        record: (sample: LockSample) => {
          recorder?.record(sample);
          metrics?.recorder.record(sample);
        },
        recordGap: (gap: ObservationGap) => recorder?.recordGap(gap),
      };
      try {
        watcher = await KeyspaceWatcher.start({
          url,
          recorder: forward,
          match: options.match,
          ...(options.dbIndex !== undefined && { dbIndex: options.dbIndex }),
          ...(options.patterns && { patterns: options.patterns }),
          ...(options.instance && { instance: options.instance }),
          configure: options.configure === true,
          maxOpen: options.maxOpen,
          onNotice: (message) => say.line(message),
        });
        if (options.stream !== undefined) {
          sinkConnection = await connectRedis(url, 'follow', { cancel: stop.signal });
          recorder = new RedisStreamSink(sinkConnection.client as unknown as StreamClient, { stream: options.stream, ...(options.instance && { instance: options.instance }) });
        } else if (dbPath !== undefined) {
          recorder = new SqliteRecorder({ path: dbPath, ...(options.instance && { instance: options.instance }) });
        }
        recorder?.on('warning', (w: { message: string }) => say.line(`recorder: ${w.message}`));
        const { nodes } = watcher.stats();
        say.line(`subscribed on ${nodes} node${nodes === 1 ? '' : 's'}${options.configure ? ' (notifications configured; restored on exit)' : ''}`);
        let last = { at: performance.now(), locks: 0 };
        const progress = setInterval(() => {
          const s = watcher!.stats();
          const locks = Object.values(s.recorded).reduce((a, b) => a + b, 0);
          const now = performance.now();
          const rate = ((locks - last.locks) * 1000) / (now - last.at);
          last = { at: now, locks };
          say.progress(
            `${locks} locks (${rate.toFixed(1)}/s), ${s.open} open, ${s.recorded.expired} expired` +
              `${s.unconfirmed ? `, and ${s.unconfirmed} expiries on patterns never released` : ''}; ` +
              `ignored ${s.ignored} not-lock expiries, ${s.notLocks} keys without TTL; dropped ${s.dropped}${s.nodesDown ? `; ${s.nodesDown} node(s) down` : ''}`,
          );
        }, options.progressMs);
        progress.unref();
        await stopped;
        clearInterval(progress);
      } catch (error) {
        if (stop.signal.aborted && !watcher) {
          say.line('stopped before Redis answered; nothing watched');
          return;
        }
        throw error;
      } finally {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        const { abandoned } = (await watcher?.stop()) ?? { abandoned: 0 };
        const stats = watcher?.stats();
        const closed = await recorder?.close();
        sinkConnection?.close();
        await metrics?.close();
        if (stats) {
          const locks = Object.values(stats.recorded).reduce((a, b) => a + b, 0);
          say.line(
            `stopped: ${locks} locks recorded (${stats.recorded.released} released, ${stats.recorded.expired} expired, ${stats.recorded.lost} lost); ` +
              `${stats.unconfirmed ? `${stats.unconfirmed} ${stats.unconfirmed === 1 ? 'expiry' : 'expiries'} on patterns never released recorded apart; ` : ''}` +
              `${abandoned} open at exit and ${stats.droppedInGaps} open across a lost connection not recorded` +
              `${stats.droppedAtLimit ? `, ${stats.droppedAtLimit} taken while --max-open locks were open not recorded (recorded as gaps)` : ''}` +
              `${stats.unknownTtl ? `, ${stats.unknownTtl} gone before their TTL could be read` : ''}` +
              (closed ? `; written ${closed.written}, dropped ${closed.dropped}` : '') +
              (metrics ? `; metrics: ${metrics.recorder.stats().recorded} recorded, ${metrics.recorder.stats().dropped} dropped` : ''),
          );
        }
      }
    });
}

/** `--metrics-port`: the /metrics endpoint, started before the watcher; a port that cannot be had is one line. */
async function serveMetrics(options: WatchCommandOptions) {
  const { startMetricsEndpoint } = await import('../../metrics/endpoint.js');
  try {
    return await startMetricsEndpoint({
      port: options.metricsPort!,
      source: 'watch',
      ...(options.metricsHost !== undefined && { host: options.metricsHost }),
      ...(options.patterns && { patterns: options.patterns }),
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new TtlAdvisorError(`Cannot serve metrics on ${options.metricsHost ?? 'port'}${options.metricsHost ? ':' : ' '}${options.metricsPort}: ${code ?? (error as Error).message}`);
  }
}

/** `--metrics-port`: a TCP port, 1 to 65535. */
function portNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n < 1 || n > 65_535) throw new TtlAdvisorError(`Expected --metrics-port to be a port from 1 to 65535, got ${JSON.stringify(value)}`);
  return n;
}

/** A commander parser for an option that must hold something; `what` says what, in the one line. */
function nonBlank(name: string, what: string) {
  return (value: string): string => {
    if (value.trim() === '') throw new TtlAdvisorError(`Expected ${name} to be ${what}, got ${JSON.stringify(value)}`);
    return value;
  };
}

/** `--db-index`: a database number Redis could have (0 to 2^31 − 1), written in digits. */
function wholeNumber(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) throw new TtlAdvisorError(`Expected ${name} to be a whole number > 0, got ${JSON.stringify(value)}`);
    return n;
  };
}

function databaseNumber(value: string): number {
  if (!/^\d+$/.test(value.trim())) throw new TtlAdvisorError(`Expected --db-index to be a database number, got ${JSON.stringify(value)}`);
  const n = Number(value);
  if (n > MAX_DB_INDEX) throw new TtlAdvisorError(`Expected --db-index to be a database number from 0 to ${MAX_DB_INDEX}, got ${JSON.stringify(value)}`);
  return n;
}

/**
 * Refuses a samples database the recorder could not write: a directory, a missing or read-only
 * folder, a file that is not a samples database (or of a newer schema), a read-only file. An
 * existing file is opened for writing and a write tried and rolled back (SQLite opens a file it
 * may not write read-only, and says so only at the first write); a new one is not created yet, so
 * a Redis that cannot be watched leaves no file behind.
 */
function checkWritableDb(path: string): void {
  if (path.trim() === '') throw new TtlAdvisorError('Expected --db to be a file path, got ""');
  if (!existsSync(path)) {
    const folder = dirname(resolve(path));
    try {
      accessSync(folder, constants.W_OK | constants.X_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      throw new TtlAdvisorError(`Cannot create ${path}: ${code === 'ENOENT' || code === 'ENOTDIR' ? `no folder ${folder}` : `${folder} is not writable (${code})`}`);
    }
    return;
  }
  if (statSync(path).isDirectory()) throw new TtlAdvisorError(`${path} is a directory, not a samples database`);
  // A read-only file gets -wal and -shm files that its connection cannot remove: the probe's are removed here.
  const leftovers = [`${path}-wal`, `${path}-shm`].filter((file) => !existsSync(file));
  try {
    const db = openForWriting(path, 5000);
    try {
      db.exec('BEGIN IMMEDIATE');
      db.pragma(`user_version = ${schemaVersionOf(db)}`);
    } finally {
      if (db.inTransaction) db.exec('ROLLBACK');
      db.close();
    }
  } catch (error) {
    const code = (error as { code?: string }).code ?? '';
    if (/^SQLITE_(BUSY|LOCKED)/.test(code)) return; // another writer has it: the recorder waits its turn
    for (const file of leftovers) rmSync(file, { force: true });
    if (error instanceof TtlAdvisorError) throw error;
    throw new TtlAdvisorError(`Cannot record into ${path}: ${(error as Error).message}`);
  }
}
