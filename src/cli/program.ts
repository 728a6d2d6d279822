import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { analyze, type Analysis } from '../analyze/analyze.js';
import { applyRecommendations, DEFAULT_APPLY_MIN_CHANGE_PERCENT } from '../policy/apply.js';
import { checkPolicy } from '../policy/check.js';
import { unifiedDiff } from '../policy/diff.js';
import { DEFAULT_POLICY_PATH, formatPolicy, loadTtlPolicy } from '../policy/policy.js';
import { Cluster, Redis } from 'ioredis';
import { databaseStats } from '../analyze/stats.js';
import { StreamCollector } from '../collect/collector.js';
import { mergeDatabases } from '../record/merge.js';
import { DEFAULT_STREAM } from '../record/redis-stream-sink.js';
import { listLocks, redactUrl } from '../inspect/locks.js';
import { renderCheckJson, renderCheckMarkdown } from '../report/check.js';
import { renderLocksJson, renderLocksText } from '../report/locks.js';
import { renderStatsJson, renderStatsText } from '../report/stats.js';
import { formatMs } from '../report/format.js';
import { parseTime } from '../analyze/time.js';
import { TtlAdvisorError } from '../errors.js';
import { DEFAULT_DB_PATH } from '../record/sqlite-recorder.js';
import { REPORT_FORMATS, writeReports, type ReportFormat } from '../report/index.js';
import { renderTable } from '../report/table.js';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

/** Where the CLI writes; tests pass their own. */
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Whether stderr is a terminal (progress lines only then). */
  isTty: boolean;
  now: () => number;
}

const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  isTty: Boolean(process.stderr.isTTY),
  now: () => Date.now(),
};

function positiveNumber(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`Expected ${name} to be a number > 0.`);
    return n;
  };
}

function nonNegativeNumber(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`Expected ${name} to be a number ≥ 0.`);
    return n;
  };
}

function formatList(value: string): ReportFormat[] {
  const formats = value.split(',').map((f) => f.trim().toLowerCase()).filter(Boolean);
  const unknown = formats.filter((f) => !REPORT_FORMATS.includes(f as ReportFormat));
  if (formats.length === 0 || unknown.length > 0) {
    throw new InvalidArgumentError(`Expected a comma-separated list of ${REPORT_FORMATS.join(', ')}.`);
  }
  return [...new Set(formats)] as ReportFormat[];
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Expands `*` and `?` in the file name part of a path (the shell may not have). */
export function expandDbPaths(paths: readonly string[]): string[] {
  return paths.flatMap((path) => {
    const name = basename(path);
    if (!/[*?]/.test(name)) return [path];
    const dir = dirname(path);
    const re = new RegExp(`^${name.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      throw new TtlAdvisorError(`No samples database matches ${path}`);
    }
    const matches = entries.filter((e) => re.test(e)).sort().map((e) => join(dir, e));
    if (matches.length === 0) throw new TtlAdvisorError(`No samples database matches ${path}`);
    return matches;
  });
}

interface AnalysisOptions {
  db?: string[];
  since?: string;
  until?: string;
  multiplier?: number;
  floor?: number;
  step?: number;
  pattern?: string[];
}

interface ReportOptions extends AnalysisOptions {
  out: string;
  format: ReportFormat[];
  quiet?: boolean;
}

interface CheckCommandOptions extends AnalysisOptions {
  policy: string;
  format: 'md' | 'json';
  strict?: boolean;
  failOnInsufficientData?: boolean;
  minChange?: number;
}

interface LocksCommandOptions {
  redis?: string;
  match: string;
  format: 'text' | 'json';
  watch?: boolean;
  interval: number;
  iterations?: number;
}

/** Connects to the URL's server, or to the whole cluster when it is a Cluster node. Never prints the password. */
async function connectRedis(url: string): Promise<Redis | Cluster> {
  const shown = redactUrl(url);
  let redis: Redis;
  try {
    redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null, connectTimeout: 5000 });
  } catch (error) {
    throw new TtlAdvisorError(`Invalid Redis URL ${shown}: ${(error as Error).message}`);
  }
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const info = await redis.info('cluster');
    if (!/cluster_enabled:1/.test(info)) return redis;
  } catch (error) {
    redis.disconnect();
    throw new TtlAdvisorError(`Cannot connect to Redis at ${shown}: ${(error as Error).message}`);
  }
  const { host, port, username, password } = redis.options;
  redis.disconnect();
  const cluster = new Cluster([{ host: host ?? '127.0.0.1', port: port ?? 6379 }], {
    redisOptions: { username, password },
    clusterRetryStrategy: () => null,
  });
  cluster.on('error', () => undefined);
  return cluster;
}

interface ApplyCommandOptions extends AnalysisOptions {
  policy: string;
  dryRun?: boolean;
  minChange: number;
}

/** The options every command that analyses samples shares with `report`. */
function addAnalysisOptions(command: Command): Command {
  return command
    .addOption(new Option('--db <file>', `samples database; repeat or use a glob for several (default: ${DEFAULT_DB_PATH})`).argParser(collect))
    .option('--since <time>', 'only samples from this time: ISO date/time, epoch ms, or a duration ago like 48h')
    .option('--until <time>', 'only samples before this time (same forms as --since)')
    .option('--multiplier <n>', 'TTL = max(floor, multiplier × p99) (default: 3)', positiveNumber('--multiplier'))
    .option('--floor <ms>', 'lowest TTL recommended, in ms (default: 3000)', nonNegativeNumber('--floor'))
    .option('--step <ms>', 'round recommendations up to a multiple of this, in ms (default: 100)', positiveNumber('--step'))
    .option('--pattern <glob>', 'only patterns matching this glob; repeat for several', collect);
}

function runAnalysis(options: AnalysisOptions, io: Io): Analysis {
  const now = io.now();
  const sinceMs = options.since === undefined ? undefined : parseTime(options.since, '--since', now);
  const untilMs = options.until === undefined ? undefined : parseTime(options.until, '--until', now);
  return analyze(expandDbPaths(options.db ?? [DEFAULT_DB_PATH]), {
    sinceMs,
    untilMs,
    multiplier: options.multiplier,
    floorMs: options.floor,
    stepMs: options.step,
    patterns: options.pattern,
    nowMs: now,
  });
}

/** Replaces a file by writing a temporary sibling and renaming it: readers never see half a file. */
function writeFileAtomic(path: string, content: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(temp, content);
    renameSync(temp, path);
  } finally {
    rmSync(temp, { force: true });
  }
}

/** What a run ends with, set by the actions: 0 fine, 1 findings that need action. */
export interface RunState {
  exitCode: number;
}

/** Builds the commander program. */
export function buildProgram(io: Io = processIo, state: RunState = { exitCode: 0 }): Command {
  const program = new Command('ttl-advisor')
    .description('Measure how long Redis locks are really held, and recommend TTL = max(3 s, 3 × p99) per key pattern.')
    .version(packageJson.version, '-V, --version')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showSuggestionAfterError(true);

  addAnalysisOptions(
    program
      .command('report')
      .description('Analyse recorded samples: p99 per key pattern, TTL recommendations, and HTML / Markdown / JSON reports.'),
  )
    .option('--out <dir>', 'directory to write the reports into', 'reports')
    .addOption(new Option('--format <list>', `formats to write: ${REPORT_FORMATS.join(',')}`).argParser(formatList).default(REPORT_FORMATS, REPORT_FORMATS.join(',')))
    .option('-q, --quiet', 'print nothing but errors')
    .action(async (options: ReportOptions) => {
      const progress = (line: string) => io.isTty && !options.quiet && io.stderr(`\r\u001b[2K${line}`);
      progress('reading samples…');
      const analysis = runAnalysis(options, io);
      progress(`rendering ${options.format.join(', ')} for ${analysis.patterns.length} pattern(s)…`);
      const written = await writeReports(analysis, options.format, options.out);
      progress('');
      if (options.quiet) return;
      for (const warning of analysis.warnings) io.stdout(`warning: ${warning}\n`);
      io.stdout(renderTable(analysis));
      io.stdout(`\nwrote ${written.join(', ')}\n`);
    });

  addAnalysisOptions(
    program
      .command('check')
      .description('Compare the TTLs in a policy file with the data; Markdown for a PR comment. Exit 1 when a TTL must rise or a lock expired.'),
  )
    .option('--policy <file>', 'the TTL policy file', DEFAULT_POLICY_PATH)
    .addOption(new Option('--format <format>', 'output format').choices(['md', 'json']).default('md'))
    .option('--strict', 'also fail on TTLs more than 3× the recommendation')
    .option('--fail-on-insufficient-data', 'fail when a configured pattern has too few samples for a p99')
    .option('--min-change <percent>', 'hide (and do not fail on) moves smaller than this', nonNegativeNumber('--min-change'))
    .action((options: CheckCommandOptions) => {
      const policy = loadTtlPolicy(options.policy);
      const analysis = runAnalysis(options, io);
      const result = checkPolicy(analysis, policy, {
        strict: options.strict,
        failOnInsufficientData: options.failOnInsufficientData,
        minChangePercent: options.minChange,
      });
      io.stdout(options.format === 'json' ? renderCheckJson(result, analysis) : renderCheckMarkdown(result, analysis));
      state.exitCode = result.exitCode;
    });

  addAnalysisOptions(
    program
      .command('apply')
      .description('Write the recommended TTLs into the policy file (pinned entries untouched) and print the diff.'),
  )
    .option('--policy <file>', 'the TTL policy file', DEFAULT_POLICY_PATH)
    .option('--dry-run', 'print the diff without writing')
    .option('--min-change <percent>', 'leave TTLs alone whose recommendation differs by less than this', nonNegativeNumber('--min-change'), DEFAULT_APPLY_MIN_CHANGE_PERCENT)
    .action((options: ApplyCommandOptions) => {
      const policy = loadTtlPolicy(options.policy);
      const before = readFileSync(options.policy, 'utf8');
      const analysis = runAnalysis(options, io);
      const { document, changes } = applyRecommendations(analysis, policy, { minChangePercent: options.minChange });
      if (changes.length === 0) {
        io.stdout(`${options.policy}: no changes; every TTL matches the data within ${options.minChange} %.\n`);
        return;
      }
      const after = formatPolicy(document);
      io.stdout(unifiedDiff(before, after, options.policy));
      for (const c of changes) {
        io.stdout(`${c.fromMs === undefined ? 'added' : 'changed'} ${c.pattern}: ${c.fromMs === undefined ? '' : `${formatMs(c.fromMs)} → `}${formatMs(c.toMs)}\n`);
      }
      if (options.dryRun) {
        io.stdout('(dry run: nothing written)\n');
        return;
      }
      writeFileAtomic(options.policy, after);
      io.stdout(`wrote ${options.policy}\n`);
    });

  program
    .command('stats')
    .description('What a samples database holds: rows, rollups, patterns, instances, time range, recent samples per hour, dropped samples.')
    .addOption(new Option('--db <file>', `samples database; repeat or use a glob for several (default: ${DEFAULT_DB_PATH})`).argParser(collect))
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .action((options: { db?: string[]; format: 'text' | 'json' }) => {
      const all = expandDbPaths(options.db ?? [DEFAULT_DB_PATH]).map((path) => databaseStats(path));
      io.stdout(options.format === 'json' ? renderStatsJson(all) : renderStatsText(all));
    });

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
      if (!options.redis) throw new TtlAdvisorError('Expected --redis <url> or the REDIS_URL environment variable');
      const redis = await connectRedis(options.redis);
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
        throw new TtlAdvisorError(`Redis at ${redactUrl(options.redis)} failed: ${(error as Error).message}`);
      } finally {
        process.off('SIGINT', onInterrupt);
        redis.disconnect();
      }
    });

  program
    .command('collect')
    .description('Read the samples that RedisStreamSinks send to a Redis stream into one central SQLite file, until SIGTERM/SIGINT.')
    .addOption(new Option('--redis <url>', 'Redis URL').env('REDIS_URL'))
    .requiredOption('--db <file>', 'the central samples database (created if absent)')
    .option('--stream <key>', 'the stream the sinks write to', DEFAULT_STREAM)
    .option('--group <name>', 'consumer group shared by all collectors', 'ttl-advisor')
    .option('--consumer <name>', "this collector's name in the group (default: host:pid)")
    .option('--claim-idle-ms <ms>', 'claim entries another collector left unacknowledged this long', positiveNumber('--claim-idle-ms'), 30_000)
    .option('--progress-ms <ms>', 'how often to report progress on stderr', positiveNumber('--progress-ms'), 10_000)
    .action(async (options: { redis?: string; db: string; stream: string; group: string; consumer?: string; claimIdleMs: number; progressMs: number }) => {
      if (!options.redis) throw new TtlAdvisorError('Expected --redis <url> or the REDIS_URL environment variable');
      const shown = redactUrl(options.redis);
      // The collector blocks in XREADGROUP, so it gets a connection of its own; reconnects by itself if Redis restarts.
      const redis = new Redis(options.redis, { maxRetriesPerRequest: null, lazyConnect: true });
      redis.on('error', () => undefined);
      try {
        await redis.connect();
      } catch (error) {
        redis.disconnect();
        throw new TtlAdvisorError(`Cannot connect to Redis at ${shown}: ${(error as Error).message}`);
      }
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      const collector = new StreamCollector(redis, {
        db: options.db,
        stream: options.stream,
        group: options.group,
        consumer: options.consumer,
        claimIdleMs: Math.round(options.claimIdleMs),
        progressIntervalMs: Math.round(options.progressMs),
        onProgress: (p) =>
          io.stderr(
            `collected ${p.entries} entries (${p.entriesPerSecond.toFixed(1)}/s), ${p.samples} locks; ${p.duplicates} redelivered, ${p.claimed} claimed, ${p.bad} bad; lag ${p.lag ?? '?'}, pending ${p.pending ?? '?'}\n`,
          ),
        onBadEntry: (id, error) => io.stderr(`skipped stream entry ${id}: ${error.message}\n`),
        onRedisError: (error) => io.stderr(`redis: ${error.message}; retrying\n`),
      });
      try {
        const totals = await collector.run(stop.signal);
        io.stderr(`stopped: ${totals.entries} entries, ${totals.samples} locks collected into ${options.db}\n`);
      } catch (error) {
        if (error instanceof TtlAdvisorError) throw error;
        throw new TtlAdvisorError(`collect from ${shown} failed: ${(error as Error).message}`);
      } finally {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
        redis.disconnect();
      }
    });

  program
    .command('merge')
    .description('Merge per-instance samples databases into one; merging the same input again changes nothing.')
    .argument('<out>', 'the output database (created if absent)')
    .argument('<inputs...>', 'databases to merge in')
    .action((out: string, inputs: string[]) => {
      const result = mergeDatabases(out, expandDbPaths(inputs));
      io.stdout(`merged ${result.inputs} database(s), ${result.instances} instance(s): ${result.rollupRows} rollup rows, ${result.rawRows} raw rows into ${out}\n`);
    });

  return program;
}

/** Runs the CLI and returns the exit code: 0 fine, 1 findings that need action, 2 usage or input error. */
export async function run(argv: readonly string[], io: Io = processIo): Promise<number> {
  const state: RunState = { exitCode: 0 };
  const program = buildProgram(io, state).exitOverride();
  for (const command of program.commands) command.exitOverride();
  try {
    await program.parseAsync(argv as string[]);
    return state.exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end here too, with exit code 0; commander has already printed its one line.
      return error.exitCode === 0 ? 0 : 2;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr(`ttl-advisor: ${error instanceof TtlAdvisorError ? message : `unexpected error: ${message}`}\n`);
    return 2;
  }
}
