import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

// Never a browser downloaded at test time: CHROMIUM_PATH when set (Debian's
// /usr/bin/chromium, say), else the Chromium that ships inside the npm package
// @sparticuz/chromium (a devDependency: `npm ci` brings it from the registry).
// Its binary is unpacked to the temp folder on first use. It needs a few
// system libraries (NSS, NSPR, expat); where they are missing, the package's
// own copies (Amazon Linux 2023 builds) are unpacked and used for the browser alone.

// As the probe starts Chromium here: no background traffic, which this machine's closed network refuses anyway.
const QUIET = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'];

export async function launchChromium(): Promise<Browser> {
  const explicit = process.env.CHROMIUM_PATH;
  if (explicit) return chromium.launch({ executablePath: explicit, args: QUIET });

  const { default: packaged, inflate } = await import('@sparticuz/chromium');
  const executablePath = await packaged.executablePath();
  let env: Record<string, string> | undefined;
  if (missingLibraries(executablePath)) {
    const bin = join(dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium')), '..', 'bin');
    const lib = join(await inflate(join(bin, 'al2023.tar.br')), 'lib');
    env = { ...(process.env as Record<string, string>), LD_LIBRARY_PATH: lib };
  }
  const args = [...QUIET, '--font-render-hinting=none', '--headless=shell'];
  return chromium.launch({ executablePath, args, ...(env && { env }) });
}

function missingLibraries(executable: string): boolean {
  if (!existsSync(executable)) return true;
  try {
    return /not found/.test(execFileSync('ldd', [executable], { encoding: 'utf8' }));
  } catch {
    return false;
  }
}
