import { describe, expect, it } from 'vitest';
import { METRIC_NAMES, PROMETHEUS_NAMES } from '../../src/index.js';
import { OUR_METRICS } from '../../src/source/promql.js';

/**
 * The names are derived from one table (src/metrics/instruments.ts); dashboards and alerts hold them as
 * text, so here they are spelled out once more, on purpose: a change to the table or to the derivation
 * that moves a name fails here, not in someone's Grafana.
 */
describe('the metric names, as users hold them', () => {
  it('OpenTelemetry names, the SDK exporter’s Prometheus names, and what --prometheus reads', () => {
    expect(METRIC_NAMES).toEqual({
      hold: 'ttl_advisor.lock.hold.duration',
      wait: 'ttl_advisor.lock.wait.duration',
      lateness: 'ttl_advisor.lock.renewal.lateness',
      outcomes: 'ttl_advisor.lock.outcomes',
      ttl: 'ttl_advisor.lock.ttl',
      renamed: 'ttl_advisor.pattern.renamed',
    });
    expect(PROMETHEUS_NAMES).toEqual({
      hold: 'ttl_advisor_lock_hold_duration',
      wait: 'ttl_advisor_lock_wait_duration',
      lateness: 'ttl_advisor_lock_renewal_lateness',
      outcomes: 'ttl_advisor_lock_outcomes_total',
      ttl: 'ttl_advisor_lock_ttl',
      renamed: 'ttl_advisor_pattern_renamed',
    });
    expect(OUR_METRICS).toEqual({
      hold: 'ttl_advisor_lock_hold_duration(?:_seconds)?',
      wait: 'ttl_advisor_lock_wait_duration(?:_seconds)?',
      outcomes: 'ttl_advisor_lock_outcomes_total',
      ttl: 'ttl_advisor_lock_ttl(?:_seconds)?',
      renamed: 'ttl_advisor_pattern_renamed(?:_ratio)?',
    });
    expect(Object.isFrozen(METRIC_NAMES) && Object.isFrozen(PROMETHEUS_NAMES) && Object.isFrozen(OUR_METRICS)).toBe(true);
  });
});
