import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { analyze } from '../analyze/analyze.js';
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

interface ReportOptions {
  db?: string[];
  out: string;
  format: ReportFormat[];
  since?: string;
  until?: string;
  multiplier?: number;
  floor?: number;
  step?: number;
  pattern?: string[];
  quiet?: boolean;
}

/** Builds the commander program. */
export function buildProgram(io: Io = processIo): Command {
  const program = new Command('ttl-advisor')
    .description('Measure how long Redis locks are really held, and recommend TTL = max(3 s, 3 × p99) per key pattern.')
    .version(packageJson.version, '-V, --version')
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showSuggestionAfterError(true);

  program
    .command('report')
    .description('Analyse recorded samples: p99 per key pattern, TTL recommendations, and HTML / Markdown / JSON reports.')
    .addOption(new Option('--db <file>', `samples database; repeat or use a glob for several (default: ${DEFAULT_DB_PATH})`).argParser(collect))
    .option('--out <dir>', 'directory to write the reports into', 'reports')
    .addOption(new Option('--format <list>', `formats to write: ${REPORT_FORMATS.join(',')}`).argParser(formatList).default(REPORT_FORMATS, REPORT_FORMATS.join(',')))
    .option('--since <time>', 'only samples from this time: ISO date/time, epoch ms, or a duration ago like 48h')
    .option('--until <time>', 'only samples before this time (same forms as --since)')
    .option('--multiplier <n>', 'TTL = max(floor, multiplier × p99) (default: 3)', positiveNumber('--multiplier'))
    .option('--floor <ms>', 'lowest TTL recommended, in ms (default: 3000)', nonNegativeNumber('--floor'))
    .option('--step <ms>', 'round recommendations up to a multiple of this, in ms (default: 100)', positiveNumber('--step'))
    .option('--pattern <glob>', 'only patterns matching this glob; repeat for several', collect)
    .option('-q, --quiet', 'print nothing but errors')
    .action(async (options: ReportOptions) => {
      const now = io.now();
      const sinceMs = options.since === undefined ? undefined : parseTime(options.since, '--since', now);
      const untilMs = options.until === undefined ? undefined : parseTime(options.until, '--until', now);
      const dbs = expandDbPaths(options.db ?? [DEFAULT_DB_PATH]);
      const progress = (line: string) => io.isTty && !options.quiet && io.stderr(`\r\u001b[2K${line}`);
      progress(`reading ${dbs.length} database(s)…`);
      const analysis = analyze(dbs, {
        sinceMs,
        untilMs,
        multiplier: options.multiplier,
        floorMs: options.floor,
        stepMs: options.step,
        patterns: options.pattern,
        nowMs: now,
      });
      progress(`rendering ${options.format.join(', ')} for ${analysis.patterns.length} pattern(s)…`);
      const written = await writeReports(analysis, options.format, options.out);
      progress('');
      if (options.quiet) return;
      for (const warning of analysis.warnings) io.stdout(`warning: ${warning}\n`);
      io.stdout(renderTable(analysis));
      io.stdout(`\nwrote ${written.join(', ')}\n`);
    });

  return program;
}

/** Runs the CLI and returns the exit code: 0 fine, 1 findings that need action, 2 usage or input error. */
export async function run(argv: readonly string[], io: Io = processIo): Promise<number> {
  const program = buildProgram(io).exitOverride();
  for (const command of program.commands) command.exitOverride();
  try {
    await program.parseAsync(argv as string[]);
    return 0;
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
