import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { ConsoleMessage, Page } from 'playwright-core';
import { expect } from 'vitest';
import { DEFAULT_PASSWORD } from './auth.ts';
import { startAdminSystem, type AdminSystem } from './admin-system.ts';
import type { StartSystemOptions, System } from './system.ts';
import { launchChromium, type LaunchedChromium } from './chromium.ts';
import { repoRoot } from './processes.ts';

/** Where the browser tests leave their screenshots (git-ignored; the README shows copies from docs/console/). */
export const SCREENSHOTS = path.join(repoRoot, 'tests', 'console', 'screenshots');

export interface ConsoleBrowser {
  readonly admin: AdminSystem;
  readonly chromium: LaunchedChromium;
  readonly page: Page;
  /** An address of the console on the admin api (`/users` → `http://127.0.0.1:port/console/users`). */
  url(consolePath: string): string;
  /** Errors the page wrote to the browser console, and scripts that failed: a test ends expecting none. */
  readonly browserErrors: string[];
  screenshot(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The real system with a root admin, and Chromium signed in to the console as that admin through the
 * sign-in page, as an operator would. `start` starts another system than startSystem's (the mailer too:
 * startMailSystem).
 */
export async function startConsoleBrowser(start?: (options: StartSystemOptions) => Promise<System>): Promise<ConsoleBrowser> {
  const admin = await startAdminSystem({}, start);
  let chromium: LaunchedChromium | undefined;
  try {
    chromium = await launchChromium();
    const page = await chromium.context.newPage();
    const browserErrors: string[] = [];
    page.on('console', (message: ConsoleMessage) => {
      // A refused call is the browser's own "Failed to load resource" line: the tests that provoke one say so.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) browserErrors.push(message.text());
    });
    page.on('pageerror', (error) => browserErrors.push(error.message));
    const url = (consolePath: string) => `${admin.adminUrl}/console${consolePath.startsWith('/') ? consolePath : `/${consolePath}`}`;
    await page.goto(url('/'));
    await page.waitForURL(/\/console\/sign-in/);
    await page.getByLabel('Email or username').fill(admin.rootEmail);
    await page.getByLabel('Password').fill(DEFAULT_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('navigation', { name: 'Console' })
      .waitFor({ timeout: 20_000 })
      .catch(async (error: unknown) => {
        // What the operator would have seen instead, and what the browser said.
        const shown = await page.locator('body').innerText().catch(() => '(no page)');
        throw new Error(`the console did not open after sign-in: ${String(error)}\npage: ${shown}\nbrowser: ${browserErrors.join(' | ')}`);
      });
    mkdirSync(SCREENSHOTS, { recursive: true });
    const launched = chromium;
    return {
      admin,
      chromium: launched,
      page,
      url,
      browserErrors,
      screenshot: async (name) => {
        await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
      },
      stop: async () => {
        await launched.close();
        await admin.stop();
      },
    };
  } catch (error) {
    await chromium?.close();
    await admin.stop();
    throw error;
  }
}

/** The page shows no error the browser logged (uncaught exceptions, React's warnings). */
export function expectNoBrowserErrors(browser: ConsoleBrowser): void {
  expect(browser.browserErrors).toEqual([]);
}
