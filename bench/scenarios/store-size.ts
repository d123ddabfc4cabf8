import fs from 'node:fs';
import path from 'node:path';
import { CheckpointManager } from '../lib/library.js';
import type { Row, ScenarioReport } from '../lib/results.js';
import type { Scenario } from '../lib/scenario.js';
import { ShadowGit } from '../lib/shadow-git.js';
import { sourceFile } from '../lib/source-text.js';
import { copyTree, removeTree, treeBytes } from '../lib/workspace.js';

const fileBytes = 100 * 1000;
const versions = 50;

/**
 * The bytes each store holds after 50 versions of a 100 KB
 * text file, each a one-line edit of the one before, one version per turn.
 */
export const storeSize: Scenario = {
  id: 'store-size',
  summary: 'store bytes for 50 versions of a 100 KB text file (one-line edits) vs the shadow repository',
  async run(context) {
    const directory = context.workspace.directory('store-size');
    const root = path.join(directory, 'rewindable');
    const file = path.join(root, 'src', 'large-module.ts');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, sourceFile(50, fileBytes).slice(0, fileBytes));
    const gitRoot = path.join(directory, 'git');
    copyTree(root, gitRoot);
    const gitFile = path.join(gitRoot, 'src', 'large-module.ts');
    const storeDirectory = path.join(directory, 'store');
    const manager = await CheckpointManager.open({ cwd: root, storeDir: storeDirectory });
    const git = ShadowGit.init(path.join(directory, 'shadow.git'), gitRoot);
    try {
      // Lines that occur once, so each Edit's old_string is unique; a different one every turn.
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      const counts = new Map<string, number>();
      for (const line of lines) counts.set(line, (counts.get(line) ?? 0) + 1);
      const unique = lines.filter((line) => line.length > 20 && counts.get(line) === 1);
      for (let turn = 0; turn < versions; turn++) {
        await manager.checkpoint();
        git.checkpoint(`turn ${turn}`);
        if (turn === versions - 1) break; // the last checkpoint stores the 50th version
        const line = unique[(turn * 7) % unique.length]!;
        await manager.tools.edit({ file_path: file, old_string: line, new_string: `${line} // turn ${turn}` });
        fs.writeFileSync(gitFile, fs.readFileSync(file));
      }
      if (!fs.readFileSync(file).equals(fs.readFileSync(gitFile))) throw new Error('the two projects diverged');
      const stored = await manager.listCheckpoints();
      if (stored.length !== versions) throw new Error(`expected ${versions} checkpoints, found ${stored.length}`);
      await manager.close();
      const rewindable = treeBytes(storeDirectory);
      const repository = git.size();
      git.run(['gc', '-q']);
      const packed = git.size();
      const storeFigure = { name: 'rewindable store (log + pack), all files', value: rewindable.bytes, unit: 'bytes' as const };
      const rows: Row[] = [
        {
          label: `${versions} versions of a ${fileBytes / 1000} KB file`,
          rewindable: storeFigure,
          baseline: { name: `shadow git loose objects (${repository.looseObjects})`, value: repository.looseObjectBytes, unit: 'bytes' },
          target: { kind: 'ratio-at-most', value: 1.0 },
        },
        {
          label: `${versions} versions of a ${fileBytes / 1000} KB file`,
          rewindable: storeFigure,
          baseline: { name: 'shadow git: all of .git', value: repository.gitBytes, unit: 'bytes' },
        },
        {
          label: `${versions} versions of a ${fileBytes / 1000} KB file`,
          rewindable: storeFigure,
          baseline: { name: 'shadow git: all of .git after git gc', value: packed.gitBytes, unit: 'bytes' },
          note: 'git packs with deltas',
        },
        {
          label: 'disk blocks allocated',
          rewindable: { name: 'rewindable store', value: rewindable.diskBytes, unit: 'bytes' },
          baseline: { name: 'shadow git: all of .git (before gc)', value: repository.gitDiskBytes, unit: 'bytes' },
        },
      ];
      const report: ScenarioReport = {
        id: 'store-size',
        title: `Store size for ${versions} versions of a ${fileBytes / 1000} KB file`,
        method: [
          `One source-like text file of ${fileBytes / 1000} KB. Each of ${versions - 1} turns takes a checkpoint, then replaces one line through the Edit tool; a last checkpoint records the ${versions}th version. ` +
            'The shadow repository commits the same contents at the same points (`add -A` + `commit`).',
          'Sizes are apparent bytes (the sum of file sizes) of every file in the rewindable store directory (session log, pack, lock), against the loose objects git wrote (the target), all of `.git`, and `.git` after `git gc` (context). ' +
            'Disk blocks allocated are shown too: every loose object takes at least one block.',
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
