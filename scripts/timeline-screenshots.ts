/**
 * Takes the screenshots of the timeline page in docs/images from a real
 * session: it records two agent sessions in a temp project (the second with
 * three turns and a rewind), serves them with startTimelineServer, and
 * photographs the page in headless Chromium (REWINDABLE_CHROMIUM, else
 * /usr/bin/chromium).
 *
 *   npx tsx scripts/timeline-screenshots.ts
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CheckpointManager, startTimelineServer } from '../src/index.js';

const imagesDirectory = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/images');
const executablePath = process.env.REWINDABLE_CHROMIUM || '/usr/bin/chromium';

const todos = (field: string, extra: string[] = []) =>
  [
    "import { randomUUID } from 'node:crypto';",
    ...extra,
    '',
    'export interface Todo {',
    '  id: string;',
    '  title: string;',
    `  ${field}: boolean;`,
    '}',
    '',
    'const todos = new Map<string, Todo>();',
    '',
    'export function addTodo(title: string): Todo {',
    ...(extra.length > 0 ? ['  validateTitle(title);'] : []),
    `  const todo = { id: randomUUID(), title, ${field}: false };`,
    '  todos.set(todo.id, todo);',
    '  return todo;',
    '}',
    '',
    'export function completeTodo(id: string): Todo | undefined {',
    '  const todo = todos.get(id);',
    `  if (todo) todo.${field} = true;`,
    '  return todo;',
    '}',
    '',
  ].join('\n');

async function recordSessions(project: string, store: string): Promise<void> {
  const write = (file: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    fs.writeFileSync(path.join(project, file), content);
  };
  write('src/todos.ts', todos('done'));
  write('README.md', '# todos\n\nA tiny todo API. Each todo has a `done` flag.\n');
  write('package.json', '{ "name": "todos", "type": "module" }\n');

  const earlier = await CheckpointManager.open({ cwd: project, storeDir: store, durability: 'none' });
  await earlier.recordUserMessage('Add a package.json script to run the tests');
  await earlier.trackEdit('package.json');
  write('package.json', '{ "name": "todos", "type": "module", "scripts": { "test": "vitest run" } }\n');
  await earlier.close();
  await new Promise((resolve) => setTimeout(resolve, 1100));

  const manager = await CheckpointManager.open({ cwd: project, storeDir: store, durability: 'none' });
  await manager.recordUserMessage('Validate todo titles: no empty titles, at most 200 characters');
  await manager.trackEdit('src/todos.ts');
  write('src/todos.ts', todos('done', ["import { validateTitle } from './validate.js';"]));
  await manager.trackEdit('src/validate.ts');
  write(
    'src/validate.ts',
    "export function validateTitle(title: string): void {\n  if (title.trim() === '') throw new Error('A todo needs a title.');\n  if (title.length > 200) throw new Error('A title has at most 200 characters.');\n}\n",
  );
  await manager.recordUserMessage('Write tests for the validation');
  await manager.trackEdit('test/validate.test.ts');
  write(
    'test/validate.test.ts',
    "import { expect, it } from 'vitest';\nimport { validateTitle } from '../src/validate.js';\n\nit('refuses an empty title', () => {\n  expect(() => validateTitle('  ')).toThrow('needs a title');\n});\n",
  );
  const third = await manager.recordUserMessage('Rename done to completed everywhere');
  await manager.trackEdit('src/todos.ts');
  write('src/todos.ts', todos('completed', ["import { validateTitle } from './validate.js';"]));
  await manager.trackEdit('README.md');
  write('README.md', '# todos\n\nA tiny todo API. Each todo has a `completed` flag.\n');
  // The user did not like the rename: the timeline shows the rewind's undo point.
  await manager.rewindFiles(third.uuid);
  await manager.close();
}

async function main(): Promise<void> {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rewindable-screens-')));
  const project = path.join(base, 'todos');
  const store = path.join(base, 'store');
  fs.mkdirSync(project);
  const server = await (async () => {
    await recordSessions(project, store);
    return startTimelineServer({ cwd: project, storeDir: store });
  })();
  const browser = await chromium.launch({ executablePath, args: ['--no-sandbox'] });
  try {
    fs.mkdirSync(imagesDirectory, { recursive: true });
    const page = await browser.newPage({ viewport: { width: 1100, height: 720 }, colorScheme: 'light' });
    const shot = (name: string) => page.screenshot({ path: path.join(imagesDirectory, name) });

    await page.goto(server.url);
    await page.getByRole('link', { name: 'Validate todo titles' }).waitFor();
    await shot('timeline-sessions.png');

    await page.getByRole('link', { name: 'Validate todo titles' }).click();
    await page.locator('ol.timeline > li').nth(3).waitFor();
    await shot('timeline-session.png');

    // The undo point's diff: the rename a rewind to it would bring back, changed words marked.
    await page.locator('ol.timeline > li').nth(3).getByRole('link').click();
    await page.getByRole('link', { name: 'src/todos.ts' }).click();
    await page.getByRole('button', { name: 'Side by side' }).click();
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.locator('table.diff.split').waitFor();
    await shot('timeline-diff.png');

    // Reverting the first turn alone: its dry run, as `rewindable revert --dry-run` prints it, and the conflict choice.
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goBack();
    await page.goBack();
    await page.locator('ol.timeline > li').first().getByRole('link', { name: 'Revert this turn…' }).click();
    await page.locator('pre.report').waitFor();
    await shot('timeline-revert.png');
    console.log(`Wrote timeline-sessions.png, timeline-session.png, timeline-diff.png and timeline-revert.png in ${imagesDirectory}`);
  } finally {
    await browser.close();
    await server.close();
    fs.rmSync(base, { recursive: true, force: true });
  }
}

await main();
