/**
 * The metrics contract: instrument names, units, attributes and bucket bounds, as documented in
 * docs/metrics.md. Names follow OpenTelemetry's conventions (dotted, unit in `unit`, seconds); an
 * OTel → Prometheus path writes them as `ttl_advisor_lock_hold_duration_bucket` (the SDK's exporter)
 * or `ttl_advisor_lock_hold_duration_seconds_bucket` (the Collector), `ttl_advisor_lock_outcomes_total`.
 */
export const METRIC_NAMES = Object.freeze({
  hold: 'ttl_advisor.lock.hold.duration',
  wait: 'ttl_advisor.lock.wait.duration',
  lateness: 'ttl_advisor.lock.renewal.lateness',
  outcomes: 'ttl_advisor.lock.outcomes',
  ttl: 'ttl_advisor.lock.ttl',
  renamed: 'ttl_advisor.pattern.renamed',
});

/**
 * The same names as Prometheus stores them through the SDK's Prometheus exporter (what
 * `watch --metrics-port` serves). The Collector's exporters add the unit, `_seconds`, to the
 * duration histograms and the gauge: `--prometheus` reads both spellings.
 */
export const PROMETHEUS_NAMES = Object.freeze({
  hold: 'ttl_advisor_lock_hold_duration',
  wait: 'ttl_advisor_lock_wait_duration',
  lateness: 'ttl_advisor_lock_renewal_lateness',
  outcomes: 'ttl_advisor_lock_outcomes_total',
  ttl: 'ttl_advisor_lock_ttl',
  renamed: 'ttl_advisor_pattern_renamed',
});

/** Which door a sample came through. */
export type MetricSource = 'withLock' | 'instrument' | 'watch';

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

/** Distinct patterns an OpenTelemetry recorder names at most; the rest share `{other}`. */
export const DEFAULT_MAX_METRIC_PATTERNS = 100;
