import { describe, expect, it } from 'vitest';
import { compileTemplates, patternOf, resolvePattern, MAX_PATTERN_LENGTH } from '../../src/keys/pattern.js';

describe('patternOf', () => {
  it.each([
    ['order:lock:product:123', 'order:lock:product:{id}'],
    ['order:lock:product-123', 'order:lock:product-{id}'],
    ['order:lock:product_123', 'order:lock:product_{id}'],
    ['order:lock:product:1', 'order:lock:product:{id}'],
    ['lock:user:42:cart:7', 'lock:user:{id}:cart:{id}'],
    ['lock/tenant/9/invoice/2024', 'lock/tenant/{id}/invoice/{id}'],
    ['cart:7f1c0e2a-5b7e-4c1e-9d55-0c6b1f5e2a11', 'cart:{uuid}'],
    ['cart:7F1C0E2A-5B7E-4C1E-9D55-0C6B1F5E2A11:lock', 'cart:{uuid}:lock'],
    ['session:5f2b9c3e8a1d4f6b9c0e', 'session:{hex}'],
    ['doc:507f1f77bcf86cd799439011', 'doc:{hex}'],
    ['lock:user42', 'lock:user{id}'],
    ['lock:v2:shard1', 'lock:v2:shard1'],
    ['lock:sku:AB12CD34', 'lock:sku:{id}'],
    ['lock:job:a8f3k29x', 'lock:job:{id}'],
    ['mail:lock:global', 'mail:lock:global'],
    ['deadbeefdeadbeef', 'deadbeefdeadbeef'],
    // A hash tag's braces are doubled: literal text, never a placeholder.
    ['lock:{user:123}:profile', 'lock:{{user:{id}}}:profile'],
    ['ロック:商品:123', 'ロック:商品:{id}'],
    ['注文ロック:商品42', '注文ロック:商品{id}'],
    ['lock:ürün:٣٤٥', 'lock:ürün:{id}'],
    ['', ''],
    ['::', '::'],
    ['<img src=x onerror=alert(1)>:99', '<img src=x onerror=alert({id})>:{id}'],
    ['lock:\u0000:\n:7', 'lock:\u0000:\n:{id}'],
  ])('%j → %j', (key, pattern) => {
    expect(patternOf(key)).toBe(pattern);
  });

  it('keeps the same pattern for every id of one kind of key', () => {
    const patterns = new Set(Array.from({ length: 1000 }, (_, i) => patternOf(`order:lock:product:${i * 7919}`)));
    expect([...patterns]).toEqual(['order:lock:product:{id}']);
  });

  it('caps the length of a pattern from a hostile key', () => {
    const pattern = patternOf('x'.repeat(100_000));
    expect(pattern.length).toBe(MAX_PATTERN_LENGTH);
    expect(pattern.endsWith('…')).toBe(true);
  });
});

describe('templates', () => {
  const templates = compileTemplates(['order:lock:product:{productId}', 'mail:lock:{kind}:{userId}']);

  it('a matching template wins over the heuristics', () => {
    expect(resolvePattern('order:lock:product:abc-DEF', templates)).toBe('order:lock:product:{productId}');
    expect(resolvePattern('mail:lock:welcome:alice', templates)).toBe('mail:lock:{kind}:{userId}');
  });

  it('an explicit pattern wins over templates', () => {
    expect(resolvePattern('order:lock:product:1', templates, 'orders')).toBe('orders');
  });

  it('falls back to the heuristics when no template matches', () => {
    expect(resolvePattern('stock:lock:9', templates)).toBe('stock:lock:{id}');
  });

  it('treats regex characters in templates literally', () => {
    const [t] = compileTemplates(['a.b*:{id}']);
    expect(t!.matches('a.b*:1')).toBe(true);
    expect(t!.matches('axbb:1')).toBe(false);
  });

  it('rejects a template without a placeholder', () => {
    expect(() => compileTemplates(['order:lock'])).toThrow(/placeholder/);
  });
});
