import { InvalidArgumentError, Option, type Command } from 'commander';
import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { analyze, type Analysis, type AnalyzeOptions } from '../analyze/analyze.js';
import { ConfigError, TtlAdvisorError } from '../errors.js';
import type { CheckOptions } from '../policy/check.js';
import { globMatcher } from '../keys/glob.js';
import { DEFAULT_DB_PATH } from '../record/recorder-options.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, SECOND_MS, WEEK_MS } from '../units.js';
import type { Io } from './io.js';
import { addPrometheusOptions, analyzePrometheus, refuseWithoutPrometheus, type PrometheusCliOptions } from './prometheus.js';

/** A commander parser for a number > 0; the error names the flag. */
export function positiveNumber(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError(`Expected ${name} to be a number > 0.`);
    return n;
  };
}

/** A commander parser for a name that must hold something: a stream key, a group or consumer name. */
export function nonEmpty(name: string) {
  return (value: string): string => {
    if (value.trim() === '') throw new InvalidArgumentError(`Expected ${name} to be a non-empty name.`);
    return value;
  };
}

/** A commander parser for a number ≥ 0; the error names the flag. */
export function nonNegativeNumber(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`Expected ${name} to be a number ≥ 0.`);
    return n;
  };
}

/** A commander parser for a whole number of milliseconds ≥ `min`: TTLs are whole milliseconds. */
export function wholeMilliseconds(name: string, min: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`Expected ${name} to be a whole number of milliseconds ≥ ${min}.`);
    return n;
  };
}

/** A commander parser for a duration: `24h`, `90m`, `2d`, `1w`, `30s`, or `0`. */
export function duration(name: string) {
  return (value: string): number => {
    const text = value.trim();
    if (text === '0') return 0;
    const match = /^(\d+(?:\.\d+)?)\s*([smhdw])$/i.exec(text);
    if (!match) throw new InvalidArgumentError(`Expected ${name} to be a duration like 24h, 90m or 2d.`);
    return Number(match[1]) * UNITS[match[2]!.toLowerCase()]!;
  };
}

/** `--min-window`, shared by `apply` and `init`: the least span of data a TTL is set from. */
export function minWindowOption(description: string, defaultMs: number): Option {
  return new Option('--min-window <duration>', `${description} (24h, 90m, 2d; 0 for no limit)`).argParser(duration('--min-window')).default(defaultMs, '24h');
}

/** A commander parser for repeatable options: each use adds a value. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

const UNITS: Record<string, number> = { s: SECOND_MS, m: MINUTE_MS, h: HOUR_MS, d: DAY_MS, w: WEEK_MS };

/**
 * Parses a point in time: an ISO 8601 date or date-time (`2026-11-30`,
 * `2026-11-30T08:00Z`), epoch milliseconds, `now`, or a duration before `now`
 * (`48h`, `90m`, `2d`, `1w`). Throws {@link ConfigError} naming the option otherwise.
 */
export function parseTime(value: string, option: string, now = Date.now()): number {
  const text = value.trim();
  if (text === 'now') return now;
  const relative = /^(\d+(?:\.\d+)?)\s*([smhdw])$/i.exec(text);
  if (relative) return now - Number(relative[1]) * UNITS[relative[2]!.toLowerCase()]!;
  if (/^\d{11,}$/.test(text)) return Number(text);
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/i.test(text)) {
    const ms = Date.parse(text);
    if (Number.isFinite(ms)) return ms;
  }
  throw new ConfigError(
    `Expected \`${option}\` to be an ISO date/time (2026-11-30T08:00Z), epoch ms, or a duration ago like 48h, 90m, 2d; got \`${value}\``,
  );
}

/** Expands `*` and `?` in the file name part of a path (the shell may not have). */
export function expandDbPaths(paths: readonly string[]): string[] {
  return paths.flatMap((path) => {
    const name = basename(path);
    if (!/[*?]/.test(name)) return [path];
    const dir = dirname(path);
    const matches = globMatcher(name);
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      throw new TtlAdvisorError(`No samples database matches ${path}`);
    }
    const found = entries.filter(matches).sort().map((e) => join(dir, e));
    if (found.length === 0) throw new TtlAdvisorError(`No samples database matches ${path}`);
    return found;
  });
}

/** The `--db` option of every command that reads samples databases. */
export function dbOption(): Option {
  return new Option('--db <file>', `samples database; repeat or use a glob for several (default: ${DEFAULT_DB_PATH})`).argParser(collect);
}

/** The options every command that analyses samples shares with `report`. */
export interface AnalysisOptions extends PrometheusCliOptions {
  db?: string[];
  since?: string;
  until?: string;
  multiplier?: number;
  floor?: number;
  step?: number;
  cover?: 'p99' | 'max';
  pattern?: string[];
}

/** Adds {@link AnalysisOptions} to a command. */
export function addAnalysisOptions(command: Command): Command {
  command
    .addOption(dbOption())
    .option('--since <time>', 'only samples from this time: ISO date/time, epoch ms, or a duration ago like 48h')
    .option('--until <time>', 'only samples before this time (same forms as --since)')
    .option('--multiplier <n>', 'TTL = max(floor, multiplier × p99) (default: 3)', positiveNumber('--multiplier'))
    .option('--floor <ms>', 'lowest TTL recommended, in ms (default: 3000)', wholeMilliseconds('--floor', 0))
    .option('--step <ms>', 'round recommendations up to a multiple of this, in ms (default: 100)', wholeMilliseconds('--step', 1))
    .addOption(
      new Option('--cover <what>', 'p99: the rule alone, longer holds are a finding; max: also cover the longest hold seen')
        .choices(['p99', 'max'])
        .default('p99'),
    )
    .option('--pattern <glob>', 'only patterns matching this glob; repeat for several', collect);
  return addPrometheusOptions(command);
}

/** The evidence flags `check` and `apply` share, with their `--code` forms (`strict` and `failOnInsufficientData` are `check`'s alone). */
export interface DecisionFlags {
  strict?: boolean;
  failOnInsufficientData?: boolean;
  minChange: number;
  minWindow: number;
}

/** The flags as the decision's options: one mapping, so `check` fails only on what `apply` would change, in either form. */
export function decisionOptionsOf(flags: DecisionFlags): CheckOptions {
  return { strict: flags.strict, failOnInsufficientData: flags.failOnInsufficientData, minChangePercent: flags.minChange, minWindowMs: flags.minWindow };
}

/** Runs the analysis the options ask for: from samples databases, or from Prometheus (`--prometheus`). */
export async function runAnalysis(options: AnalysisOptions, io: Io): Promise<Analysis> {
  const now = io.now();
  const sinceMs = options.since === undefined ? undefined : parseTime(options.since, '--since', now);
  const untilMs = options.until === undefined ? undefined : parseTime(options.until, '--until', now);
  const analyzeOptions: AnalyzeOptions = {
    sinceMs,
    untilMs,
    multiplier: options.multiplier,
    floorMs: options.floor,
    stepMs: options.step,
    cover: options.cover,
    patterns: options.pattern,
    nowMs: now,
  };
  if (options.prometheus !== undefined) return analyzePrometheus(options, analyzeOptions, now);
  refuseWithoutPrometheus(options);
  return analyze(expandDbPaths(options.db ?? [DEFAULT_DB_PATH]), analyzeOptions);
}
