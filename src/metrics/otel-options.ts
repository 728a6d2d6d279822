import { createRequire } from 'node:module';
import { ConfigError } from '../errors.js';
import { compileTemplates, type CompiledTemplate } from '../keys/pattern.js';
import type { Warning } from '../sample/warn-once.js';
import { expected, oneOf, optionalFunction, optionalStrings, optionsObject, positiveInteger, shown } from '../validate.js';
import { METRIC_SOURCES, type MetricSource } from './instruments.js';
import type { OtelCounter, OtelHistogram, OtelInstrumentOptions, OtelMeter, OtelObservableGauge } from './otel-types.js';

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
  const methods = ['createHistogram', 'createCounter', 'createObservableGauge'] as const;
  if (methods.some((m) => typeof (meter as Partial<OtelMeter> | undefined)?.[m] !== 'function')) throw expected('meter', 'an OpenTelemetry Meter', meter);
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

/** What each kind of instrument must have, and how a message names it. */
const INSTRUMENT_KINDS = {
  createHistogram: { what: 'a histogram', methods: ['record'] },
  createCounter: { what: 'a counter', methods: ['add'] },
  createObservableGauge: { what: 'an observable gauge', methods: ['addCallback', 'removeCallback'] },
} as const;

interface InstrumentOf {
  createHistogram: OtelHistogram;
  createCounter: OtelCounter;
  createObservableGauge: OtelObservableGauge;
}

/**
 * An instrument the meter made, checked: a meter that returns `undefined` (a stub, a mock, an API without
 * an SDK of the same major version) or throws is a {@link ConfigError} from the recorder's constructor that
 * says what it returned, not a `TypeError` from deep inside it, nor one at the first sample.
 */
export function instrumentFrom<K extends keyof InstrumentOf>(meter: OtelMeter, create: K, name: string, options: OtelInstrumentOptions): InstrumentOf[K] {
  const { what, methods } = INSTRUMENT_KINDS[create];
  let made: unknown;
  try {
    made = (meter as unknown as Record<K, (name: string, options: OtelInstrumentOptions) => unknown>)[create](name, options);
  } catch (error) {
    throw new ConfigError(`\`meter\`.${create}() threw: ${error instanceof Error ? error.message : describe(error)}`, { cause: error });
  }
  const instrument = made as Record<string, unknown> | null | undefined;
  if (typeof instrument !== 'object' || instrument === null || methods.some((m) => typeof instrument[m] !== 'function')) {
    throw new ConfigError(`\`meter\`.${create}() returned \`${describe(made)}\`, not ${what} (with ${methods.join(', ')}): is \`meter\` an OpenTelemetry Meter?`);
  }
  return made as InstrumentOf[K];
}

/** A value as a message shows it; an object that cannot be turned into text (no prototype) as such. */
function describe(value: unknown): string {
  try {
    return shown(value);
  } catch {
    return 'an object';
  }
}
