import fs from 'node:fs';
import path from 'node:path';
import { CheckpointManager } from '../lib/library.js';
import type { Row, ScenarioReport } from '../lib/results.js';
import type { Scenario } from '../lib/scenario.js';
import { ShadowGit } from '../lib/shadow-git.js';
import { measureInProcess } from '../lib/timing.js';
import { removeTree } from '../lib/workspace.js';
import { writeTenKilobyteFiles } from './rewind-files.js';

/** A typical small agent edit: two lines changed, one inserted, one removed. */
function smallEdits(text: string): string {
  const lines = text.split('\n');
  const at = (fraction: number) => Math.max(1, Math.floor(lines.length * fraction));
  lines[at(0.2)] = `${lines[at(0.2)]} // reviewed`;
  lines[at(0.5)] = '  // TODO: handle the empty case first';
  lines.splice(at(0.7), 0, '  const retries = 3;');
  lines.splice(at(0.9), 1);
  return lines.join('\n');
}

/**
 * The dry run's exact statistics (files, lines added and
 * removed) over 1,000 modified files, against `git diff --numstat` of the
 * same change. Both read every file and diff it against the stored version.
 */
export const dryRunStatistics: Scenario = {
  id: 'dry-run',
  summary: 'rewindFiles(id, { dryRun: true }) over 1,000 modified files vs git diff --numstat',
  async run(context) {
    const fileCount = context.quick ? 200 : 1000;
    const samples = context.quick ? 5 : 15;
    const directory = context.workspace.directory('dry-run');
    const root = path.join(directory, 'project');
    const files = writeTenKilobyteFiles(root, fileCount);
    const manager = await CheckpointManager.open({ cwd: root, storeDir: path.join(directory, 'store') });
    try {
      const before = await manager.checkpoint();
      for (const relative of files) await manager.trackEdit(relative);
      const git = ShadowGit.init(path.join(directory, 'shadow.git'), root);
      git.checkpoint('before');
      for (const relative of files) {
        const absolute = path.join(root, relative);
        const bytes = Buffer.from(smallEdits(fs.readFileSync(absolute, 'utf8')));
        fs.writeFileSync(absolute, bytes);
        await manager.recordWrite(absolute, { tool: 'Edit', content: bytes });
      }
      // Both must report the same change.
      const preview = await manager.rewindFiles(before, { dryRun: true });
      const numstat = git
        .run(['diff', '--numstat'])
        .trim()
        .split('\n')
        .map((line) => line.split('\t').map(Number));
      const gitAdded = numstat.reduce((sum, [added]) => sum + added!, 0);
      const gitRemoved = numstat.reduce((sum, [, removed]) => sum + removed!, 0);
      // A rewind undoes the change: what git counts as added, the rewind deletes.
      if (preview.filesChanged?.length !== fileCount || numstat.length !== fileCount || preview.deletions !== gitAdded || preview.insertions !== gitRemoved) {
        throw new Error(
          `dry run and git disagree: ${preview.filesChanged?.length} files +${preview.insertions} -${preview.deletions}, git ${numstat.length} files +${gitAdded} -${gitRemoved}`,
        );
      }
      context.log('dry-run: rewindable');
      const rewindable = await measureInProcess({ samples, prepare: () => undefined, run: () => manager.rewindFiles(before, { dryRun: true }) });
      context.log('dry-run: git');
      const baseline = await measureInProcess({ samples, prepare: () => undefined, run: () => git.run(['diff', '--numstat']) });
      const rows: Row[] = [
        {
          label: `${fileCount.toLocaleString('en-US')} modified files (+${gitAdded} -${gitRemoved} lines)`,
          rewindable: { name: 'rewindFiles(id, { dryRun: true })', value: rewindable.medianMs, unit: 'ms', samples: rewindable.samples },
          baseline: { name: 'git diff --numstat', value: baseline.medianMs, unit: 'ms', samples: baseline.samples },
          target: { kind: 'ratio-at-most', value: 2 },
        },
      ];
      const report: ScenarioReport = {
        id: 'dry-run',
        title: `Dry-run statistics over ${fileCount.toLocaleString('en-US')} modified files`,
        method: [
          `${fileCount.toLocaleString('en-US')} tracked source-like files of 10 KiB, each then edited through a tool-like write (two lines changed, one inserted, one removed).`,
          'Timed: `rewindFiles(first checkpoint, { dryRun: true })` (reads every file and its backup, exact line statistics per file) against `git diff --numstat` in the shadow repository (the same tree, committed before the edits). ' +
            'The run checks first that both report the same files and line counts.',
          `mitata, ${samples} samples each after one warm-up; nothing changes between samples.`,
        ],
        rows,
      };
      return [report];
    } finally {
      await manager.close();
      removeTree(directory);
    }
  },
};
