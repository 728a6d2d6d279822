import type { MetricSource } from './instruments.js';
import type { OtelRecorderOptions } from './otel-options.js';
import { OtelRecorder } from './otel-recorder.js';

/** Options of {@link startMetricsEndpoint}: the recorder's `patterns`, `maxPatterns` and `onWarning`, and where to listen. */
export interface MetricsEndpointOptions extends Pick<OtelRecorderOptions, 'patterns' | 'maxPatterns' | 'onWarning'> {
  port: number;
  /** The interface to listen on. @default all of them, as Prometheus exporters do */
  host?: string;
  source: MetricSource;
}

/** A Prometheus `/metrics` endpoint and the recorder that feeds it. */
export interface MetricsEndpoint {
  recorder: OtelRecorder;
  /** Where Prometheus scrapes it. */
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the OpenTelemetry recorder's metrics at `http://host:port/metrics`, through the SDK's own
 * Prometheus exporter: one code path for a service's metrics and the watcher's, named as any
 * OTel → Prometheus path names them. Loads the SDK only here. Rejects when the port cannot be had.
 */
export async function startMetricsEndpoint(options: MetricsEndpointOptions): Promise<MetricsEndpoint> {
  const [{ MeterProvider }, { PrometheusExporter }] = await Promise.all([import('@opentelemetry/sdk-metrics'), import('@opentelemetry/exporter-prometheus')]);
  const exporter = new PrometheusExporter({ port: options.port, ...(options.host !== undefined && { host: options.host }), preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  // The recorder first: options it refuses (a bad template) must not leave a server listening.
  const recorder = new OtelRecorder({
    meter: provider.getMeter('ttl-advisor'),
    source: options.source,
    ...(options.patterns && { patterns: options.patterns }),
    ...(options.maxPatterns !== undefined && { maxPatterns: options.maxPatterns }),
    ...(options.onWarning && { onWarning: options.onWarning }),
  });
  try {
    await exporter.startServer();
  } catch (error) {
    recorder.close();
    await provider.shutdown().catch(() => undefined);
    throw error;
  }
  const host = options.host === undefined || options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host;
  return {
    recorder,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${options.port}/metrics`,
    async close() {
      recorder.close();
      await provider.shutdown();
    },
  };
}
