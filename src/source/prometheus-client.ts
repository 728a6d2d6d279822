import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFileSync } from 'node:fs';
import { PrometheusError } from '../errors.js';
import { cutUserinfoText, cutsUserinfo, redactUrl } from '../redact-url.js';

/**
 * A small client for the Prometheus HTTP API (`/api/v1/query`, `/api/v1/query_range`), which Thanos
 * Query and Mimir (under their `/prometheus` prefix) answer as well. node:http/https only: the
 * credentials go in headers, never in a URL or a message.
 */

/** How the client authenticates; the CLI takes it from the environment only, never from argv. */
export type PrometheusAuth = { kind: 'bearer'; token: string } | { kind: 'basic'; username: string; password: string };

/** Options of {@link PrometheusClient}. */
export interface PrometheusClientOptions {
  /** The API's base URL: `http://prometheus:9090`, `https://mimir.example/prometheus`. */
  url: string;
  auth?: PrometheusAuth | undefined;
  /** Extra headers (`X-Scope-OrgID` for Mimir's tenants). */
  headers?: Readonly<Record<string, string>> | undefined;
  /** A PEM file of the CA that signed the server's certificate (https). */
  caFile?: string | undefined;
  /** Each request's deadline (ms), from when it is sent to the answer's last byte. @default 30_000 */
  timeoutMs?: number | undefined;
}

/** A sample of a native histogram as the API writes it: bucket boundaries and counts are strings. */
export interface NativeHistogramJson {
  count: string;
  sum: string;
  /** [boundary rule, lower, upper, count]: rule 0 = (lower, upper], 1 = [lower, upper), 2 = (lower, upper), 3 = [lower, upper]. */
  buckets?: [number, string, string, string][];
}

/** One series of a query's answer: `value`/`values` for floats, `histogram`/`histograms` for native histograms. */
export interface PromSeries {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
  histogram?: [number, NativeHistogramJson];
  histograms?: [number, NativeHistogramJson][];
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class PrometheusClient {
  /** The URL as messages and reports show it. */
  readonly displayUrl: string;
  private readonly base: URL;
  private readonly headers: Record<string, string>;
  private readonly ca: Buffer | undefined;
  private readonly timeoutMs: number;
  /** What credentials were sent, to say what a 401 refused (never the credentials themselves). */
  private readonly sent: string | undefined;

  constructor(options: PrometheusClientOptions) {
    // A password a parser would cut (`u:s3cr@Hunter/rest@host`): it would send `s3cr` to `Hunter`, and show
    // it nowhere but there. Refused, as a Redis URL is, before anything is sent; the URL is not shown.
    if (cutsUserinfo(options.url)) throw new PrometheusError('(not shown)', cutUserinfoText('--prometheus'));
    this.displayUrl = redactUrl(options.url);
    let base: URL;
    try {
      base = new URL(options.url);
    } catch {
      throw new PrometheusError(this.displayUrl, `Expected --prometheus to be an http(s) URL like http://prometheus:9090, got ${this.displayUrl}`);
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new PrometheusError(this.displayUrl, `Expected --prometheus to be an http(s) URL like http://prometheus:9090, got ${this.displayUrl}`);
    }
    this.headers = { Accept: 'application/json', 'User-Agent': 'ttl-advisor', ...options.headers };
    let auth = options.auth;
    // Credentials in the URL are basic auth, as curl takes them; the environment's win.
    if (!auth && base.username) auth = { kind: 'basic', username: decodeURIComponent(base.username), password: decodeURIComponent(base.password) };
    base.username = '';
    base.password = '';
    this.sent = auth?.kind === 'bearer' ? 'the bearer token it was sent was not accepted' : auth ? `the password it was sent for ${auth.username} was not accepted` : undefined;
    if (auth) {
      this.headers.Authorization =
        auth.kind === 'bearer' ? `Bearer ${auth.token}` : `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    }
    this.base = base;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    try {
      this.ca = options.caFile === undefined ? undefined : readFileSync(options.caFile);
    } catch (error) {
      throw new PrometheusError(this.displayUrl, `Cannot read --prometheus-ca ${options.caFile}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }

  /** An instant query at `timeMs`: the result vector (or matrix, for a range selector). */
  async query(promql: string, timeMs: number): Promise<PromSeries[]> {
    return this.post('/api/v1/query', { query: promql, time: (timeMs / 1000).toFixed(3) });
  }

  /** A range query from `startMs` to `endMs` every `stepS` seconds. */
  async queryRange(promql: string, startMs: number, endMs: number, stepS: number): Promise<PromSeries[]> {
    return this.post('/api/v1/query_range', { query: promql, start: (startMs / 1000).toFixed(3), end: (endMs / 1000).toFixed(3), step: String(stepS) });
  }

  private async post(path: string, form: Record<string, string>): Promise<PromSeries[]> {
    const url = new URL(this.base.href);
    url.pathname = `${url.pathname.replace(/\/+$/, '')}${path}`;
    const body = new URLSearchParams(form).toString();
    const { status, type, text } = await this.send(url, body);
    const where = `Prometheus at ${this.displayUrl}`;
    if (status === 401 || status === 403) {
      const fix = this.sent ?? 'set PROMETHEUS_BEARER_TOKEN, or PROMETHEUS_USERNAME and PROMETHEUS_PASSWORD';
      throw new PrometheusError(this.displayUrl, `${where} refused the request (HTTP ${status}): ${fix}`);
    }
    let parsed: { status?: unknown; data?: { resultType?: unknown; result?: unknown }; error?: unknown; errorType?: unknown } | undefined;
    try {
      parsed = JSON.parse(text) as typeof parsed;
    } catch {
      parsed = undefined;
    }
    if (!parsed || typeof parsed !== 'object' || (parsed.status !== 'success' && parsed.status !== 'error')) {
      throw new PrometheusError(this.displayUrl, `${where} did not answer as the Prometheus API (HTTP ${status}${type ? `, ${type.split(';')[0]}` : ''} at ${path}): check the URL (Mimir: …/prometheus)`);
    }
    if (parsed.status === 'error') {
      throw new PrometheusError(this.displayUrl, `${where} refused a query (HTTP ${status}, ${String(parsed.errorType)}): ${oneLine(String(parsed.error))}`);
    }
    const result = parsed.data?.result;
    if (!Array.isArray(result)) throw new PrometheusError(this.displayUrl, `${where} answered without a result (HTTP ${status} at ${path})`);
    return result as PromSeries[];
  }

  private send(url: URL, body: string): Promise<{ status: number; type: string; text: string }> {
    const where = `Prometheus at ${this.displayUrl}`;
    return new Promise((settle, fail) => {
      // One deadline for the whole request, answer included: an idle timeout let a server sending a byte
      // every 2 s hold the CLI 61 s under a 3 s limit. Whatever ends first settles; the socket is let go.
      let deadline: NodeJS.Timeout | undefined;
      const resolve = (answer: { status: number; type: string; text: string }) => {
        clearTimeout(deadline);
        settle(answer);
      };
      const reject = (error: unknown) => {
        clearTimeout(deadline);
        fail(error);
        request.destroy();
      };
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(
        url,
        {
          method: 'POST',
          headers: { ...this.headers, 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) },
          ...(this.ca ? { ca: this.ca } : {}),
        },
        (response: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            // An answer this large is not one we asked for (or a window too wide): refuse rather than hold it.
            if (size > MAX_ANSWER_BYTES) reject(new PrometheusError(this.displayUrl, `${where} answered more than ${MAX_ANSWER_BYTES >> 20} MiB`));
            else chunks.push(chunk);
          });
          response.on('end', () => resolve({ status: response.statusCode ?? 0, type: String(response.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }));
          response.on('error', (error) => reject(this.failure(error)));
        },
      );
      deadline = setTimeout(() => reject(new PrometheusError(this.displayUrl, `${where} did not answer within ${this.timeoutMs / 1000} s`)), this.timeoutMs);
      request.on('error', (error) => reject(this.failure(error)));
      request.end(body);
    });
  }

  /** A transport failure in one line, with no header in it. */
  private failure(error: unknown): PrometheusError {
    if (error instanceof PrometheusError) return error;
    const code = (error as NodeJS.ErrnoException).code;
    const what =
      code === 'ECONNREFUSED'
        ? 'connection refused'
        : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
          ? 'no such host'
          : code === 'ECONNRESET'
            ? 'the connection was reset'
            : (code ?? '').startsWith('ERR_TLS') || /certificate/i.test((error as Error).message)
              ? `TLS: ${(error as Error).message} (--prometheus-ca names the CA)`
              : oneLine((error as Error).message ?? String(error));
    return new PrometheusError(this.displayUrl, `Cannot reach Prometheus at ${this.displayUrl}: ${what}`, { cause: error });
  }
}

const MAX_ANSWER_BYTES = 256 << 20;

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').slice(0, 300);
}
