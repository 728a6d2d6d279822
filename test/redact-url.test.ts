import { describe, expect, it } from 'vitest';
import { redactUrl } from '../src/redact-url.js';

/** One redaction for every URL a message shows: Redis URLs and the Prometheus API's alike. */
describe('redactUrl', () => {
  it.each([
    // Redis URLs
    ['redis://ops:hunter2@127.0.0.1:6379/0', 'redis://ops:***@127.0.0.1:6379/0'],
    ['rediss://:hunter2@cache.internal:6380', 'rediss://:***@cache.internal:6380'],
    ['redis://hunter2@127.0.0.1', 'redis://***@127.0.0.1'],
    ['redis://ops:hun/ter#2@127.0.0.1:6379', 'redis://ops:***@127.0.0.1:6379'],
    ['redis://ops:p@ss@127.0.0.1:6379', 'redis://ops:***@127.0.0.1:6379'],
    ['redis://127.0.0.1:6379/0?password=hunter2&db=1', 'redis://127.0.0.1:6379/0?password=***&db=1'],
    ['redis://127.0.0.1:6379?db=1&PASSWORD=hunter2', 'redis://127.0.0.1:6379?db=1&PASSWORD=***'],
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
    // The Prometheus API's URLs
    ['http://user:secret@prom:9090/prometheus', 'http://user:***@prom:9090/prometheus'],
    ['https://tok3n@mimir.example/prometheus', 'https://***@mimir.example/prometheus'],
    ['https://u:p/a#ss@host/x', 'https://u:***@host/x'],
    ['http://prom:9090/?access_token=abc&x=1', 'http://prom:9090/?access_token=***&x=1'],
    ['http://prom:9090', 'http://prom:9090'],
    // What one of the two former functions showed (the Redis one: the query's parameter, `tok3n`; the
    // Prometheus one: `p/a?ss`), hidden now whichever kind of URL carries it.
    ['redis://127.0.0.1:6379?access_token=abc', 'redis://127.0.0.1:6379?access_token=***'],
    ['redis://tok3n@h:6379/0?x=a@b', 'redis://***@b'],
    ['http://u:p/a?ss@prom:9090/api', 'http://u:***@prom:9090/api'],
    // The price: an `@` in a path or query hides more than it must, never less.
    ['http://prom:9090/api?q=a@b', 'http://prom:***@b'],
  ])('%s → %s', (url, shown) => expect(redactUrl(url)).toBe(shown));
});
