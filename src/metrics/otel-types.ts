/**
 * The parts of `@opentelemetry/api` the recorder uses, in the package's own types: a service that
 * does not use OpenTelemetry type-checks without it, and any API 1.x meter fits.
 */
export type MetricAttributes = Record<string, string>;

export interface OtelHistogram {
  record(value: number, attributes?: MetricAttributes): void;
}

export interface OtelCounter {
  add(value: number, attributes?: MetricAttributes): void;
}

export interface OtelObservableResult {
  observe(value: number, attributes?: MetricAttributes): void;
}

export interface OtelObservableGauge {
  addCallback(callback: (result: OtelObservableResult) => void): void;
  removeCallback(callback: (result: OtelObservableResult) => void): void;
}

export interface OtelInstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

/** An OpenTelemetry `Meter` (`metrics.getMeter(…)` of `@opentelemetry/api`, or a `MeterProvider`'s). */
export interface OtelMeter {
  createHistogram(name: string, options?: OtelInstrumentOptions): OtelHistogram;
  createCounter(name: string, options?: OtelInstrumentOptions): OtelCounter;
  createObservableGauge(name: string, options?: OtelInstrumentOptions): OtelObservableGauge;
}
