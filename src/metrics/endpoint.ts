import { createServer, type Server } from 'node:http';
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
  /** Stops serving, within {@link CLOSE_GRACE_MS} whatever clients hold open, and shuts the meter provider down. */
  close(): Promise<void>;
}

/**
 * How long closing waits for scrapes in flight before it cuts every connection. A client that keeps a
 * connection open (idle keep-alive, a request never finished, nothing sent) kept `watch` from exiting after
 * SIGTERM for minutes, until a pod's SIGKILL, and its stop summary was never printed.
 */
export const CLOSE_GRACE_MS = 2000;
/** A scrape is one short GET: a client that takes longer to send one is cut off (Node's defaults are 60 s and 300 s). */
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * Serves the OpenTelemetry recorder's metrics at `http://host:port/metrics`, rendered by the SDK's own
 * Prometheus exporter: one code path for a service's metrics and the watcher's, named as any
 * OTel → Prometheus path names them. The HTTP server is ours, not the exporter's, so that closing is
 * bounded (the exporter's waits for every connection). Loads the SDK only here. Rejects when the port
 * cannot be had.
 */
export async function startMetricsEndpoint(options: MetricsEndpointOptions): Promise<MetricsEndpoint> {
  const [{ MeterProvider }, { PrometheusExporter }] = await Promise.all([import('@opentelemetry/sdk-metrics'), import('@opentelemetry/exporter-prometheus')]);
  const exporter = new PrometheusExporter({ preventServerStart: true });
  const provider = new MeterProvider({ readers: [exporter] });
  // The recorder first: options it refuses (a bad template) must not leave a server listening.
  const recorder = new OtelRecorder({
    meter: provider.getMeter('ttl-advisor'),
    source: options.source,
    ...(options.patterns && { patterns: options.patterns }),
    ...(options.maxPatterns !== undefined && { maxPatterns: options.maxPatterns }),
    ...(options.onWarning && { onWarning: options.onWarning }),
  });
  const server = createServer((request, response) => {
    let path: string;
    try {
      path = new URL(request.url ?? '/', 'http://localhost').pathname;
    } catch {
      return void response.writeHead(400).end('Bad Request');
    }
    if (path === '/metrics') exporter.getMetricsRequestHandler(request, response);
    else response.writeHead(404).end();
  });
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  // As the exporter's own: the endpoint alone never keeps a process alive.
  server.unref();
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ port: options.port, ...(options.host !== undefined && { host: options.host }) }, () => {
        server.off('error', reject);
        resolve();
      });
    });
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
      await closeServer(server);
      await provider.shutdown();
    },
  };
}

/** Stops listening and ends idle connections at once; scrapes in flight get {@link CLOSE_GRACE_MS}, then every connection is cut. */
async function closeServer(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const cut = setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS);
  await closed;
  clearTimeout(cut);
}
