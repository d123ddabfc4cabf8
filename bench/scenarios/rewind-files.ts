import fs from 'node:fs';
import path from 'node:path';
import { CheckpointManager } from '../lib/library.js';
import { generatedPath } from '../lib/generated-project.js';
import type { Row, ScenarioReport } from '../lib/results.js';
import type { Scenario } from '../lib/scenario.js';
import { ShadowGit } from '../lib/shadow-git.js';
import { sourceFile } from '../lib/source-text.js';
import { measureSideBySide, untyped, type InProcessBenchmark } from '../lib/timing.js';
import { copyTree, removeTree } from '../lib/workspace.js';

const fileBytes = 10 * 1024;

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
 * Issue 9, item 3: a real rewind of 1,000 changed files of 10 KB against
 * `git checkout <rev> -- .` in a shadow repository. Each contender has its
 * own copy of the project; before every sample (untimed) all 1,000 files get
 * new content, as a turn that rewrote them would leave them.
 */
export const rewindFiles: Scenario = {
  id: 'rewind',
  summary: 'rewindFiles() of 1,000 changed 10 KB files vs git checkout <rev> -- . in a shadow repository',
  async run(context) {
    const fileCount = context.quick ? 200 : 1000;
    const samples = context.quick ? 3 : 8;
    const blocks = context.quick ? 1 : 4;
    const directory = context.workspace.directory('rewind');
    const master = path.join(directory, 'master');
    context.log(`rewind: writing ${fileCount} files of 10 KB`);
    const files = writeTenKilobyteFiles(master, fileCount);
    const managers: CheckpointManager[] = [];
    let version = 0;
    /** New content for every file, written in place; a tool would then report what it wrote. */
    const rewriteAll = async (root: string, manager?: CheckpointManager) => {
      version += 1;
      for (const relative of files) {
        const absolute = path.join(root, relative);
        const text = fs.readFileSync(absolute, 'utf8');
        const bytes = Buffer.from(`// Rewritten, version ${version}.${text.slice(text.indexOf('\n'))}`);
        fs.writeFileSync(absolute, bytes);
        await manager?.recordWrite(absolute, { tool: 'Write', content: bytes });
      }
    };
    try {
      const benchmarks = {} as Record<'none' | 'full' | 'git', InProcessBenchmark<unknown>>;
      for (const durability of ['none', 'full'] as const) {
        const root = path.join(directory, `rewindable-${durability}`);
        copyTree(master, root);
        const manager = await CheckpointManager.open({ cwd: root, storeDir: path.join(directory, `store-${durability}`), durability });
        managers.push(manager);
        const before = await manager.checkpoint();
        for (const relative of files) await manager.trackEdit(relative);
        benchmarks[durability] = untyped({
          samples,
          prepare: async () => {
            await rewriteAll(root, manager);
            await manager.checkpoint(); // the next user message (the one asking to rewind)
          },
          run: async () => {
            const result = await manager.rewindFiles(before);
            if (result.filesChanged?.length !== fileCount) throw new Error(`rewind changed ${result.filesChanged?.length} files, expected ${fileCount}`);
          },
        });
      }
      const gitRoot = path.join(directory, 'git');
      copyTree(master, gitRoot);
      const git = ShadowGit.init(path.join(directory, 'shadow.git'), gitRoot);
      const before = git.checkpoint('before');
      benchmarks.git = untyped({
        samples,
        prepare: async () => {
          await rewriteAll(gitRoot);
          git.checkpoint(`version ${version}`);
        },
        run: () => git.run(['checkout', before, '--', '.']),
      });
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
        source: 'issue 9, item 3',
        method: [
          `Each contender has its own copy of a project of ${fileCount.toLocaleString('en-US')} source-like files of ${fileBytes / 1024} KiB. ` +
            'Before every sample (untimed) every file gets new content, then the next checkpoint is taken (rewindable: `checkpoint()`; git: `add -A` + `commit`), as when the user asks to undo a turn that rewrote them.',
          'Timed: rewindable `rewindFiles(first checkpoint)` — which also backs up the current content of every file as its undo point, writes every file atomically (temporary file + rename) and logs the rewind — ' +
            'against `git checkout <first commit> -- .` in the shadow repository (each file unlinked and written again, not atomically; nothing saved first).',
          `Git does not fsync work-tree files, so the target compares rewindable with durability 'none'; 'full' (fsync of every restored file and directory) is shown for context. ` +
            `mitata, ${samples} samples of each contender taken side by side in ${blocks} blocks (the first contender rotating), each block after one warm-up, so that a burst of load or of disk writeback falls on all three alike.`,
        ],
        rows,
      };
      return [report];
    } finally {
      for (const manager of managers) await manager.close();
      removeTree(directory);
    }
  },
};
