import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { describe } from 'vitest';

/** Debian's Chromium, driven by playwright-core (the browser is the distribution's, not a download). */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A describe that needs Chromium: skipped with a notice where it is not installed, a failure under CI. */
export function describeWithChromium(name: string, fn: () => void): void {
  if (existsSync(CHROMIUM)) {
    describe(name, fn);
    return;
  }
  if (process.env.CI === 'true') throw new Error(`${CHROMIUM} is missing; .ci/run installs Debian's chromium`);
  console.warn(`[skip] ${name}: ${CHROMIUM} not installed (apt-get install chromium)`);
  describe.skip(name, fn);
}

export interface LaunchedChromium {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh headless profile of its own (no cookies from another test), removed on close. */
export async function launchChromium(): Promise<LaunchedChromium> {
  const userDataDir = mkdtempSync(path.join(tmpdir(), 'portcullis-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
  return {
    context,
    close: async () => {
      await context.close().catch(() => {});
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
