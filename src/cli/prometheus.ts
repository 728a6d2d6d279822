import { InvalidArgumentError, Option, type Command } from 'commander';
import { analyzeSource } from '../analyze/analyze-source.js';
import { checkWindow, type Analysis, type AnalyzeOptions } from '../analyze/analyze.js';
import { ConfigError } from '../errors.js';
import { PrometheusClient, type PrometheusAuth } from '../source/prometheus-client.js';
import { readPrometheus } from '../source/prometheus.js';
import { HOUR_MS } from '../units.js';

/** The options that read from Prometheus (or Thanos, Mimir) instead of samples databases. */
export interface PrometheusCliOptions {
  prometheus?: string;
  prometheusCa?: string;
  prometheusHeader?: string[];
  prometheusTimeout?: number;
  metric?: string;
  patternLabel?: string;
}

/** The window `--prometheus` reads when `--since` is not given. */
export const DEFAULT_PROMETHEUS_WINDOW_MS = 48 * HOUR_MS;

/** Adds {@link PrometheusCliOptions} to a command. */
export function addPrometheusOptions(command: Command): Command {
  const options = [
    new Option('--prometheus <url>', 'read from a Prometheus-compatible API (Prometheus, Thanos, Mimir …/prometheus) instead of --db; auth from PROMETHEUS_BEARER_TOKEN, or PROMETHEUS_USERNAME and PROMETHEUS_PASSWORD'),
    new Option('--prometheus-ca <file>', 'PEM file of the CA that signed the Prometheus server certificate'),
    new Option('--prometheus-header <header>', "extra header for Prometheus, like 'X-Scope-OrgID: tenant'; repeat for several").argParser(headerOption),
    new Option('--prometheus-timeout <seconds>', 'limit for each Prometheus request, in seconds').argParser(seconds).default(30_000, '30'),
    new Option('--metric <name>', 'with --prometheus: a hold-time histogram of your own, in seconds (default: ttl_advisor_lock_hold_duration[_seconds])'),
    new Option('--pattern-label <label>', 'with --prometheus: the label naming the key pattern (default: pattern)'),
  ];
  // Listed under a heading of their own, after the command's own options: most runs read a file.
  for (const option of options) command.addOption(option.helpGroup('Reading from Prometheus instead (--prometheus):'));
  return command;
}

function headerOption(value: string, previous: string[] | undefined): string[] {
  const match = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*:\s*(.*)$/.exec(value);
  if (!match || /[\r\n]/.test(value)) throw new InvalidArgumentError("Expected --prometheus-header to be 'Name: value'.");
  return [...(previous ?? []), value];
}

function seconds(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('Expected --prometheus-timeout to be a number of seconds > 0.');
  return n * 1000;
}

/** The credentials for Prometheus, from the environment only: a token on argv would show in `ps` and in CI logs. */
export function prometheusAuth(env: NodeJS.ProcessEnv = process.env): PrometheusAuth | undefined {
  const token = env.PROMETHEUS_BEARER_TOKEN || env.PROMETHEUS_TOKEN;
  if (token) return { kind: 'bearer', token };
  if (env.PROMETHEUS_USERNAME) return { kind: 'basic', username: env.PROMETHEUS_USERNAME, password: env.PROMETHEUS_PASSWORD ?? '' };
  return undefined;
}

/** Reads and analyses the window from Prometheus; every failure is a one-line `TtlAdvisorError`. */
export async function analyzePrometheus(options: PrometheusCliOptions & { db?: string[] }, analyzeOptions: AnalyzeOptions, nowMs: number): Promise<Analysis> {
  if (options.db !== undefined) throw new ConfigError('--prometheus and --db are exclusive: read from one of them');
  const headers: Record<string, string> = {};
  for (const header of options.prometheusHeader ?? []) {
    const colon = header.indexOf(':');
    headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
  }
  const client = new PrometheusClient({ url: options.prometheus!, auth: prometheusAuth(), headers, caFile: options.prometheusCa, timeoutMs: options.prometheusTimeout });
  const untilMs = analyzeOptions.untilMs ?? nowMs;
  const sinceMs = analyzeOptions.sinceMs ?? untilMs - DEFAULT_PROMETHEUS_WINDOW_MS;
  checkWindow(sinceMs, untilMs);
  const data = await readPrometheus(client, { sinceMs, untilMs, metric: options.metric, patternLabel: options.patternLabel, patterns: analyzeOptions.patterns });
  return analyzeSource(data, { ...analyzeOptions, sinceMs, untilMs });
}

/** `--metric` and `--pattern-label` read only from Prometheus: said, rather than ignored. */
export function refuseWithoutPrometheus(options: PrometheusCliOptions): void {
  for (const [value, flag] of [[options.metric, '--metric'], [options.patternLabel, '--pattern-label'], [options.prometheusCa, '--prometheus-ca'], [options.prometheusHeader, '--prometheus-header']] as const) {
    if (value !== undefined) throw new ConfigError(`${flag} needs --prometheus`);
  }
}
