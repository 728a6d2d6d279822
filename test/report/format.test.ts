import { describe, expect, it } from 'vitest';
import { displayWidth, escapeHtml, formatMs, pad, printable } from '../../src/report/format.js';
import { markdownCode } from '../../src/report/markdown.js';

describe('formatting untrusted and human-facing text', () => {
  it('shows control characters as escapes', () => {
    expect(printable('a\nb\u0000c\u001b[31m')).toBe('a\\u{a}b\\u{0}c\\u{1b}[31m');
  });

  it('escapes HTML, quotes included', () => {
    expect(escapeHtml(`<img src=x onerror="alert('1')">&`)).toBe('&#60;img src=x onerror=&#34;alert(&#39;1&#39;)&#34;&#62;&#38;');
  });

  it('makes Markdown code spans that survive pipes and backticks', () => {
    expect(markdownCode('a|b')).toBe('`a\\|b`');
    expect(markdownCode('x`y')).toBe('``x`y``');
    expect(markdownCode('`edge`')).toBe('`` `edge` ``');
  });

  it('measures terminal columns: wide characters take two', () => {
    expect(displayWidth('lock:7')).toBe(6);
    expect(displayWidth('ロック:商品')).toBe(11);
    expect(pad('ロック', 8)).toBe('ロック  ');
    expect(pad('7', 3, 'right')).toBe('  7');
  });

  it.each([
    [0.25, '250 µs'],
    [12.34, '12.3 ms'],
    [402.6, '403 ms'],
    [5402.6, '5.4 s'],
    [16_300, '16.3 s'],
    [300_000, '5 min'],
  ])('formatMs(%d) = %s', (ms, text) => {
    expect(formatMs(ms)).toBe(text);
  });
});
