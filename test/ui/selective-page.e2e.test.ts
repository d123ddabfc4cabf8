import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltCli } from '../cli/helpers/built-cli.js';
import { buildCliWithPage, startUi, type RunningUi } from './helpers/built-timeline.js';
import { chromiumPath, launchChromium, noChromiumReason } from './helpers/chromium.js';
import { configBefore, notesAfter, notesBefore, twoTurnSession, type TwoTurnSession } from './helpers/two-turn-session.js';

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

async function open(session: TwoTurnSession): Promise<{ ui: RunningUi; page: Page }> {
  const ui = await startUi(cli, ['--cwd', session.project.root, '--store', session.project.store]);
  const page = await browser.newPage();
  await page.goto(`${ui.url}#/s/${session.sessionId}`);
  return { ui, page };
}

const text = (session: TwoTurnSession, relative: string) => session.project.read(relative).toString('utf8');

/** Checks or unchecks a box from the keyboard: focus, then Space, as a user without a mouse does. */
async function toggleByKeyboard(page: Page, name: string | RegExp, index = 0): Promise<void> {
  await page.getByRole('checkbox', { name }).nth(index).focus();
  await page.keyboard.press('Space');
}

describe.skipIf(chromiumPath === undefined)(`rewindable ui, selective modes, in headless Chromium${chromiumPath === undefined ? ` (skipped: ${noChromiumReason})` : ''}`, () => {
  it('rewinds one file, then one hunk, then reverts one turn keeping a later edit, undoing each, byte for byte on disk', async () => {
    const session = await twoTurnSession();
    const { ui, page } = await open(session);
    const dialog = page.getByRole('dialog');
    try {
      // The preview of turn one: four files, each chosen.
      await page.goto(`${ui.url}#/s/${session.sessionId}/c/${session.first}`);
      await expect.poll(() => page.locator('p.summary').textContent()).toBe(`A rewind to message ${session.first} would change 4 files (+6 −6):`);
      expect(await page.locator('p.selection').textContent()).toContain('Selected: all 4 files.');
      expect(await page.getByRole('button', { name: 'Rewind selected…' }).isDisabled()).toBe(true);

      // One file of the two the turn changed, chosen from the keyboard.
      for (const name of ['Include b.txt', 'Include config.ts', 'Include notes.txt']) await toggleByKeyboard(page, name);
      expect(await page.locator('p.selection').textContent()).toBe('Selected: 1 of 4 files.');
      await page.getByRole('button', { name: 'Rewind selected…' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(true);
      expect(await dialog.textContent()).toContain('Rewind 1 file (+1 −1)?');
      await page.keyboard.press('Enter');
      const report = page.locator('pre.report').first();
      await expect.poll(() => report.textContent()).toContain(`Files rewound to state at message ${session.first}`);
      expect(await report.textContent()).toContain('The rewind changed 1 file (+1 -1):');
      expect(text(session, 'a.txt')).toBe('alpha\n');
      expect(text(session, 'b.txt')).toBe('beta, changed\n');
      expect(text(session, 'notes.txt')).toBe(notesAfter);

      await page.getByRole('button', { name: 'Undo this rewind' }).click();
      await expect.poll(() => page.locator('pre.report').nth(1).textContent()).toContain('Files rewound to state at undo point');
      expect(session.project.snapshot()).toEqual(session.atEnd);

      // One hunk of notes.txt: its diff has a box per hunk; the second is left out.
      await page.goto(`${ui.url}#/s/${session.sessionId}/c/${session.first}`);
      await page.getByRole('link', { name: 'notes.txt' }).click();
      await expect.poll(() => page.getByRole('checkbox', { name: /Rewind this hunk/ }).count()).toBe(2);
      await toggleByKeyboard(page, /Rewind this hunk/, 1);
      expect(await page.getByRole('checkbox', { name: /Rewind this hunk/ }).nth(1).isChecked()).toBe(false);
      await page.getByRole('link', { name: '← Back to the preview' }).click();
      await expect.poll(() => page.locator('p.selection').textContent()).toBe('Selected: 4 of 4 files; 1 of 2 hunks of notes.txt.');
      for (const name of ['Include a.txt', 'Include b.txt', 'Include config.ts']) await toggleByKeyboard(page, name);
      await page.getByRole('button', { name: 'Rewind selected…' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(true);
      expect(await dialog.textContent()).toContain('Rewind 1 file (+1 −1)?');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('pre.report').first().textContent()).toContain(`1 hunk rewound to state at message ${session.first}`);
      expect(text(session, 'notes.txt')).toBe(notesAfter.replace('line one\n', 'line 1\n'));
      expect(text(session, 'a.txt')).toBe('alpha, changed\n');

      await page.getByRole('button', { name: 'Undo this rewind' }).click();
      await expect.poll(() => page.locator('pre.report').nth(1).textContent()).toContain('Files rewound to state at undo point');
      expect(session.project.snapshot()).toEqual(session.atEnd);

      // Revert turn one from the timeline: turn two's edit of config.ts stays.
      await page.goto(`${ui.url}#/s/${session.sessionId}`);
      await page.locator('ol.timeline > li.message').first().getByRole('link', { name: 'Revert this turn…' }).click();
      await expect.poll(() => page.locator('pre.report').first().textContent()).toContain('config.ts  merged');
      expect(await page.getByRole('radio', { name: /skip/ }).isChecked()).toBe(true);
      await page.getByRole('button', { name: 'Revert…' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(true);
      expect(await dialog.getByRole('heading').textContent()).toBe('Revert?');
      expect(await dialog.textContent()).toContain('Revert 4 files (+5 −5)?');
      await page.keyboard.press('Enter');
      const reverted = page.locator('section.result pre.report').first();
      await expect.poll(() => reverted.textContent()).toContain(`Reverted the file changes of the turn of message ${session.first}`);
      expect(text(session, 'config.ts')).toBe(configBefore.replace('"localhost"', '"0.0.0.0"'));
      expect(text(session, 'notes.txt')).toBe(notesBefore);
      expect(text(session, 'a.txt')).toBe('alpha\n');
      expect(text(session, 'b.txt')).toBe('beta\n');

      await page.getByRole('button', { name: 'Undo this revert' }).click();
      await expect.poll(() => page.locator('section.result pre.report').nth(1).textContent()).toContain('Files rewound to state at undo point');
      expect(session.project.snapshot()).toEqual(session.atEnd);
    } finally {
      await page.close();
      expect(await ui.stop()).toBe(0);
    }
  });

  it('asks again when the files change after the preview, then rewinds only the files still selected', async () => {
    const session = await twoTurnSession();
    const { ui, page } = await open(session);
    const dialog = page.getByRole('dialog');
    try {
      await page.goto(`${ui.url}#/s/${session.sessionId}/c/${session.first}`);
      await expect.poll(() => page.locator('p.selection').textContent()).toContain('Selected: all 4 files.');
      for (const name of ['Include b.txt', 'Include notes.txt']) await toggleByKeyboard(page, name);
      // The agent rewrites a.txt after the preview was drawn: one line for one line, the counts stay the same.
      const agent = await session.project.open({ session: { resume: session.sessionId } });
      await agent.tools.write({ file_path: 'a.txt', content: 'alpha, rewritten\n' });
      await agent.close();

      await page.getByRole('button', { name: 'Rewind selected…' }).click();
      await expect.poll(() => dialog.isVisible()).toBe(true);
      expect(await page.getByRole('alert').textContent()).toContain('The files changed since the preview you saw');
      expect(await page.locator('p.selection').textContent()).toBe('Selected: 2 of 4 files.');
      expect(await dialog.textContent()).toContain('Rewind 2 files (+3 −3)?');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('pre.report').first().textContent()).toContain('The rewind changed 2 files (+3 -3):');
      expect(text(session, 'a.txt')).toBe('alpha\n');
      expect(text(session, 'config.ts')).toBe(configBefore);
      expect(text(session, 'b.txt')).toBe('beta, changed\n');
      expect(text(session, 'notes.txt')).toBe(notesAfter);
    } finally {
      await page.close();
      expect(await ui.stop()).toBe(0);
    }
  });

  it('shows where a revert conflicts, and offers the conflict choices the API names', async () => {
    const session = await twoTurnSession();
    // After the session: the port line turn one changed is changed again, so reverting turn one overlaps it.
    session.project.write('config.ts', configBefore.replace('port = 80', 'port = 9090').replace('"localhost"', '"0.0.0.0"'));
    const edited = session.project.snapshot();
    const { ui, page } = await open(session);
    try {
      await page.goto(`${ui.url}#/s/${session.sessionId}/c/${session.first}/revert`);
      await expect.poll(() => page.locator('pre.report').first().textContent()).toContain('config.ts was left alone: conflict at line 1 with later edits.');
      expect(await page.getByRole('radio').evaluateAll((radios) => radios.map((radio) => (radio as HTMLInputElement).value))).toEqual(['skip', 'markers', 'overwrite']);

      await page.getByRole('radio', { name: /markers/ }).focus();
      await page.keyboard.press('Space');
      await expect.poll(() => page.locator('pre.report').first().textContent()).toContain('conflict at line 1 (with conflict markers)');
      expect(await page.getByRole('radio', { name: /markers/ }).evaluate((radio) => radio === document.activeElement)).toBe(true);
      expect(session.project.snapshot()).toEqual(edited);
    } finally {
      await page.close();
      expect(await ui.stop()).toBe(0);
    }
  });
});
