import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Chromium to drive: REWINDABLE_CHROMIUM, else Debian's package (which .ci/run installs). */
export const chromiumPath = [process.env.REWINDABLE_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((candidate) => candidate !== undefined && candidate !== '' && fs.existsSync(candidate));

export const noChromiumReason = 'no Chromium found: install the chromium package, or set REWINDABLE_CHROMIUM to its executable';

export function launchChromium(): Promise<Browser> {
  if (chromiumPath === undefined) throw new Error(noChromiumReason);
  // --no-sandbox: CI runs as root in a container, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox'] });
}
