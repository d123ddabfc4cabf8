import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type BuiltCli } from '../cli/helpers/built-cli.js';
import { promptedSession, type PromptedSession } from '../mcp/helpers/prompted-session.js';
import { buildCliWithPage, startUi, type RunningUi } from './helpers/built-timeline.js';
import { chromiumPath, launchChromium, noChromiumReason } from './helpers/chromium.js';

let cli: BuiltCli;
let browser: Browser;
beforeAll(async () => {
  cli = await buildCliWithPage();
  if (chromiumPath !== undefined) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  cli?.remove();
});

/** The built `rewindable ui` on a session, and a page of headless Chromium on it that records every request it makes. */
async function open(session: PromptedSession): Promise<{ ui: RunningUi; page: Page; requests: string[] }> {
  const ui = await startUi(cli, ['--cwd', session.project.root, '--store', session.project.store]);
  const page = await browser.newPage();
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  await page.goto(ui.url);
  return { ui, page, requests };
}

describe('rewindable ui: arguments', () => {
  it('refuses a port that is no port number, and --json, as usage errors (exit 2)', async () => {
    const session = await promptedSession();

    const port = await runCli(cli, ['ui', '--cwd', session.project.root, '--port', '80x']);
    const json = await runCli(cli, ['ui', '--json', '--cwd', session.project.root]);

    expect(port.code).toBe(2);
    expect(port.stderr).toContain('--port takes a port number from 0 to 65535, not "80x".');
    expect(json.code).toBe(2);
    expect(json.stdout).toBe('');
  });

  it('prints its address, serves the page from the built package, and exits 0 on SIGINT', async () => {
    const session = await promptedSession();
    const ui = await startUi(cli, ['--cwd', session.project.root, '--store', session.project.store]);

    const page = await fetch(ui.url);
    const script = await fetch(new URL('timeline-page.js', ui.url));

    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script type="module" src="timeline-page.js">');
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(await ui.stop()).toBe(0);
  });

  // The stand-in opener is xdg-open, the opener on Linux, and reads modes with GNU stat.
  it.skipIf(process.platform !== 'linux')('--open hands the opener a private redirect file, never the address with its token, and removes it on exit', async () => {
    const session = await promptedSession();
    // A stand-in for xdg-open that records what it was given, as any process on the machine could read it.
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-opener-'));
    const record = path.join(bin, 'record');
    const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-tmp-'));
    fs.writeFileSync(
      path.join(bin, 'xdg-open'),
      `#!/bin/sh\nstat -c %a "$1" > "${record}.mode"\nstat -c %a "$(dirname "$1")" > "${record}.dirmode"\ncat "$1" > "${record}.html"\nprintf '%s' "$*" > "${record}"\n`,
      { mode: 0o755 },
    );
    try {
      const ui = await startUi(cli, ['--cwd', session.project.root, '--store', session.project.store, '--open'], { PATH: `${bin}:${process.env.PATH ?? ''}`, TMPDIR: temp });
      await expect.poll(() => fs.existsSync(record), { timeout: 10_000 }).toBe(true);
      const argument = fs.readFileSync(record, 'utf8');
      const token = new URL(ui.url).pathname.split('/')[1]!;

      expect(argument).not.toContain(token);
      expect(path.dirname(path.dirname(argument))).toBe(fs.realpathSync(temp));
      expect(fs.readFileSync(`${record}.mode`, 'utf8').trim()).toBe('600');
      expect(fs.readFileSync(`${record}.dirmode`, 'utf8').trim()).toBe('700');
      expect(fs.readFileSync(`${record}.html`, 'utf8')).toContain(`<meta http-equiv="refresh" content="0;url=${ui.url}">`);
      expect(await ui.stop()).toBe(0);
      expect(fs.existsSync(argument)).toBe(false);
      expect(fs.readdirSync(temp)).toEqual([]);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
      fs.rmSync(temp, { recursive: true, force: true });
    }
  });
});

describe.skipIf(chromiumPath === undefined)(`rewindable ui in headless Chromium${chromiumPath === undefined ? ` (skipped: ${noChromiumReason})` : ''}`, () => {
  it('finds a checkpoint, shows a diff, rewinds after confirmation and undoes, byte for byte on disk', async () => {
    const session = await promptedSession();
    const { ui, page, requests } = await open(session);
    try {
      // Sessions list → the session's timeline.
      await page.getByRole('link', { name: 'Add a farewell function' }).click();
      await expect.poll(() => page.locator('ol.timeline > li').count()).toBe(2);
      expect(await page.locator('ol.timeline > li').first().textContent()).toContain('This turn touched 2 files: src/farewell.ts, src/greet.ts');

      // The first checkpoint's preview, reached from the keyboard.
      await page.locator('ol.timeline > li').first().getByRole('link', { name: 'Add a farewell function' }).focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('p.summary').textContent()).toBe(`A rewind to message ${session.first} would change 4 files (+4 −2):`);

      // A file's diff, unified then side by side, with the changed word marked.
      await page.getByRole('link', { name: 'src/greet.ts' }).click();
      await expect.poll(() => page.locator('table.diff.unified del').allTextContents()).toEqual(['!']);
      expect(await page.locator('table.diff.unified tr.added td.code').textContent()).toBe('  return `Hello, ${name}`;');
      await page.getByRole('button', { name: 'Side by side' }).click();
      expect(await page.locator('table.diff.split tr.change td.code.removed').textContent()).toBe('  return `Hello, ${name}!`;');
      await page.goBack();

      // Escape cancels the confirmation and changes nothing.
      await page.getByRole('button', { name: 'Rewind…' }).click();
      const dialog = page.getByRole('dialog');
      await expect.poll(() => dialog.isVisible()).toBe(true);
      expect(await dialog.textContent()).toContain('Rewind 4 files (+4 −2)?');
      await page.keyboard.press('Escape');
      await expect.poll(() => dialog.isVisible()).toBe(false);
      expect(session.project.snapshot()).toEqual(session.atEnd);

      // Enter on the focused Rewind button rewinds; the report is the CLI's.
      await page.getByRole('button', { name: 'Rewind…' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(true);
      await page.keyboard.press('Enter');
      const report = page.locator('pre.report').first();
      await expect.poll(() => report.textContent()).toContain(`Files rewound to state at message ${session.first}`);
      expect(await report.textContent()).toContain('The rewind changed 4 files (+4 -2):');
      expect(session.project.snapshot()).toEqual(session.atFirst);

      // Undo puts every byte (and mode) back.
      await page.getByRole('button', { name: 'Undo this rewind' }).click();
      await expect.poll(() => page.locator('pre.report').nth(1).textContent()).toContain('Files rewound to state at undo point');
      expect(session.project.snapshot()).toEqual(session.atEnd);

      // Everything the page loaded came from the server itself.
      const origin = new URL(ui.url).origin;
      expect(requests.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
    } finally {
      await page.close();
      expect(await ui.stop()).toBe(0);
    }
  });

  it('asks again with the new plan when the agent writes after the preview, and rewinds only what was confirmed', async () => {
    const session = await promptedSession();
    const { ui, page } = await open(session);
    /** The agent, working on in its own process's place: it opens the session, writes a file, and closes it. */
    const agentWrites = async (file: string) => {
      const agent = await session.project.open({ session: { resume: session.sessionId } });
      await agent.tools.write({ file_path: file, content: `${file}, written after the preview was drawn\n` });
      await agent.close();
    };
    try {
      await page.goto(`${ui.url}#/s/${session.sessionId}/c/${session.second}`);
      await expect.poll(() => page.locator('p.summary').textContent()).toBe(`A rewind to message ${session.second} would change 2 files (+3 −0):`);

      // Written after the preview was drawn: the dialog repeats the plan as it is now, above the new preview.
      await agentWrites('later.txt');
      await page.getByRole('button', { name: 'Rewind…' }).click();
      const dialog = page.getByRole('dialog');
      await expect.poll(() => dialog.isVisible()).toBe(true);
      expect(await dialog.textContent()).toContain('Rewind 3 files (+3 −1)?');
      expect(await page.getByRole('alert').textContent()).toContain('The files changed since the preview you saw');
      expect(await page.locator('table.files').textContent()).toContain('later.txt');

      // Written while the dialog is open: the confirmed plan is refused, nothing changes, and the page asks again.
      await agentWrites('later-still.txt');
      const beforeConfirm = session.project.snapshot();
      await page.keyboard.press('Enter');
      await expect.poll(async () => (await dialog.isVisible()) && (await dialog.textContent())).toContain('Rewind 4 files (+3 −2)?');
      expect(session.project.snapshot()).toEqual(beforeConfirm);
      expect(await page.locator('table.files').textContent()).toContain('later-still.txt');

      // Confirmed with the plan the dialog shows: that rewind runs.
      await page.keyboard.press('Enter');
      const report = page.locator('pre.report').first();
      await expect.poll(() => report.textContent()).toContain(`Files rewound to state at message ${session.second}`);
      expect(await report.textContent()).toContain('The rewind changed 4 files (+3 -2):');
      expect(session.project.snapshot()).toEqual(session.atSecond);
    } finally {
      await page.close();
      expect(await ui.stop()).toBe(0);
    }
  });

  it('follows the system colour scheme: light and dark', async () => {
    const session = await promptedSession();
    const { ui, page } = await open(session);
    try {
      await page.getByRole('link', { name: 'Add a farewell function' }).waitFor();
      const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      await page.emulateMedia({ colorScheme: 'light' });
      expect(await background()).toBe('rgb(255, 255, 255)');
      await page.emulateMedia({ colorScheme: 'dark' });
      expect(await background()).toBe('rgb(13, 17, 23)');
    } finally {
      await page.close();
      await ui.stop();
    }
  });
});
