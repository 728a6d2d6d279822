import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_START_MS } from '../../fixtures/generate.js';
import { runCli } from '../helpers/cli.js';

/**
 * The docs' `<!-- example: generated NAME -->` blocks: what each must say,
 * made from the demo database (`ttl-samples.db` in the working folder) by the
 * CLI itself. `npm run docs:examples` writes them into the pages.
 */

/** The docs' clock: the end of the demo's two days. */
export const DOCS_NOW_MS = DEMO_START_MS + 2 * 86_400_000;

async function reportFile(format: 'json' | 'md'): Promise<string> {
  const out = mkdtempSync(join(process.cwd(), '.generated-'));
  try {
    const { code, stderr } = await runCli(['report', '--db', 'ttl-samples.db', '--format', format, '--out', out], DOCS_NOW_MS);
    if (code !== 0) throw new Error(`report --format ${format} exited ${code}: ${stderr}`);
    return readFileSync(join(out, `ttl-report.${format}`), 'utf8');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

export const GENERATORS: Readonly<Record<string, () => Promise<string>>> = {
  /** `report --format json`, with its first pattern and that pattern's first hour. */
  'report-json': async () => {
    const report = JSON.parse(await reportFile('json')) as { patterns: { hourly: unknown[] }[] };
    const [first] = report.patterns;
    if (!first) throw new Error('the demo report has no pattern');
    return formatJson({ ...report, patterns: [{ ...first, hourly: first.hourly.slice(0, 1) }] });
  },
  /** The Markdown report's risk sentences for the payment lock, one sentence a line. */
  'risk-payment': async () => {
    const line = (await reportFile('md')).split('\n').find((l) => l.startsWith('- `payment:lock:order:{id}`:'));
    if (!line) throw new Error('the Markdown report has no risk line for the payment lock');
    return line.replace(/([.;]) (?=[A-Z])/g, '$1\n  ');
  },
};

/** JSON with short objects and arrays on one line, so an excerpt reads at a glance. */
export function formatJson(value: unknown, width = 110): string {
  const inline = (v: unknown): string => {
    if (Array.isArray(v)) return `[${v.map(inline).join(', ')}]`;
    if (v !== null && typeof v === 'object') {
      const entries = Object.entries(v);
      return entries.length === 0 ? '{}' : `{ ${entries.map(([k, x]) => `${JSON.stringify(k)}: ${inline(x)}`).join(', ')} }`;
    }
    return JSON.stringify(v);
  };
  const format = (v: unknown, indent: string, prefix: number): string => {
    const one = inline(v);
    if (v === null || typeof v !== 'object' || indent.length + prefix + one.length <= width) return one;
    const inner = `${indent}  `;
    if (Array.isArray(v)) return `[\n${v.map((x) => inner + format(x, inner, 0)).join(',\n')}\n${indent}]`;
    const lines = Object.entries(v).map(([k, x]) => `${inner}${JSON.stringify(k)}: ${format(x, inner, JSON.stringify(k).length + 2)}`);
    return `{\n${lines.join(',\n')}\n${indent}}`;
  };
  return format(value, '', 0);
}
