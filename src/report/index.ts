import type { Analysis } from '../analyze/analyze.js';
import { renderJson } from './json.js';
import { renderMarkdown } from './markdown.js';

export type ReportFormat = 'html' | 'md' | 'json';

/** One renderer per format: pure functions from an analysis to the file's text. */
export const REPORTERS: Readonly<Record<ReportFormat, { file: string; render: (analysis: Analysis) => string | Promise<string> }>> =
  Object.freeze({
    // Loaded on demand: vega is the heaviest thing the CLI imports, and JSON or Markdown never needs it.
    html: { file: 'ttl-report.html', render: async (analysis) => (await import('./html.js')).renderHtml(analysis) },
    md: { file: 'ttl-report.md', render: renderMarkdown },
    json: { file: 'ttl-report.json', render: renderJson },
  });

export const REPORT_FORMATS = Object.keys(REPORTERS) as ReportFormat[];
