import { describe, expect, it } from 'vitest';
import { markdownCode } from '../../src/report/markdown.js';

describe('Markdown', () => {
  it('makes code spans that survive pipes and backticks', () => {
    expect(markdownCode('a|b')).toBe('`a\\|b`');
    expect(markdownCode('x`y')).toBe('``x`y``');
    expect(markdownCode('`edge`')).toBe('`` `edge` ``');
  });
});

describe('the words of the reports', () => {
  it('count expirations as expired in the summaries, never as lost (`lost` is its own outcome)', async () => {
    const { renderMarkdown } = await import('../../src/report/markdown.js');
    const { renderHtml } = await import('../../src/report/html.js');
    const { analysisOf, patternAnalysis } = await import('../helpers/analysis.js');
    const analysis = analysisOf([patternAnalysis('payment:lock:order:{id}', { currentTtlMs: 5000, p99Ms: 5250, expired: 46 })]);
    const md = renderMarkdown(analysis);
    expect(md).toMatch(/\| 🔴 46 expired \|$/m);
    expect(md).not.toMatch(/\blost\b/);
    const html = await renderHtml(analysis);
    expect(html).toMatch(/<td class="verdict"><span class="badge" style="[^"]+">46 expired<\/span><\/td>/);
    expect(html).not.toMatch(/\d+ lost/);
  });
});
