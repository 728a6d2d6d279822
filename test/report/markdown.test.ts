import { describe, expect, it } from 'vitest';
import { markdownCode } from '../../src/report/markdown.js';

describe('Markdown', () => {
  it('makes code spans that survive pipes and backticks', () => {
    expect(markdownCode('a|b')).toBe('`a\\|b`');
    expect(markdownCode('x`y')).toBe('``x`y``');
    expect(markdownCode('`edge`')).toBe('`` `edge` ``');
  });
});
