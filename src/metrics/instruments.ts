/**
 * The metrics contract: instruments, their names, units and bucket bounds, as documented in
 * docs/metrics.md. Each instrument is written once, in {@link INSTRUMENTS}; every other spelling of its
 * name is derived here by the rules OpenTelemetry's exporters follow, so the recorder that writes a
 * series, the PromQL that reads it back and the docs (test/docs/reference.test.ts) cannot drift apart.
 * Names follow OpenTelemetry's conventions (dotted, unit in `unit`, seconds).
 */

/** One instrument of the contract. */
export interface InstrumentSpec {
  /** The OpenTelemetry name: dotted, no unit in it. */
  readonly name: string;
  readonly kind: 'histogram' | 'counter' | 'gauge';
  /** The UCUM unit, as OpenTelemetry takes it: `s`, `1`, or an annotation such as `{lock}`. */
  readonly unit: string;
  readonly description: string;
}

/** Every instrument an `OtelRecorder` makes, by the key the code knows it by. */
export const INSTRUMENTS = Object.freeze({
  hold: {
    name: 'ttl_advisor.lock.hold.duration',
    kind: 'histogram',
    unit: 's',
    description: 'How long a lock was held, from won to released (or seen gone).',
  },
  wait: {
    name: 'ttl_advisor.lock.wait.duration',
    kind: 'histogram',
    unit: 's',
    description: 'How long a caller waited for a lock, from the first attempt to won or given up.',
  },
  lateness: { name: 'ttl_advisor.lock.renewal.lateness', kind: 'histogram', unit: 's', description: "How late a lease's renewal came, past its period." },
  outcomes: {
    name: 'ttl_advisor.lock.outcomes',
    kind: 'counter',
    unit: '{lock}',
    description: 'Locks by how they ended: released, expired, not_acquired, error, lost.',
  },
  ttl: { name: 'ttl_advisor.lock.ttl', kind: 'gauge', unit: 's', description: 'The TTL the locks of a pattern were last taken with.' },
  renamed: {
    name: 'ttl_advisor.pattern.renamed',
    kind: 'gauge',
    unit: '1',
    description: 'A pattern exported before a position of it was learned (`pattern`), and the pattern its series are read as (`learned`): 1.',
  },
} as const satisfies Record<string, InstrumentSpec>);

export type InstrumentKey = keyof typeof INSTRUMENTS;

/** A frozen object of what `derive` makes of each instrument, keyed and ordered as {@link INSTRUMENTS}. */
function byInstrument<T>(derive: (spec: InstrumentSpec, key: InstrumentKey) => T): Readonly<Record<InstrumentKey, T>> {
  const derived = {} as Record<InstrumentKey, T>;
  for (const key of Object.keys(INSTRUMENTS) as InstrumentKey[]) derived[key] = derive(INSTRUMENTS[key], key);
  return Object.freeze(derived);
}

/** Each instrument's OpenTelemetry name. */
export const METRIC_NAMES = byInstrument((spec) => spec.name) as { readonly [K in InstrumentKey]: (typeof INSTRUMENTS)[K]['name'] };

/** The names an instrument's series get in Prometheus, and what `--prometheus` asks for to find either. */
export interface SeriesNames {
  /** Through the SDK's Prometheus exporter (what `watch --metrics-port` serves): no unit suffix. */
  readonly sdk: string;
  /** Through the Collector's exporters, which add the unit: `_seconds`, `_ratio`. */
  readonly collector: string;
  /** Both, as one RE2 alternative (Prometheus anchors it). */
  readonly either: string;
}

/**
 * The Prometheus spellings of every instrument: dots become underscores, a counter ends in `_total`, and
 * the Collector adds the unit (`s` → `_seconds`, `1` → `_ratio`; an annotation such as `{lock}` adds none).
 * A histogram's series add `_bucket`, `_count` and `_sum` to these.
 */
export const SERIES_NAMES = byInstrument((spec): SeriesNames => {
  const base = spec.name.replace(/\./g, '_');
  const total = spec.kind === 'counter' ? '_total' : '';
  const unit = spec.unit === 's' ? '_seconds' : spec.unit === '1' ? '_ratio' : '';
  return Object.freeze({ sdk: `${base}${total}`, collector: `${base}${unit}${total}`, either: unit ? `${base}(?:${unit})?${total}` : `${base}${total}` });
});

/**
 * The same names as Prometheus stores them through the SDK's Prometheus exporter (what
 * `watch --metrics-port` serves). The Collector's exporters add the unit, `_seconds`, to the
 * duration histograms and the gauge: `--prometheus` reads both spellings.
 */
export const PROMETHEUS_NAMES = byInstrument((_, key) => SERIES_NAMES[key].sdk);

/** The door a sample came through, as the `source` attribute names it. */
export const METRIC_SOURCES = Object.freeze(['withLock', 'instrument', 'watch'] as const);

/** Which door a sample came through. */
export type MetricSource = (typeof METRIC_SOURCES)[number];

/**
 * Bucket bounds advised for the duration histograms (seconds): 1, 1.5, 2, 3, 4, 5 and 7.5 per decade
 * from 1 ms to 600 s, so no bucket is more than 1.5 × the one below it (a p99 read from them is at most
 * 50 % high, never low) and a 19 s hold is not clamped to 10 s as with prom-client's defaults.
 * Exponential (base-2) histograms ignore this advice and are finer still.
 */
export const DURATION_BUCKETS_S: readonly number[] = Object.freeze(bucketBounds());

function bucketBounds(): number[] {
  const steps = [1, 1.5, 2, 3, 4, 5, 7.5];
  const bounds: number[] = [];
  for (let exponent = -3; exponent <= 2; exponent++) {
    for (const step of steps) {
      const bound = Number((step * 10 ** exponent).toPrecision(3));
      if (bound <= 600) bounds.push(bound);
    }
  }
  bounds.push(600);
  return [...new Set(bounds)];
}
