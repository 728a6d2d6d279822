import { createRequire } from 'node:module';
import { ConfigError } from '../errors.js';
import { compileTemplates, type CompiledTemplate } from '../keys/pattern.js';
import type { Warning } from '../sample/warn-once.js';
import { expected, oneOf, optionalFunction, optionalStrings, optionsObject, positiveInteger } from '../validate.js';
import { METRIC_SOURCES, type MetricSource } from './instruments.js';
import type { OtelMeter } from './otel-types.js';

/** Options of {@link OtelRecorder}. */
export interface OtelRecorderOptions {
  /**
   * The meter to record with. @default the global meter provider's `ttl-advisor` meter, from the
   * application's `@opentelemetry/api` (the application sets up the SDK and its exporter).
   */
  meter?: OtelMeter;
  /** Key templates (`order:lock:{id}`), as `SqliteRecorder`'s `patterns`; other keys get `patternOf`'s pattern. @default [] */
  patterns?: readonly string[];
  /** Distinct patterns named as attribute values at most; further ones are `{other}`. @default 100 */
  maxPatterns?: number;
  /** The `source` attribute: the door these samples come through. @default 'withLock' */
  source?: MetricSource;
  /** Told once per kind of problem (invalid samples, pattern overflow); a process warning when absent. */
  onWarning?: (warning: Warning<OtelWarningKind>) => void;
}

export type OtelWarningKind = 'invalid-sample' | 'pattern-overflow' | 'meter-failed';

/** Defaults of {@link OtelRecorderOptions}, frozen. */
export const OTEL_RECORDER_DEFAULTS: Readonly<{ maxPatterns: number; source: MetricSource }> = Object.freeze({ maxPatterns: 100, source: 'withLock' });

/** {@link OtelRecorderOptions} checked, with their defaults filled in. */
export interface ResolvedOtelOptions {
  meter: OtelMeter;
  templates: readonly CompiledTemplate[];
  maxPatterns: number;
  source: MetricSource;
  onWarning: ((warning: Warning<OtelWarningKind>) => void) | undefined;
}

/** Validates {@link OtelRecorderOptions} at the boundary; a {@link ConfigError} names the option. */
export function resolveOtelOptions(options: OtelRecorderOptions | undefined): ResolvedOtelOptions {
  const o = optionsObject('OtelRecorder', options, true);
  const d = OTEL_RECORDER_DEFAULTS;
  const meter = o.meter ?? globalMeter();
  if (typeof meter?.createHistogram !== 'function') throw expected('meter', 'an OpenTelemetry Meter', meter);
  return {
    meter,
    maxPatterns: positiveInteger('maxPatterns', o.maxPatterns, d.maxPatterns),
    source: oneOf('source', o.source, METRIC_SOURCES, d.source),
    templates: compileTemplates(optionalStrings('patterns', o.patterns) ?? []),
    onWarning: optionalFunction('onWarning', o.onWarning),
  };
}

/** The application's global meter, from its `@opentelemetry/api`: loaded here, when the recorder is made, and only then. */
function globalMeter(): OtelMeter {
  let api: { metrics: { getMeter(name: string): OtelMeter } };
  try {
    api = createRequire(import.meta.url)('@opentelemetry/api') as typeof api;
  } catch (error) {
    throw new ConfigError('OtelRecorder needs @opentelemetry/api (npm install @opentelemetry/api and set up the SDK), or a `meter`', { cause: error });
  }
  return api.metrics.getMeter('ttl-advisor');
}
