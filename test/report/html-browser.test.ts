import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { buildDb } from '../helpers/fixtures.js';
import { tempDir } from '../helpers/temp.js';

const ARTIFACTS = join(import.meta.dirname, '../artifacts');

const dir = tempDir();
let browser: Browser;
let reportUrl: string;

beforeAll(async () => {
  const db = buildDb(dir, 'demo.db');
  const out = join(dir, 'out');
  const { code } = await runCli(['report', '--db', db, '--out', out, '--format', 'html']);
  expect(code).toBe(0);
  reportUrl = pathToFileURL(join(out, 'ttl-report.html')).href;
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

describe('the HTML report in a real browser', () => {
  it('shows its charts, makes no request, logs no error, and shows the hostile key as text', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const requests: string[] = [];
    const consoleErrors: string[] = [];
    const dialogs: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => message.type() === 'error' && consoleErrors.push(message.text()));
    page.on('pageerror', (error) => consoleErrors.push(error.message));
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(reportUrl, { waitUntil: 'load' });

    // Nothing but the document itself: no scripts, fonts, images or data from anywhere.
    expect(requests).toEqual([reportUrl]);
    expect(consoleErrors).toEqual([]);

    // An overview, then a distribution and an hourly chart per pattern, each actually laid out.
    const patterns = await page.locator('table.summary tbody tr').count();
    expect(patterns).toBe(9);
    const charts = page.locator('figure.chart svg');
    expect(await charts.count()).toBe(1 + 2 * patterns);
    for (const box of await Promise.all((await charts.all()).map((c) => c.boundingBox()))) {
      expect(box!.width).toBeGreaterThan(300);
      expect(box!.height).toBeGreaterThan(100);
    }
    expect(await page.locator('figure.chart svg rect, figure.chart svg path').count()).toBeGreaterThan(100);

    // The worst verdict first.
    await expect(page.locator('table.summary tbody tr').first().textContent()).resolves.toMatch(/payment:lock:order:\{id\}.*expired/s);
    // The overview names each verdict in words (not colour alone), in type no smaller than 11 px.
    const overview = page.locator('figure.chart').first().locator('svg text');
    expect((await overview.allTextContents()).some((t) => /payment:lock:order:\{id\} · expired/.test(t))).toBe(true);
    type Window = { getComputedStyle(node: unknown): { fontSize: string } };
    const sizes = await overview.evaluateAll((nodes) => nodes.map((n) => Number.parseFloat((globalThis as unknown as Window).getComputedStyle(n).fontSize)));
    expect(Math.min(...sizes)).toBeGreaterThanOrEqual(11);
    // The first section states the trade in numbers, and the reader sees it.
    const risk = page.locator('section').first().locator('p.risk');
    await expect(risk.textContent()).resolves.toMatch(/At the TTL in use \(5 s\), [\d,]+ holds outlived it .* every other instance waits 5 s now, [\d.]+ s as recommended\./);
    expect(await risk.isVisible()).toBe(true);

    // The hostile key is text, not markup: no <img>, no handler ran.
    const hostile = '<img src=x onerror=alert({id})>:{id}';
    expect(await page.locator('table.summary').textContent()).toContain(hostile);
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    const csp = await page.locator('meta[http-equiv="Content-Security-Policy"]').getAttribute('content');
    expect(csp).toContain("default-src 'none'");

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'report.png'), fullPage: true });
    await page.close();
  });

  it('control: the same page without escaping would have run the hostile markup', async () => {
    // Shows the assertion above can fail: raw markup becomes an <img> element.
    const page = await browser.newPage();
    await page.setContent('<table><tr><td><img src=x onerror="void 0">:{id}</td></tr></table>');
    expect(await page.locator('img').count()).toBe(1);
    await page.close();
  });
});
