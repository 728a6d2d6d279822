import { describe, expect, it } from 'vitest';
import { displayWidth, escapeHtml, pad, printable, truncate } from '../src/text.js';

describe('untrusted and human-facing text', () => {
  it('shows control characters as escapes', () => {
    expect(printable('a\nb\u0000c\u001b[31m')).toBe('a\\u{a}b\\u{0}c\\u{1b}[31m');
  });

  it('escapes HTML, quotes included', () => {
    expect(escapeHtml(`<img src=x onerror="alert('1')">&`)).toBe('&#60;img src=x onerror=&#34;alert(&#39;1&#39;)&#34;&#62;&#38;');
  });

  it('measures terminal columns: wide characters take two', () => {
    expect(displayWidth('lock:7')).toBe(6);
    expect(displayWidth('ロック:商品')).toBe(11);
    expect(pad('ロック', 8)).toBe('ロック  ');
    expect(pad('7', 3, 'right')).toBe('  7');
  });

  it('truncates by code point, never splitting an emoji', () => {
    expect(truncate('order:lock', 20)).toBe('order:lock');
    expect(truncate('abcdef', 4)).toBe('abc…');
    // Four emoji are eight UTF-16 units but four code points: they fit a limit of 4.
    expect(truncate('🔒🔒🔒🔒', 4)).toBe('🔒🔒🔒🔒');
    const cut = truncate('🔒'.repeat(10), 4);
    expect(cut).toBe('🔒🔒🔒…');
    expect(hasLoneSurrogate(cut)).toBe(false);
    // Control case: cutting by UTF-16 units at the same place leaves half a surrogate pair.
    expect(hasLoneSurrogate('🔒'.repeat(10).slice(0, 3))).toBe(true);
  });
});

function hasLoneSurrogate(text: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text);
}

describe('display spoofing', () => {
  it('shows bidi controls, invisible characters and stacks of combining marks as escapes', () => {
    expect(printable('lock:\u202Egnp.exe:\u202Dx')).toBe('lock:\\u{202e}gnp.exe:\\u{202d}x');
    expect(printable('order:\u200Block\u2060:1\uFEFF')).toBe('order:\\u{200b}lock\\u{2060}:1\\u{feff}');
    // Two marks stay (é̃ is real text); the third and beyond are shown as escapes.
    expect(printable('e\u0301\u0303')).toBe('e\u0301\u0303');
    expect(printable('e\u0301\u0303\u0304\u0305')).toBe('e\u0301\u0303\\u{304}\\u{305}');
    // Ordinary text of any script is untouched.
    expect(printable('ロック:商品:1')).toBe('ロック:商品:1');
  });
});
