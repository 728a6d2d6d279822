import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { LATE_BULLMQ, recordLeases } from '../helpers/lease-data.js';
import { tempDir } from '../helpers/temp.js';

/** A lease's section of the HTML report, in a real browser: its formula, its facts and its two charts. */

const ARTIFACTS = join(import.meta.dirname, '../artifacts');
const dir = tempDir();
let browser: Browser;
let reportUrl: string;

beforeAll(async () => {
  const db = await recordLeases(dir, 'bull', LATE_BULLMQ);
  const out = join(dir, 'out');
  const { code } = await runCli(['report', '--db', db, '--out', out, '--format', 'html'], Date.UTC(2026, 11, 2));
  expect(code).toBe(0);
  reportUrl = pathToFileURL(join(out, 'ttl-report.html')).href;
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

describe("a lease's section of the HTML report", () => {
  it('shows the lease formula, the renewal facts and the lateness and margin charts, with no error', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    await page.goto(reportUrl, { waitUntil: 'load' });
    const section = page.locator('section#p-0');
    await expect(section.locator('.formula').innerText()).resolves.toMatch(/A lease \(renewed while held\), advised from renewal lateness: lease = max\(3 s, 2 × q99\.9 lateness 510 ms \/ \(1 − 0\.5\)\) = 3 s/);
    const facts = await section.locator('dl').innerText();
    expect(facts).toMatch(/renewals\s+1,200 in 400 lease\(s\)/);
    expect(facts).toMatch(/least margin\s+0 µs; 10 lease\(s\) under 200 ms, 2 ran out/);
    // Hold distribution, hourly holds, renewal lateness, least margin per hour.
    await expect(section.locator('figure.chart svg').count()).resolves.toBe(4);
    const titles = await section.locator('figure.chart svg').evaluateAll((svgs) => svgs.map((svg) => svg.textContent ?? ''));
    expect(titles[2]).toMatch(/Renewal lateness \(gap − the holders’ period\)/);
    expect(titles[2]).toMatch(/lost past 500 ms \(the 1 s lease in use\)/);
    expect(titles[2]).toMatch(/lost past 1\.5 s \(recommended 3 s\)/);
    expect(titles[3]).toMatch(/Least margin left at a renewal, per hour/);
    expect(errors).toEqual([]);
    mkdirSync(ARTIFACTS, { recursive: true });
    await section.screenshot({ path: join(ARTIFACTS, 'lease-section.png') });
    await page.close();
  });
});
