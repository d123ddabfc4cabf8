import fs from 'node:fs';
import path from 'node:path';
import { CheckpointManager } from '../lib/library.js';
import { generatedPath } from '../lib/generated-project.js';
import type { Row, ScenarioReport } from '../lib/results.js';
import type { Scenario } from '../lib/scenario.js';
import { ShadowGit } from '../lib/shadow-git.js';
import { sourceFile } from '../lib/source-text.js';
import { measureSideBySide, untyped, type InProcessBenchmark } from '../lib/timing.js';
import { removeTree, settleDisk } from '../lib/workspace.js';

const fileBytes = 10 * 1024;
const durabilities = ['none', 'full'] as const;
type Durability = (typeof durabilities)[number];

/** Writes `count` source-like files of exactly `fileBytes` bytes; returns their relative paths. */
export function writeTenKilobyteFiles(root: string, count: number): string[] {
  const files = Array.from({ length: count }, (_, index) => generatedPath(index));
  for (const [index, relative] of files.entries()) {
    const absolute = path.join(root, relative);
    fs.mkdirSync(path.dirname(absolute), { recursive: true });
    fs.writeFileSync(absolute, sourceFile(index + 1, fileBytes).slice(0, fileBytes));
  }
  return files;
}

/**
 * A real rewind of 1,000 changed files of 10 KB against
 * `git checkout <rev> -- .` in a shadow repository. All contenders work on
 * one project in turn (the method below says why); before every sample
 * (untimed) all 1,000 files get new content, as a turn that rewrote them
 * would leave them, and every contender checkpoints it.
 */
export const rewindFiles: Scenario = {
  id: 'rewind',
  summary: 'rewindFiles() of 1,000 changed 10 KB files vs git checkout <rev> -- . in a shadow repository',
  async run(context) {
    const fileCount = context.quick ? 200 : 1000;
    const samples = context.quick ? 3 : 8;
    const blocks = context.quick ? 1 : 4;
    const directory = context.workspace.directory('rewind');
    const root = path.join(directory, 'project');
    context.log(`rewind: writing ${fileCount} files of 10 KB`);
    const files = writeTenKilobyteFiles(root, fileCount);
    const managers = {} as Record<Durability, CheckpointManager>;
    const before = {} as Record<Durability, string>;
    try {
      for (const durability of durabilities) {
        const manager = await CheckpointManager.open({ cwd: root, storeDir: path.join(directory, `store-${durability}`), durability });
        managers[durability] = manager;
        before[durability] = await manager.checkpoint();
        for (const relative of files) await manager.trackEdit(relative);
      }
      const git = ShadowGit.init(path.join(directory, 'shadow.git'), root);
      const gitBefore = git.checkpoint('before');
      let version = 0;
      /**
       * New content for every file, written in place as a tool would write it and reported to both sessions,
       * then the next user message's checkpoint in each session and in git; then the disk is settled, so that
       * no sample pays for writing out another's pages.
       */
      const rewriteAll = async () => {
        version += 1;
        for (const relative of files) {
          const absolute = path.join(root, relative);
          const text = fs.readFileSync(absolute, 'utf8');
          const bytes = Buffer.from(`// Rewritten, version ${version}.${text.slice(text.indexOf('\n'))}`);
          fs.writeFileSync(absolute, bytes);
          for (const durability of durabilities) await managers[durability].recordWrite(absolute, { tool: 'Write', content: bytes });
        }
        for (const durability of durabilities) await managers[durability].checkpoint();
        git.checkpoint(`version ${version}`);
        await settleDisk();
      };
      const benchmarks = {} as Record<Durability | 'git', InProcessBenchmark<unknown>>;
      for (const durability of durabilities) {
        benchmarks[durability] = untyped({
          samples,
          prepare: rewriteAll,
          run: async () => {
            const result = await managers[durability].rewindFiles(before[durability]);
            if (result.filesChanged?.length !== fileCount) throw new Error(`rewind changed ${result.filesChanged?.length} files, expected ${fileCount}`);
          },
        });
      }
      benchmarks.git = untyped({ samples, prepare: rewriteAll, run: () => git.run(['checkout', gitBefore, '--', '.']) });
      context.log(`rewind: rewindable ('none', 'full') and shadow git side by side, ${samples} samples each in ${blocks} blocks`);
      const timings = await measureSideBySide(benchmarks, blocks);
      const gitFigure = { name: 'git checkout <rev> -- .', value: timings.git.medianMs, unit: 'ms' as const, samples: timings.git.samples };
      const rows: Row[] = [
        {
          label: `${fileCount.toLocaleString('en-US')} files, no fsync on either side`,
          rewindable: { name: "rewindFiles(), durability 'none'", value: timings.none.medianMs, unit: 'ms', samples: timings.none.samples },
          baseline: gitFigure,
          target: { kind: 'ratio-at-most', value: 1.0 },
        },
        {
          label: `${fileCount.toLocaleString('en-US')} files, rewindable fsyncs every file`,
          rewindable: { name: "rewindFiles(), durability 'full'", value: timings.full.medianMs, unit: 'ms', samples: timings.full.samples },
          baseline: gitFigure,
          note: 'git never fsyncs the work tree',
        },
      ];
      const report: ScenarioReport = {
        id: 'rewind',
        title: `Rewind of ${fileCount.toLocaleString('en-US')} files of 10 KB`,
        method: [
          `One project of ${fileCount.toLocaleString('en-US')} source-like files of ${fileBytes / 1024} KiB, which every contender works on in turn: two rewindable sessions (durability 'none' and 'full') and a shadow git repository. ` +
            'Before every sample (untimed) every file gets new content, written in place and reported as a tool write to both sessions, then each session takes the next checkpoint and git commits (`add -A` + `commit`), as when the user asks to undo a turn that rewrote them; then `sync`, so that no sample pays for writing out the pages of another.',
          'One project for all, not a copy each: on this machine\'s ext4 (no journal) creating a file costs more the more inodes were freed lately near its directory\'s, so the same unlink-and-create loop over three identical copies took 38, 79 and 232 ms (medians of eight rounds, alternating). Contenders on copies of their own measured where their copy happened to lie as much as themselves (runs measured 0.67–2.28× that way).',
          'Timed: rewindable `rewindFiles(first checkpoint)` — which also backs up the current content of every file as its undo point, writes every file atomically (temporary file + rename) and logs the rewind — ' +
            'against `git checkout <first commit> -- .` in the shadow repository (each file unlinked and written again, not atomically; nothing saved first).',
          `Git does not fsync work-tree files, so the target compares rewindable with durability 'none'; 'full' (fsync of every restored file and directory) is shown for context. ` +
            `mitata, ${samples} samples of each contender taken side by side in ${blocks} blocks (the first contender rotating), each block after one warm-up, so that a burst of load or of disk writeback falls on all three alike.`,
        ],
        rows,
      };
      return [report];
    } finally {
      for (const manager of Object.values(managers)) await manager.close();
      removeTree(directory);
    }
  },
};
