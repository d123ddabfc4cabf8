import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import type * as Source from '../../src/index.js';
import { generatedPath } from '../lib/generated-project.js';
import { CheckpointManager } from '../lib/library.js';
import type { Row, ScenarioReport } from '../lib/results.js';
import type { Scenario } from '../lib/scenario.js';
import { sourceFile } from '../lib/source-text.js';
import { summarize, type Timing } from '../lib/timing.js';
import { removeTree } from '../lib/workspace.js';

/** The package as built by `npm run bench`: the server reads the page from dist/ui, as an installed copy does. */
const built = new URL('../../.bench-work/dist/index.js', import.meta.url);
const chromiumPath = process.env.REWINDABLE_CHROMIUM || '/usr/bin/chromium';
const bigFile = 'src/generated/table.ts';

/**
 * The timeline page's first paint on a large session: 200 checkpoints and
 * 2,000 tracked files (each turn edits ten new files), plus one file of 5,000
 * lines that the first turn rewrote whole. Each sample opens a new page in
 * headless Chromium at the view's address and stops when the view is drawn.
 */
export const timelinePage: Scenario = {
  id: 'timeline-page',
  summary: 'rewindable ui in headless Chromium: a 200-checkpoint, 2,000-file timeline and a 5,000-line diff, to first paint',
  async run(context) {
    if (!fs.existsSync(built)) throw new Error(`${built.pathname} is missing: run the benchmarks with npm run bench, which builds the package first.`);
    if (!fs.existsSync(chromiumPath)) throw new Error(`No Chromium at ${chromiumPath}: install the chromium package, or set REWINDABLE_CHROMIUM.`);
    const { startTimelineServer } = (await import(built.href)) as typeof Source;
    const checkpoints = context.quick ? 20 : 200;
    const filesPerTurn = 10;
    const bigLines = context.quick ? 500 : 5000;
    const samples = context.quick ? 3 : 10;
    const directory = context.workspace.directory('timeline-page');
    const project = context.workspace.directory('timeline-page', 'project');
    const store = path.join(directory, 'store');
    let browser: Browser | undefined;
    try {
      context.log(`timeline-page: recording ${checkpoints} turns of ${filesPerTurn} files`);
      const { sessionId, first } = await recordSession(project, store, checkpoints, filesPerTurn, bigLines);
      const server = await startTimelineServer({ cwd: project, storeDir: store });
      browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
      try {
        const session = `#/s/${sessionId}`;
        const diff = `${session}/c/${first}/f/${encodeURIComponent(path.join(project, bigFile))}`;
        // Milliseconds from the navigation's start to the page's own mark: the frame that draws the view, or the diff's last row.
        const open = async (hash: string, drawn: string, mark: string) => {
          const page = await browser!.newPage();
          try {
            await page.goto(`${server.url}${hash}`);
            await page.locator(drawn).waitFor({ state: 'attached', timeout: 120_000 });
            await page.waitForFunction((name) => performance.getEntriesByName(name).length > 0, mark, { timeout: 120_000 });
            return await page.evaluate((name) => performance.getEntriesByName(name)[0]!.startTime, mark);
          } finally {
            await page.close();
          }
        };
        context.log(`timeline-page: ${samples} page loads of each view`);
        const views = {
          timeline: [session, `ol.timeline > li:nth-child(${checkpoints})`, 'rewindable:view-drawn'],
          diffShown: [diff, 'table.diff', 'rewindable:view-drawn'],
          diffComplete: [diff, 'table.diff[data-complete]', 'rewindable:diff-complete'],
        } as const;
        const timings = { timeline: [] as number[], diffShown: [] as number[], diffComplete: [] as number[] };
        // One warm-up of each (Chromium's first page, the server's first read of the page's files), then alternating.
        for (const [hash, drawn, mark] of Object.values(views)) await open(hash, drawn, mark);
        for (let sample = 0; sample < samples; sample += 1) {
          for (const [name, [hash, drawn, mark]] of Object.entries(views)) timings[name as keyof typeof views].push(await open(hash, drawn, mark));
        }
        const size = { checkpoints, files: checkpoints * filesPerTurn, bigLines, samples };
        return [report(summarize(timings.timeline), summarize(timings.diffShown), summarize(timings.diffComplete), size)];
      } finally {
        await server.close();
      }
    } finally {
      await browser?.close();
      removeTree(directory);
    }
  },
};

async function recordSession(project: string, store: string, checkpoints: number, filesPerTurn: number, bigLines: number): Promise<{ sessionId: string; first: string }> {
  const write = (relative: string, content: string) => {
    fs.mkdirSync(path.dirname(path.join(project, relative)), { recursive: true });
    fs.writeFileSync(path.join(project, relative), content);
  };
  const table = (version: string) => Array.from({ length: bigLines }, (_, line) => `export const row${line} = { id: ${line}, label: 'row ${line} ${version}' };\n`).join('');
  write(bigFile, table('before'));
  const manager = await CheckpointManager.open({ cwd: project, storeDir: store, durability: 'none' });
  let first = '';
  for (let turn = 0; turn < checkpoints; turn += 1) {
    const message = await manager.recordUserMessage(`Turn ${turn + 1}: edit modules ${turn * filesPerTurn} to ${turn * filesPerTurn + filesPerTurn - 1}`);
    if (turn === 0) {
      first = message.uuid;
      await manager.trackEdit(bigFile);
      write(bigFile, table('after'));
    }
    for (let index = turn * filesPerTurn; index < (turn + 1) * filesPerTurn; index += 1) {
      const relative = generatedPath(index);
      await manager.trackEdit(relative);
      write(relative, sourceFile(index, 2048));
    }
  }
  await manager.close();
  return { sessionId: manager.sessionId, first };
}

function report(timeline: Timing, diff: Timing, complete: Timing, size: { checkpoints: number; files: number; bigLines: number; samples: number }): ScenarioReport {
  const rows: Row[] = [
    {
      label: `timeline of ${size.checkpoints} checkpoints, ${size.files.toLocaleString('en-US')} tracked files`,
      rewindable: { name: 'navigation to the frame drawing the timeline', value: timeline.medianMs, unit: 'ms', samples: timeline.samples },
      note: `p25 ${timeline.p25Ms.toFixed(0)} ms, p75 ${timeline.p75Ms.toFixed(0)} ms`,
    },
    {
      label: `diff of a ${size.bigLines.toLocaleString('en-US')}-line file rewritten whole: first rows`,
      rewindable: { name: 'navigation to the frame drawing the diff (unified, word highlight)', value: diff.medianMs, unit: 'ms', samples: diff.samples },
      note: `p25 ${diff.p25Ms.toFixed(0)} ms, p75 ${diff.p75Ms.toFixed(0)} ms`,
    },
    {
      label: `diff of a ${size.bigLines.toLocaleString('en-US')}-line file rewritten whole: every row`,
      rewindable: { name: 'navigation to the last row in the table', value: complete.medianMs, unit: 'ms', samples: complete.samples },
      note: `p25 ${complete.p25Ms.toFixed(0)} ms, p75 ${complete.p75Ms.toFixed(0)} ms`,
    },
  ];
  return {
    id: 'timeline-page',
    title: 'Timeline page: first paint',
    method: [
      `A session recorded through the built package: ${size.checkpoints} user messages, each turn editing ten new files of 2 KB ` +
        `(${size.files.toLocaleString('en-US')} tracked files), and in the first turn a ${size.bigLines.toLocaleString('en-US')}-line file rewritten whole.`,
      'startTimelineServer from the package build serves it; headless Chromium (Debian chromium, driven by playwright-core) opens a new page at ' +
        "the view's address for each sample. Times are on the page's own clock, from the navigation's start to the animation frame that " +
        "draws the view (the timeline with all its checkpoints; the diff against the first checkpoint with its first 400 rows), and to " +
        "the diff's last row in the table (the page adds the rest 1,500 rows a task). They include the server's answers (opening the " +
        `session read-only, planning the diff). One warm-up load of each view, then ${size.samples} of each, alternating.`,
    ],
    rows,
  };
}
